"""Setting second factors up and removing them (from the profile, or by staff): each one
change of the account through the engine, then a notice to the account's address.

Only an account whose address is verified may set one up (:func:`may_set_up`): a second
factor protects an account, and an account protects only the address it has proved.
"""

from ...app_settings import app_settings
from ...tables import sign_in_methods_held
from .. import passkeys, recovery_codes, store, totp
from ..notices import authenticator_added, authenticator_removed

PENDING_TOTP_SESSION_KEY = "accounts_mfa_pending_totp"


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
    used meanwhile)."""
    secret = request.session.get(PENDING_TOTP_SESSION_KEY)
    step = totp.matching_step(secret, totp.normalize(code)) if secret else None
    if step is None:
        return None
    codes = [] if account.recovery_codes else recovery_codes.generate()
    store.enable_totp(account, secret, step, codes)
    del request.session[PENDING_TOTP_SESSION_KEY]
    authenticator_added(request, account, "totp")
    return codes


def deactivate_totp(request, account, by_staff=False):
    """Turn the authenticator app off (and the recovery codes, if no passkey is left)."""
    store.disable_totp(account)
    authenticator_removed(request, account, "totp", by_staff=by_staff)


def passkey_options(request, account):
    """The registration options of a new passkey of ``account``
    (:class:`~accounts.mfa.passkeys.CeremonyOptions`). Raises
    :class:`~accounts.mfa.store.TooManyPasskeys`."""
    if sign_in_methods_held(account) >= passkeys.MAX_PASSKEYS:
        raise store.TooManyPasskeys(f"An account has at most {passkeys.MAX_PASSKEYS} passkeys.")
    return passkeys.registration_options(
        request, passkeys.REGISTER, user_id=account.id, name=account.username, existing=account.passkeys or ()
    )


def add_passkey(request, account, name, credential_json):
    """Register the passkey the browser created, named ``name``. Raises
    :class:`~accounts.mfa.passkeys.PasskeyRefused`, :class:`~accounts.exceptions.UniqueViolation`
    (any account registered this credential already), :class:`~accounts.mfa.store.TooManyPasskeys`
    or :class:`~accounts.exceptions.StaleItem`."""
    challenge = passkeys.take_challenge(request, passkeys.REGISTER)
    credential = passkeys.verify_new_credential(request, credential_json, challenge)
    passkey = store.add_passkey(account, credential, name)
    authenticator_added(request, account, "passkey", name)
    return passkey


def remove_passkey(request, account, passkey, by_staff=False):
    """Remove ``passkey`` (a credential item of ``account``) and release its lock."""
    store.remove_passkey(account, passkey.credential_id)
    authenticator_removed(request, account, "passkey", passkey.name, by_staff=by_staff)


def regenerate_recovery_codes(request, account):
    """New recovery codes replace the old (which stop working); returns them, to show once.
    The account's address is told: whoever made them can log in with them."""
    codes = recovery_codes.generate()
    store.set_recovery_codes(account, codes)
    authenticator_added(request, account, "recovery_codes")
    return codes
