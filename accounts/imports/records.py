"""A user as a source gives it: plain values, read and not yet judged.

Every source (a Django database, a JSON-lines file) yields :class:`SourceUser` objects; what
becomes of them (checked, normalized, made an account) is :mod:`.candidates`' business.
"""

from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

# A source's primary key as it is there: a number for auth_user.id, a string for a UUID.
SourceId = int | str


@dataclass(frozen=True)
class SourceAddress:
    """An address of the user, with whether the source had it verified."""

    email: str
    verified: bool
    primary: bool = False


@dataclass(frozen=True)
class SourceIdentity:
    """An identity at a provider (django-allauth's ``socialaccount_socialaccount``):
    ``provider`` as allauth names it (the app's ``provider_id``), ``uid`` the subject, and the
    ``issuer`` of its ID token when allauth kept one."""

    provider: str
    uid: str
    issuer: str | None = None


@dataclass(frozen=True)
class SourcePasskey:
    """A WebAuthn credential, as read from its registration (django-allauth keeps the
    browser's whole answer): the credential id (base64url), its COSE public key, its
    signature counter and backup flags at registration, transports, AAGUID, name, and the
    user handle the source site registered it with."""

    credential_id: str
    public_key: bytes
    sign_count: int
    backup_eligible: bool
    backup_state: bool
    transports: tuple[str, ...]
    aaguid: str
    name: str
    created: datetime | None = None
    last_used: datetime | None = None
    # The user handle it was registered with (its discoverable login answers with it).
    user_handle: str | None = None
    # credProps' ``rk`` at registration, as allauth reads ``is_passwordless``; ``None``: not said.
    discoverable: bool | None = None


@dataclass(frozen=True)
class SourceFactors:
    """Second factors: the TOTP secret (base32), and the recovery codes left unused and
    those used already (the codes themselves: only their digests are stored)."""

    totp_secret: str | None = None
    totp_created: datetime | None = None
    recovery_codes: tuple[str, ...] = ()
    used_recovery_codes: tuple[str, ...] = ()
    passkeys: tuple[SourcePasskey, ...] = ()


@dataclass(frozen=True)
class SourceProblem:
    """Something of the user the source could not read (a malformed factor, a value of the
    wrong type): ``field`` and why. The user is reported, never imported in part."""

    field: str
    message: str


@dataclass
class SourceUser:
    """One user of a source. ``source_id`` is the source's own primary key; ``line`` the
    line of a JSON-lines file it was read from (``None`` for a database)."""

    source_id: Any
    email: Any = ""
    username: Any = None
    password: Any = None
    email_verified: Any = False
    is_active: Any = True
    is_staff: Any = False
    is_superuser: Any = False
    date_joined: datetime | None = None
    last_login: datetime | None = None
    other_addresses: tuple[SourceAddress, ...] = ()
    identities: tuple[SourceIdentity, ...] = ()
    factors: SourceFactors = field(default_factory=SourceFactors)
    problems: tuple[SourceProblem, ...] = ()
    line: int | None = None
