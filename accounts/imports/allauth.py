"""django-allauth's stored formats (65.x), read as its own code reads them, never imported:

- ``account_emailaddress``: one row per address (``email``, ``verified``, ``primary``);
- ``socialaccount_socialaccount``: ``provider`` (the app's ``provider_id``), ``uid`` (the
  ``sub`` claim for OpenID Connect) and ``extra_data`` (JSON: the ID token's claims under
  ``id_token``, the UserInfo's under ``userinfo``);
- ``mfa_authenticator``: ``type`` and ``data`` (JSON). ``totp``: ``{"secret": encrypt(base32
  secret)}``. ``recovery_codes``: ``{"seed": encrypt(hex seed), "used_mask": bits}``, the
  codes derived from the seed by an HMAC-SHA1 chain (``RecoveryCodes.generate_codes``), or
  ``{"migrated_codes": [encrypt(code)...]}``. ``webauthn``: ``{"name", "credential"}``, the
  browser's whole registration answer (its ``attestationObject`` holds the credential id,
  the COSE public key, the counter and the backup flags).

``encrypt``/``decrypt`` are the allauth MFA adapter's (the identity unless the source site
overrode them): :func:`read_factors` takes the source site's ``decrypt``.
"""

import hmac
import json
import uuid
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from datetime import datetime
from hashlib import sha1
from typing import Any

from django.utils.http import int_to_base36
from webauthn.helpers import base64url_to_bytes, bytes_to_base64url, parse_attestation_object

from ..mfa import passkeys
from .records import SourceAddress, SourceFactors, SourceIdentity, SourcePasskey, SourceProblem

TOTP, RECOVERY_CODES, WEBAUTHN = "totp", "recovery_codes", "webauthn"
# allauth's defaults (MFA_RECOVERY_CODE_COUNT, MFA_RECOVERY_CODE_DIGITS).
RECOVERY_CODE_COUNT = 10
RECOVERY_CODE_DIGITS = 8


@dataclass(frozen=True)
class RecoveryCodeFormat:
    """How the source site made its recovery codes: allauth's ``MFA_RECOVERY_CODE_COUNT``
    and ``MFA_RECOVERY_CODE_DIGITS``."""

    count: int = RECOVERY_CODE_COUNT
    digits: int = RECOVERY_CODE_DIGITS


def identity(decrypted: str) -> str:
    """allauth's default ``decrypt``: secrets are stored as they are."""
    return decrypted


def json_value(value: Any) -> Any:
    """A JSON column as the driver gives it: text (SQLite, MySQL, Django's PostgreSQL
    backends), or already a document."""
    return json.loads(value) if isinstance(value, (str, bytes, bytearray)) else value


def addresses(rows: Iterable[tuple[Any, Any, Any]], user_email: Any) -> tuple[SourceAddress, list[SourceAddress]]:
    """``(the account's address, the others)`` from a user's ``(email, verified, primary)``
    rows: the primary row, else the row of the user's own ``email``, else that ``email``
    unverified (allauth counts an address without a row as unverified)."""
    found = [SourceAddress(email, bool(verified), bool(primary)) for email, verified, primary in rows]
    own = str(user_email).casefold() if isinstance(user_email, str) else None
    chosen = next((row for row in found if row.primary), None) or next(
        (row for row in found if isinstance(row.email, str) and row.email.casefold() == own), None
    )
    if chosen is None:
        chosen = SourceAddress(user_email, False, True)
    others = [row for row in found if row is not chosen and str(row.email).casefold() != str(chosen.email).casefold()]
    return chosen, others


def identity_of(provider: Any, uid: Any, extra_data: Any) -> SourceIdentity:
    """A ``socialaccount_socialaccount`` row as an identity: the issuer of its ID token
    when allauth kept the token's claims."""
    issuer = None
    try:
        document = json_value(extra_data)
        claims = document.get("id_token") if isinstance(document, dict) else None
        if isinstance(claims, dict) and isinstance(claims.get("iss"), str):
            issuer = claims["iss"]
    except (ValueError, TypeError):
        pass
    return SourceIdentity(str(provider), uid if isinstance(uid, str) else str(uid), issuer)


def user_handle(pk: Any) -> str:
    """The user handle allauth registers a user's passkeys with
    (``user_pk_to_url_str``): an integer key in base 36, a UUID in hex, else the key."""
    if isinstance(pk, int) and not isinstance(pk, bool):
        return int_to_base36(pk)
    try:
        return uuid.UUID(str(pk)).hex
    except ValueError:
        return str(pk)


