"""Passkeys and security keys (WebAuthn, through py_webauthn): the relying party, the
options of each ceremony, their challenge, and checking what the browser answers.

- The relying-party id and origin come from configuration only: ``ACCOUNTS_WEBAUTHN_RP_ID``
  and ``ACCOUNTS_WEBAUTHN_ORIGIN``, else the host and origin of ``ACCOUNTS_SITE_URL``; never
  from a request's ``Host`` (see :mod:`accounts.links`). Without them passkeys are
  unavailable (:data:`UNAVAILABLE`, system check ``accounts.mfa.W001``). Browsers refuse an
  IP address as relying-party id.
- A challenge is 32 random bytes kept in the session (server-side with
  :mod:`accounts.sessions`), for one purpose, for :data:`CHALLENGE_SECONDS`, and taken out
  of the session when it is checked: single-use. A sign-in also deletes the session that
  held it, in its guarded transaction.
- The signature counter and the backup flags are checked as WebAuthn says (§7.2 steps 21-22):
  a counter that does not grow (when either is non-zero) is refused as a possible clone,
  and a credential's backup eligibility must not change; its backup state is recorded.
"""

import ipaddress
import json
import secrets
import time
from dataclasses import dataclass
from urllib.parse import urlsplit

from django.utils.translation import gettext_lazy as _
from webauthn import (
    generate_authentication_options,
    generate_registration_options,
    options_to_json,
    verify_authentication_response,
    verify_registration_response,
)
from webauthn.helpers import base64url_to_bytes, bytes_to_base64url, parse_authentication_credential_json
from webauthn.helpers.exceptions import WebAuthnException
from webauthn.helpers.structs import (
    AuthenticatorSelectionCriteria,
    AuthenticatorTransport,
    PublicKeyCredentialDescriptor,
    ResidentKeyRequirement,
    UserVerificationRequirement,
)

from ..app_settings import app_settings
from ..links import site_url_problem
from ..tables import MAX_PASSKEYS  # noqa: F401  (how many an account may register: the engine's bound)

CHALLENGE_SESSION_KEY = "accounts_webauthn_challenge"
CHALLENGE_SECONDS = 300
CHALLENGE_BYTES = 32
# A credential id is at most 1,023 bytes (WebAuthn §4); its lock key must fit in 2,048.
MAX_CREDENTIAL_ID_BYTES = 1023
# Ceremonies, each with its own challenge.
LOGIN, SECOND_FACTOR, REAUTHENTICATE = "login", "second_factor", "reauthenticate"
REGISTER, SIGNUP = "register", "signup"
# A passkey that stands in for the password needs the device's screen lock (user
# verification); after the password, having it is the second factor.
USER_VERIFICATION = {
    LOGIN: UserVerificationRequirement.REQUIRED,
    REAUTHENTICATE: UserVerificationRequirement.REQUIRED,
    SECOND_FACTOR: UserVerificationRequirement.PREFERRED,
}


class PasskeyRefused(Exception):
    """What the browser sent is not a valid answer to our challenge; ``message`` says why,
    to the person."""

    def __init__(self, message, detail=""):
        self.message = message
        super().__init__(f"{message} {detail}".strip())


INVALID = _("The passkey could not be checked. Please try again.")
EXPIRED = _("The passkey request expired. Please try again.")
UNKNOWN = _("This passkey is not registered here, or its account cannot log in.")
UNAVAILABLE = _("Passkeys cannot be used on this site: its address is not configured.")


@dataclass(frozen=True)
class RelyingParty:
    """This site as passkeys know it."""

    id: str
    origins: tuple
    name: str


