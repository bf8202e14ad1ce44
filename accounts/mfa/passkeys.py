"""Passkeys and security keys (WebAuthn, through py_webauthn): the relying party, the
options of each ceremony, their challenge, and checking what the browser answers.

- The relying-party id and origin come from configuration only: ``ACCOUNTS_WEBAUTHN_RP_ID``
  and ``ACCOUNTS_WEBAUTHN_ORIGIN``, else the host and origin of ``ACCOUNTS_SITE_URL``; never
  from a request's ``Host`` (see :mod:`accounts.links`). Without them passkeys are
  unavailable (:data:`UNAVAILABLE`, system check ``accounts.mfa.W001``). Browsers refuse an
  IP address as relying-party id.
- A challenge is 32 random bytes for one purpose, for :data:`CHALLENGE_SECONDS`. A signed-in
  person's, or a login's second step's, is kept in the session (server-side with
  :mod:`accounts.sessions`) and taken out when it is checked; a second step's sign-in also
  deletes the session that held it, in its guarded transaction. An anonymous visitor's
  (a passkey login, a passkey signup: :data:`SIGNED_PURPOSES`) is signed into a cookie
  instead, so that asking for options writes no session item (issue 26, finding 9; the
  API keeps it in the session all the same, as an app client's token is its only carrier); the
  sign-in that answers it writes the record that it was used in the same transaction
  (:func:`accounts.transactions.used_challenge_spend`), and a signup's answer creates the
  account whose id its one-time token fixes: both single-use.
- The signature counter and the backup flags are checked as WebAuthn says (§7.2 steps 21-22):
  a counter that does not grow (when either is non-zero) is refused as a possible clone,
  and a credential's backup eligibility must not change; its backup state is recorded.
"""

import ipaddress
import json
import secrets
import time
from dataclasses import dataclass
from typing import Any
from urllib.parse import urlsplit

from django.core import signing
from django.http import HttpRequest
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

from .. import bounded_json
from ..app_settings import app_settings
from ..links import site_url_problem
from ..tables import MAX_PASSKEYS  # noqa: F401  (how many an account may register: the engine's bound)

CHALLENGE_SESSION_KEY = "accounts_webauthn_challenge"
CHALLENGE_SECONDS = 300
CHALLENGE_BYTES = 32
# A credential id is at most 1,023 bytes (WebAuthn §4); its lock key must fit in 2,048.
MAX_CREDENTIAL_ID_BYTES = 1023
# A browser's answer, as the form takes it (its hidden field's max_length), and how deep it
# may nest: an answer nests 3 levels (clientExtensionResults.credProps.rk), an extension's
# results a few more; anything deeper is not an answer, and would cost the parser a
# RecursionError (issue 26, finding 6).
MAX_ANSWER_LENGTH = 65536
MAX_ANSWER_DEPTH = 16
# Ceremonies, each with its own challenge.
LOGIN, SECOND_FACTOR, REAUTHENTICATE = "login", "second_factor", "reauthenticate"
REGISTER, SIGNUP = "register", "signup"
# Ceremonies of a visitor who is nobody yet: their challenge is signed into a cookie.
SIGNED_PURPOSES = frozenset({LOGIN, SIGNUP})
CHALLENGE_COOKIE = "accounts_passkey_challenge"
CHALLENGE_SALT = "accounts.mfa.passkeys.challenge"
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


@dataclass(frozen=True)
class CeremonyOptions:
    """The options of a ceremony (JSON, for the browser) and, for :data:`SIGNED_PURPOSES`,
    the value of the :data:`CHALLENGE_COOKIE` that carries its signed challenge."""

    json: str
    challenge_cookie: str | None = None


def _new_challenge(request: HttpRequest, purpose: str, *, in_session: bool = False) -> tuple[bytes, str | None]:
    """``(challenge, cookie value or None)``: a new challenge for ``purpose``, kept in the
    session, or signed into the cookie's value for :data:`SIGNED_PURPOSES` unless
    ``in_session``."""
    challenge = secrets.token_bytes(CHALLENGE_BYTES)
    issued = {
        "challenge": bytes_to_base64url(challenge),
        "purpose": purpose,
        "expires": int(time.time()) + CHALLENGE_SECONDS,
    }
    if purpose in SIGNED_PURPOSES and not in_session:
        return challenge, signing.dumps(issued, salt=CHALLENGE_SALT, compress=True)
    request.session[CHALLENGE_SESSION_KEY] = issued
    return challenge, None