def read_factors(
    rows: Sequence[tuple[Any, Any, Any, Any]],
    *,
    pk: Any = None,
    decrypt: Callable[[str], str] = identity,
    codes: RecoveryCodeFormat = RecoveryCodeFormat(),
) -> tuple[SourceFactors, list[SourceProblem]]:
    """A user's second factors from their ``(type, data, created_at, last_used_at)``
    ``mfa_authenticator`` rows, and what of them cannot be read (a factor of an unknown
    type, data that is not allauth's, a secret ``decrypt`` refuses). ``pk``: the user's
    primary key, whence allauth made its passkeys' user handle."""
    totp_secret, totp_created = None, None
    unused: tuple[str, ...] = ()
    used: tuple[str, ...] = ()
    passkeys: list[SourcePasskey] = []
    problems: list[SourceProblem] = []
    for kind, raw, created_at, last_used_at in rows:
        try:
            data = json_value(raw)
            if kind == TOTP:
                totp_secret, totp_created = decrypt(data["secret"]), created_at
            elif kind == RECOVERY_CODES:
                unused, used = recovery_codes_of(data, decrypt, codes)
            elif kind == WEBAUTHN:
                passkeys.append(passkey_of(data, created_at, last_used_at, None if pk is None else user_handle(pk)))
            else:
                problems.append(SourceProblem("mfa", f"An authenticator of unknown type {kind!r}."))
        except Exception as error:  # noqa: BLE001  (data of any shape, a host's decrypt: the user is reported)
            problems.append(SourceProblem(_field_of(kind), f"Its {kind} authenticator cannot be read: {error!r}."))
    factors = SourceFactors(totp_secret, totp_created, unused, used, tuple(passkeys))
    return factors, problems


def _field_of(kind: Any) -> str:
    return {TOTP: "totp", RECOVERY_CODES: "recovery_codes", WEBAUTHN: "passkey"}.get(kind, "mfa")


def recovery_codes_of(
    data: dict[str, Any], decrypt: Callable[[str], str], codes: RecoveryCodeFormat
) -> tuple[tuple[str, ...], tuple[str, ...]]:
    """``(unused codes, used codes)`` of a ``recovery_codes`` authenticator, generated from
    its seed as allauth generates them (or its migrated codes, all unused)."""
    if data.get("migrated_codes") is not None:
        return tuple(decrypt(code) for code in data["migrated_codes"]), ()
    generated = generate_codes(decrypt(data["seed"]), codes)
    mask = int(data.get("used_mask", 0))
    unused = tuple(code for index, code in enumerate(generated) if not mask & (1 << index))
    used = tuple(code for index, code in enumerate(generated) if mask & (1 << index))
    return unused, used


def generate_codes(seed: str, codes: RecoveryCodeFormat) -> list[str]:
    """allauth's ``RecoveryCodes.generate_codes``: one HMAC-SHA1 keyed by the seed, fed
    ``f"{i:3},"`` for each code in turn, its digest's first bytes read as a number."""
    chain = hmac.new(key=seed.encode("ascii"), msg=None, digestmod=sha1)
    byte_count = min(codes.digits // 2, chain.digest_size)
    generated = []
    for index in range(codes.count):
        chain.update(f"{index:3},".encode())
        value = int.from_bytes(chain.digest()[:byte_count], byteorder="big", signed=False)
        generated.append(str(value % 10**codes.digits).zfill(codes.digits))
    return generated


def passkey_of(
    data: dict[str, Any], created: datetime | None, last_used: datetime | None, handle: str | None = None
) -> SourcePasskey:
    """A ``webauthn`` authenticator's credential, read from the registration answer allauth
    kept. The counter is the one at registration (allauth keeps no later one): a counter
    that grew since is still accepted, only one that does not grow is refused."""
    credential = data["credential"]
    response = credential["response"]
    attestation = parse_attestation_object(base64url_to_bytes(response["attestationObject"]))
    auth_data = attestation.auth_data
    attested = auth_data.attested_credential_data
    if attested is None:
        raise ValueError("the registration holds no credential")
    transports = response.get("transports") or credential.get("transports") or ()
    return SourcePasskey(
        credential_id=bytes_to_base64url(attested.credential_id),
        public_key=attested.credential_public_key,
        sign_count=auth_data.sign_count,
        backup_eligible=auth_data.flags.be,
        backup_state=auth_data.flags.bs,
        transports=tuple(str(transport) for transport in transports),
        aaguid=str(uuid.UUID(bytes=attested.aaguid)),
        name=str(data.get("name") or "Passkey"),
        created=created,
        last_used=last_used,
        user_handle=handle,
        discoverable=passkeys.discoverable_of(credential),
    )