def configured_relying_party():
    """The relying party the settings name (see the module), or ``None`` when they name no
    id or no origin."""
    site = None if site_url_problem(app_settings.SITE_URL) else urlsplit(app_settings.SITE_URL)
    rp_id = app_settings.WEBAUTHN_RP_ID or (site.hostname if site else None)
    configured = app_settings.WEBAUTHN_ORIGIN
    if configured:
        origins = (configured,) if isinstance(configured, str) else tuple(configured)
    else:
        origins = (f"{site.scheme}://{site.netloc}",) if site else ()
    if not (rp_id and origins):
        return None
    return RelyingParty(rp_id, origins, app_settings.MFA_ISSUER or rp_id)


def is_ip_address(host: str) -> bool:
    """Whether ``host`` is an IPv4 or IPv6 address rather than a name."""
    try:
        ipaddress.ip_address(host)
    except ValueError:
        return False
    return True


def usable_relying_party() -> RelyingParty | None:
    """The relying party passkeys can use: the configured one, or ``None`` when the settings
    name none or an IP address (browsers refuse one: system check ``accounts.mfa.W002``)."""
    rp = configured_relying_party()
    return None if rp is None or is_ip_address(rp.id) else rp


def relying_party():
    """This site's relying party; raises :class:`PasskeyRefused` (:data:`UNAVAILABLE`) when
    passkeys have none they can use (:func:`usable_relying_party`)."""
    rp = usable_relying_party()
    if rp is None:
        raise PasskeyRefused(
            UNAVAILABLE,
            "no ACCOUNTS_SITE_URL, nor ACCOUNTS_WEBAUTHN_RP_ID and ACCOUNTS_WEBAUTHN_ORIGIN, or an IP address as id",
        )
    return rp


def _new_challenge(request, purpose):
    challenge = secrets.token_bytes(CHALLENGE_BYTES)
    request.session[CHALLENGE_SESSION_KEY] = {
        "challenge": bytes_to_base64url(challenge),
        "purpose": purpose,
        "expires": int(time.time()) + CHALLENGE_SECONDS,
    }
    return challenge


def take_challenge(request, purpose):
    """The challenge issued to this session for ``purpose``, taken out of the session (it
    cannot be used again); raises :class:`PasskeyRefused` when there is none, it was for
    another purpose, or it expired."""
    issued = request.session.pop(CHALLENGE_SESSION_KEY, None)
    if not issued or issued.get("purpose") != purpose:
        raise PasskeyRefused(EXPIRED, "no challenge for this purpose")
    if issued["expires"] < time.time():
        raise PasskeyRefused(EXPIRED, "the challenge expired")
    return base64url_to_bytes(issued["challenge"])


def _descriptors(credential_ids):
    return [PublicKeyCredentialDescriptor(id=base64url_to_bytes(credential)) for credential in sorted(credential_ids)]


def registration_options(request, purpose, *, user_id, name, existing=()):
    """The options of ``navigator.credentials.create()`` (JSON) for an account with id
    ``user_id`` (the user handle a discoverable passkey returns at login) and ``name``,
    excluding its ``existing`` credential ids; a new challenge is kept for ``purpose``."""
    rp = relying_party()
    options = generate_registration_options(
        rp_id=rp.id,
        rp_name=rp.name,
        user_id=user_id.encode(),
        user_name=name,
        challenge=_new_challenge(request, purpose),
        timeout=CHALLENGE_SECONDS * 1000,
        exclude_credentials=_descriptors(existing),
        # A passkey (discoverable: logs in without a name) when the authenticator can; a
        # security key that cannot still serves as a second factor.
        authenticator_selection=AuthenticatorSelectionCriteria(
            resident_key=ResidentKeyRequirement.PREFERRED,
            user_verification=UserVerificationRequirement.PREFERRED,
        ),
    )
    return options_to_json(options)


def authentication_options(request, purpose, *, allowed=()):
    """The options of ``navigator.credentials.get()`` (JSON): for the account's ``allowed``
    credential ids, or any discoverable passkey of this site when empty (a login without a
    name); a new challenge is kept for ``purpose``, whose user verification it asks for."""
    rp = relying_party()
    options = generate_authentication_options(
        rp_id=rp.id,
        challenge=_new_challenge(request, purpose),
        timeout=CHALLENGE_SECONDS * 1000,
        allow_credentials=_descriptors(allowed),
        user_verification=USER_VERIFICATION[purpose],
    )
    return options_to_json(options)