def _issued_challenge(request: HttpRequest, purpose: str) -> dict | None:
    if purpose not in SIGNED_PURPOSES:
        return request.session.pop(CHALLENGE_SESSION_KEY, None)
    held = request.session.get(CHALLENGE_SESSION_KEY)
    if held and held.get("purpose") == purpose:
        # Issued ``in_session`` (the API: an app keeps no cookie, its session token does).
        return request.session.pop(CHALLENGE_SESSION_KEY)
    try:
        return signing.loads(request.COOKIES.get(CHALLENGE_COOKIE, ""), salt=CHALLENGE_SALT, max_age=CHALLENGE_SECONDS)
    except signing.BadSignature:
        return None


def take_challenge(request, purpose):
    """The challenge issued to this browser for ``purpose``, taken out of the session (it
    cannot be used again) or read from its signed cookie (:data:`SIGNED_PURPOSES` unless
    issued ``in_session``: the caller's write makes it single-use); raises :class:`PasskeyRefused` when there is none,
    it was for another purpose, or it expired."""
    issued = _issued_challenge(request, purpose)
    if not issued or issued.get("purpose") != purpose:
        raise PasskeyRefused(EXPIRED, "no challenge for this purpose")
    if issued["expires"] < time.time():
        raise PasskeyRefused(EXPIRED, "the challenge expired")
    return base64url_to_bytes(issued["challenge"])


def _descriptors(credential_ids):
    return [PublicKeyCredentialDescriptor(id=base64url_to_bytes(credential)) for credential in sorted(credential_ids)]


def registration_options(request, purpose, *, user_id, name, existing=(), in_session=False):
    """The :class:`CeremonyOptions` of ``navigator.credentials.create()`` for an account with
    id ``user_id`` (the user handle a discoverable passkey returns at login) and ``name``,
    excluding its ``existing`` credential ids; a new challenge is issued for ``purpose``
    (``in_session``: as :func:`authentication_options`)."""
    rp = relying_party()
    challenge, cookie = _new_challenge(request, purpose, in_session=in_session)
    options = generate_registration_options(
        rp_id=rp.id,
        rp_name=rp.name,
        user_id=user_id.encode(),
        user_name=name,
        challenge=challenge,
        timeout=CHALLENGE_SECONDS * 1000,
        exclude_credentials=_descriptors(existing),
        # A passkey (discoverable: logs in without a name) when the authenticator can; a
        # security key that cannot still serves as a second factor.
        authenticator_selection=AuthenticatorSelectionCriteria(
            resident_key=ResidentKeyRequirement.PREFERRED,
            user_verification=UserVerificationRequirement.PREFERRED,
        ),
    )
    # credProps: the browser says whether the credential is discoverable (a passkey that logs
    # in without a name) or not (a security key), which the API reports as allauth's
    # ``is_passwordless``.
    with_extensions = {**json.loads(options_to_json(options)), "extensions": {"credProps": True}}
    return CeremonyOptions(json.dumps(with_extensions), cookie)


def authentication_options(request, purpose, *, allowed=(), in_session=False):
    """The :class:`CeremonyOptions` of ``navigator.credentials.get()``: for the account's
    ``allowed`` credential ids, or any discoverable passkey of this site when empty (a login
    without a name); a new challenge is issued for ``purpose``, whose user verification it
    asks for. ``in_session``: keep even a :data:`SIGNED_PURPOSES` challenge in the session
    (the API, whose app client keeps no cookie but its session token)."""
    rp = relying_party()
    challenge, cookie = _new_challenge(request, purpose, in_session=in_session)
    options = generate_authentication_options(
        rp_id=rp.id,
        challenge=challenge,
        timeout=CHALLENGE_SECONDS * 1000,
        allow_credentials=_descriptors(allowed),
        user_verification=USER_VERIFICATION[purpose],
    )
    return CeremonyOptions(options_to_json(options), cookie)


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
    # Whether the authenticator keeps it discoverable (credProps' ``rk``); ``None``: not said.
    discoverable: bool | None = None


def _loaded(credential_json):
    try:
        data = bounded_json.loads(credential_json, max_length=MAX_ANSWER_LENGTH, max_depth=MAX_ANSWER_DEPTH)
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
        discoverable=discoverable_of(data),
    )


def discoverable_of(answer: dict[str, Any]) -> bool | None:
    """credProps' ``rk`` of a registration ``answer`` (a boolean), else ``None``."""
    extensions = answer.get("clientExtensionResults")
    props = extensions.get("credProps") if isinstance(extensions, dict) else None
    found = props.get("rk") if isinstance(props, dict) else None
    return found if isinstance(found, bool) else None


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
