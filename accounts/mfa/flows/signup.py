"""Signing up with a passkey instead of a password (``ACCOUNTS_PASSKEY_SIGNUP``).

The first page takes the email address and the username (the signup form's rules, and its
one-time token); the second creates the passkey. Then ONE transaction creates the account
(with an unusable password), its locks (the credential id's among them) and the passkey's
credential item, exactly as a signup with a password does otherwise: verification by mail
as ``ACCOUNTS_EMAIL_VERIFICATION`` says (until then the account and its passkey expire).
"""

from django.contrib.auth.hashers import make_password

from ... import store as account_store
from ...transactions import owned_put
from .. import passkeys, store

PENDING_SESSION_KEY = "accounts_mfa_passkey_signup"


def start(request, email, username, token):
    """Remember the first page's values (checked by the signup form) for the second."""
    request.session[PENDING_SESSION_KEY] = {"email": email, "username": username, "token": token}


def pending(request):
    """The first page's values ``{"email", "username", "token"}``, or ``None``."""
    return request.session.get(PENDING_SESSION_KEY)


def options(request, *, in_session=False):
    """The registration options of the new account's passkey
    (:class:`~accounts.mfa.passkeys.CeremonyOptions`, its challenge in a signed cookie, or
    in the session with ``in_session``: the API's app client keeps no cookie): its user
    handle is the id the account will have (derived from the signup's token)."""
    data = pending(request)
    return passkeys.registration_options(
        request,
        passkeys.SIGNUP,
        user_id=account_store.account_id_for_token(data["token"]),
        # An account without a username (ACCOUNTS_SIGNUP_FIELDS) is named by its address.
        name=data["username"] or data["email"],
        in_session=in_session,
    )


def complete(request, credential_json, name):
    """Create the account with the passkey the browser created; returns ``(account,
    created)`` as :func:`accounts.store.signup`. Raises
    :class:`~accounts.mfa.passkeys.PasskeyRefused` and what the signup raises
    (:class:`~accounts.exceptions.UniqueViolation` names every field in use, the passkey's
    ``passkeys`` included).

    The challenge, read from its signed cookie, is used once because the account it creates
    is: its id derives from the signup's one-time token, so a second answer to the same
    challenge finds the account made (and its pending values gone from the session)."""
    data = pending(request)
    challenge = passkeys.take_challenge(request, passkeys.SIGNUP)
    credential = passkeys.verify_new_credential(request, credential_json, challenge)
    values = (data["email"], data["username"], make_password(None))
    ids = {credential.credential_id}
    # The account as the signup builds it, for its key and deadline (the same ones: its id
    # derives from the token), which its credential item shares.
    built = account_store.build_signup_account(*values, token=data["token"], passkeys=ids)
    passkey = store.new_passkey(built, credential, name)
    account, created = account_store.signup(*values, token=data["token"], passkeys=ids, also=[owned_put(passkey)])
    del request.session[PENDING_SESSION_KEY]
    return account, created
