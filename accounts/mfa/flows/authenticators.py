"""Setting second factors up and removing them (from the profile, or by staff): each one
change of the account through the engine, then a notice to the account's address.

Only an account whose address is verified may set one up (:func:`may_set_up`): a second
factor protects an account, and an account protects only the address it has proved.
"""

from django.contrib.auth.hashers import is_password_usable

from ... import idempotency, timeline
from ... import store as store_of_accounts
from ...app_settings import app_settings
from ...exceptions import StaleItem, TokenReused
from ...tables import sign_in_methods_held
from .. import passkeys, recovery_codes, shown_codes, store, totp
from ..notices import authenticator_added, authenticator_removed

PENDING_TOTP_SESSION_KEY = "accounts_mfa_pending_totp"


def _origin(request, by_staff=False):
    """Where the change's security event comes from: this request, and on a staff page the
    staff member acting."""
    return timeline.origin_of(request, actor=str(request.user.pk) if by_staff else None)


def may_set_up(account):
    """Whether ``account`` may add a second factor: its address is verified."""
    return account.email_verified is not False


def totp_setup(request, account):
    """What the set-up page shows: a new secret (kept in the session until a code confirms
    it), as text, as an ``otpauth://`` URI and as a QR code of that URI (inline SVG)."""
    secret = request.session.get(PENDING_TOTP_SESSION_KEY)
    if not secret:
        secret = request.session[PENDING_TOTP_SESSION_KEY] = totp.new_secret()
    issuer = _issuer()
    uri = totp.provisioning_uri(secret, account.email, issuer)
    return {"secret": secret, "uri": uri, "qr_code": totp.qr_code_svg(uri, issuer)}


def _issuer():
    """The site's name in authenticator apps: ``ACCOUNTS_MFA_ISSUER``, else the relying-party
    id (``None``, with neither: the app shows the account's address alone)."""
    rp = passkeys.configured_relying_party()
    return rp.name if rp is not None else app_settings.MFA_ISSUER


def activate_totp(request, account, code):
    """Turn the authenticator app on when ``code`` is a code of the pending secret (±1
    step). Returns ``None`` for a wrong code, else the new recovery codes to show once
    (generated with the first second factor; ``[]`` when the account had some).
    Raises :class:`~accounts.exceptions.StaleItem` (the account changed, or this code was
    used meanwhile). New codes stay readable to this session for a short while
    (:mod:`accounts.mfa.shown_codes`)."""
    secret = request.session.get(PENDING_TOTP_SESSION_KEY)
    step = totp.matching_step(secret, totp.normalize(code)) if secret else None
    if step is None:
        return None
    codes = [] if account.recovery_codes else recovery_codes.generate()
    store.enable_totp(account, secret, step, codes, origin=_origin(request))
    del request.session[PENDING_TOTP_SESSION_KEY]
    shown_codes.remember(request.session, account.id, codes)
    authenticator_added(request, account, "totp")
    return codes


def deactivate_totp(request, account, by_staff=False):
    """Turn the authenticator app off (and the recovery codes, if no passkey is left)."""
    store.disable_totp(account, origin=_origin(request, by_staff))
    authenticator_removed(request, account, "totp", by_staff=by_staff)


def passkey_options(request, account):
    """The registration options of a new passkey of ``account``
    (:class:`~accounts.mfa.passkeys.CeremonyOptions`). Raises
    :class:`~accounts.mfa.store.TooManyPasskeys`."""
    if sign_in_methods_held(account) >= passkeys.MAX_PASSKEYS:
        raise store.TooManyPasskeys(f"An account has at most {passkeys.MAX_PASSKEYS} passkeys.")
    return passkeys.registration_options(
        request, passkeys.REGISTER, user_id=account.id, name=account.display_name, existing=account.passkeys or ()
    )


def add_passkey(request, account, name, credential_json, *, idempotency_key=None):
    """Register the passkey the browser created, named ``name``. Raises
    :class:`~accounts.mfa.passkeys.PasskeyRefused`, :class:`~accounts.exceptions.UniqueViolation`
    (any account registered this credential already), :class:`~accounts.mfa.store.TooManyPasskeys`
    or :class:`~accounts.exceptions.StaleItem`.

    With ``idempotency_key`` (the API's ``Idempotency-Key``), a resend of a registration that
    was made returns the passkey it added (``None`` if it was removed since) and changes
    nothing: see :mod:`accounts.idempotency`."""
    change = idempotency.change_for("passkey_add", account.id, idempotency_key)
    added = change.recorded_outcome() if change is not None else None
    if added is not None:
        return _added(account, added)
    challenge = passkeys.take_challenge(request, passkeys.REGISTER)
    credential = passkeys.verify_new_credential(request, credential_json, challenge)
    if change is None:
        passkey = store.add_passkey(account, credential, name, origin=_origin(request))
    else:
        record = change.record_put(credential.credential_id)
        try:
            passkey = store.add_passkey(
                account, credential, name, token=change.token, also=[record], origin=_origin(request)
            )
        except (StaleItem, TokenReused):
            # Refused because the first request with this key added it meanwhile?
            added = change.recorded_outcome()
            if added is None:
                raise
            return _added(account, added)
    authenticator_added(request, account, "passkey", name)
    return passkey


def _added(account, credential_id):
    """The passkey of ``credential_id`` as the account is now (``None`` if it went since)."""
    current = store_of_accounts.get_account(account.id) or account
    return next((passkey for passkey in store.passkeys_of(current) if passkey.credential_id == credential_id), None)


def rename_passkey(request, account, passkey, name):
    """Give ``passkey`` of ``account`` the name ``name``. Raises
    :class:`~accounts.exceptions.StaleItem` (the account or the passkey changed meanwhile)."""
    return store.rename_passkey(account, passkey, name)


def remove_passkeys(request, account, removed):
    """Remove the passkeys ``removed`` (credential items of ``account``), one transaction
    each. Raises :class:`~accounts.mfa.store.LastWayIn` before removing any when they are
    the last ways into an account without a usable password (each removal's transaction is
    guarded by the account as read all the same)."""
    every_one = {passkey.credential_id for passkey in removed} >= set(account.passkeys or ())
    if every_one and not is_password_usable(account.password):
        raise store.LastWayIn("The account's last passkey is its only way in: set a password first.")
    for passkey in removed:
        remove_passkey(request, account, passkey)


def remove_passkey(request, account, passkey, by_staff=False):
    """Remove ``passkey`` (a credential item of ``account``) and release its lock."""
    store.remove_passkey(account, passkey.credential_id, origin=_origin(request, by_staff))
    authenticator_removed(request, account, "passkey", passkey.name, by_staff=by_staff)


def regenerate_recovery_codes(request, account):
    """New recovery codes replace the old (which stop working); returns them, to show (they
    stay readable to this session for a short while: :mod:`accounts.mfa.shown_codes`).
    The account's address is told: whoever made them can log in with them."""
    codes = recovery_codes.generate()
    store.set_recovery_codes(account, codes, origin=_origin(request))
    shown_codes.remember(request.session, account.id, codes)
    authenticator_added(request, account, "recovery_codes")
    return codes