@dataclass(frozen=True)
class NewCredential:
    """A credential the browser created, checked: what its credential item stores."""

    credential_id: str
    public_key: bytes
    sign_count: int
    backup_eligible: bool
    backup_state: bool
    transports: list
    aaguid: str


def _loaded(credential_json):
    try:
        data = json.loads(credential_json)
    except (TypeError, ValueError) as error:
        raise PasskeyRefused(INVALID, "not JSON") from error
    if not isinstance(data, dict):
        raise PasskeyRefused(INVALID, "not a JSON object")
    return data


def verify_new_credential(request, credential_json, challenge):
    """Check the answer to ``navigator.credentials.create()``; returns a :class:`NewCredential`."""
    rp = relying_party()
    data = _loaded(credential_json)
    try:
        verified = verify_registration_response(
            credential=data, expected_challenge=challenge, expected_rp_id=rp.id, expected_origin=list(rp.origins)
        )
    except WebAuthnException as error:
        raise PasskeyRefused(INVALID, str(error)) from error
    if len(verified.credential_id) > MAX_CREDENTIAL_ID_BYTES:
        raise PasskeyRefused(INVALID, "credential id too long")
    transports = (data.get("response") or {}).get("transports") or []
    known = {transport.value for transport in AuthenticatorTransport}
    return NewCredential(
        credential_id=bytes_to_base64url(verified.credential_id),
        public_key=verified.credential_public_key,
        sign_count=verified.sign_count,
        backup_eligible=verified.credential_device_type == "multi_device",
        backup_state=verified.credential_backed_up,
        transports=[transport for transport in transports if transport in known],
        aaguid=str(verified.aaguid),
    )


@dataclass(frozen=True)
class Assertion:
    """Who an answer to ``navigator.credentials.get()`` claims to be, not yet checked."""

    credential_id: str
    user_handle: str
    data: dict


def read_assertion(credential_json):
    """The credential id (canonical base64url) and user handle (an account id) an answer
    names; nothing is checked yet. Raises :class:`PasskeyRefused` when it is malformed."""
    data = _loaded(credential_json)
    try:
        parsed = parse_authentication_credential_json(data)
    except (WebAuthnException, ValueError) as error:
        raise PasskeyRefused(INVALID, str(error)) from error
    if not parsed.raw_id or len(parsed.raw_id) > MAX_CREDENTIAL_ID_BYTES:
        raise PasskeyRefused(INVALID, "bad credential id")
    handle = parsed.response.user_handle
    try:
        user_handle = handle.decode() if handle else ""
    except UnicodeDecodeError:
        user_handle = ""
    return Assertion(bytes_to_base64url(parsed.raw_id), user_handle, data)


def verify_assertion(request, assertion, challenge, passkey, *, require_user_verification):
    """Check ``assertion`` against ``passkey`` (its credential item); returns the changes to
    store on it: ``sign_count``, ``backup_state``, ``last_used`` is the caller's."""
    rp = relying_party()
    try:
        verified = verify_authentication_response(
            credential=assertion.data,
            expected_challenge=challenge,
            expected_rp_id=rp.id,
            expected_origin=list(rp.origins),
            credential_public_key=passkey.public_key,
            credential_current_sign_count=int(passkey.sign_count),
            require_user_verification=require_user_verification,
        )
    except WebAuthnException as error:
        raise PasskeyRefused(INVALID, str(error)) from error
    backup_eligible = verified.credential_device_type == "multi_device"
    if backup_eligible != bool(passkey.backup_eligible):
        raise PasskeyRefused(INVALID, "the credential's backup eligibility changed")
    return {"sign_count": verified.new_sign_count, "backup_state": verified.credential_backed_up}
