"""A source user judged as a sign-up is: its values checked by the sign-up form's rules and
normalized as a sign-up normalizes them, then made the account item (with its passkeys'
items) that its create sends, or the report's lines saying why not.

The account's id is derived from the source's row (:func:`row_token`), as a sign-up form's
token derives its account's (:func:`accounts.store.account_id_for_token`): every run makes
the same id for the same user, so a run killed and run again finds the users it imported
(their create is refused by ``attribute_not_exists(PK)``) and never makes a second account.
"""

import base64
import binascii
import functools
import json
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any, cast

from django.core.exceptions import ValidationError

from .. import store
from ..adapter import get_adapter
from ..app_settings import app_settings
from ..exceptions import InvalidUniqueValue
from ..mfa import recovery_codes
from ..mfa import store as mfa_store
from ..mfa.tables import Passkey
from ..rules import AccountValuesForm
from ..tables import ADDRESSES_FIELD, MAX_PASSKEYS, Account, account_constraints
from ..tables import identity_element as _identity_element
from ..tables.clocks import utcnow
from ..transactions import Transaction, owned_put, plan_create
from .passwords import PasswordRefused, carried_password
from .records import SourcePasskey, SourceUser
from .reports import (
    EXTRA_ADDRESS_NOT_IMPORTED,
    IDENTITY_NOT_IMPORTED,
    INVALID,
    Problem,
)

# The engine's helpers this module builds with, typed as they document themselves (their
# modules carry no annotations yet).
account_id_for_token = cast("Callable[[str], str]", store.account_id_for_token)
build_account = cast("Callable[..., Account]", store.build_account)
identity_element = cast("Callable[[str, str], str]", _identity_element)
recovery_code_digests = cast("Callable[[str, Iterable[str]], set[str]]", recovery_codes.digests)
new_passkey = cast("Callable[[Account, SourcePasskey, str], Passkey]", mfa_store.new_passkey)

# How the report names the unique fields of an account's set-valued constraints: an
# account's other verified addresses are addresses as its primary one is.
FIELD_NAMES = {"passkeys": "passkey", "oidc_identities": "identity", ADDRESSES_FIELD: "email"}


@dataclass(frozen=True)
class Key:
    """A lock key a candidate would hold (or, for an unverified address, claims): what two
    source users must not share. ``value``: the member of a set it is the key of (an other
    address, a passkey), which the report names; ``None`` for a single value."""

    namespace: str
    key: str
    field: str
    lookalike: bool
    value: str | None = None


@dataclass
class Candidate:
    """A source user made an account: ``account`` and ``passkeys`` are the items its
    create writes; ``keys`` the values it holds; ``notes`` what of it is not carried."""

    user: SourceUser
    account: Account
    passkeys: list[Passkey]
    keys: list[Key]
    notes: list[Problem] = field(default_factory=list)

    @property
    def verified(self) -> bool:
        return self.account.email_verified is not False

    @functools.cached_property
    def first_plan(self) -> Transaction:
        """Its create as first planned (a member sent again is planned again: :meth:`plan`)."""
        return self.plan()

    @property
    def action_count(self) -> int:
        """How many actions its create is (the account, its locks, passkeys, a registry entry)."""
        return len(self.first_plan.actions)

    def plan(self) -> Transaction:
        """The create a sign-up of this account sends: the account Put, each lock's guarded
        Put (a ConditionCheck for an unverified address), its passkeys' items, its staff
        registry entry."""
        return plan_create(self.account, check_unheld=True, also=[owned_put(passkey) for passkey in self.passkeys])


def source_id_text(source_id: Any) -> str:
    """A source id as one canonical text (``5``, ``"5"`` are told apart: JSON)."""
    return json.dumps(source_id, ensure_ascii=False, sort_keys=True, default=str)


def row_token(user: SourceUser) -> str:
    """What names the source's row: its id and when it joined (two sites' user 5 are not
    one person), from which its account id is derived."""
    joined = user.date_joined.isoformat() if isinstance(user.date_joined, datetime) else ""
    return f"accounts_import\0{source_id_text(user.source_id)}\0{joined}"


def account_id_of(user: SourceUser) -> str:
    """The id of the account ``user`` is imported as (see the module)."""
    return account_id_for_token(row_token(user))


def text_problem(value: object, *, required: bool = False) -> str | None:
    """Why ``value`` cannot be a value of an account's text attribute, or ``None``: not
    text, a NUL character, a lone surrogate (no text at all: DynamoDB refuses it)."""
    if value is None or value == "":
        return "This field is required." if required else None
    if not isinstance(value, str):
        return "This value is not text."
    if "\x00" in value:
        return "Null characters are not allowed."
    try:
        value.encode("utf-8")
    except UnicodeEncodeError:
        return "This value contains invalid characters."
    return None


def flag(value: object, default: bool) -> bool | None:
    """A source's flag as a bool (a database's 0 or 1 too), or ``None`` when it is none."""
    if value is None:
        return default
    if isinstance(value, bool):
        return value
    if isinstance(value, int) and value in (0, 1):
        return bool(value)
    return None


def build_candidate(user: SourceUser, providers: dict[str, str]) -> Candidate | list[Problem]:
    """``user`` made an account, or the report's lines saying why it cannot be one.
    ``providers``: the site's OpenID Connect providers, ``{id: issuer}``."""
    problems = [Problem(user.source_id, each.field, INVALID, each.message, line=user.line) for each in user.problems]
    if any(each.field == "line" for each in user.problems):
        return problems  # a line that is no user at all: nothing else to say of it
    flags: dict[str, bool] = {}
    for name, default in (("is_active", True), ("is_staff", False), ("is_superuser", False), ("email_verified", False)):
        value = flag(getattr(user, name), default)
        if value is None:
            problems.append(Problem(user.source_id, name, INVALID, "This value is not true or false.", line=user.line))
        else:
            flags[name] = value
    values = clean_values(user, allow_reserved=flags.get("is_staff", False) or flags.get("is_superuser", False))
    if isinstance(values, list):
        problems.extend(values)
    try:
        password = carried_password(user.password)
    except PasswordRefused as refused:
        problems.append(Problem(user.source_id, "password", refused.code, str(refused), line=user.line))
    if problems or isinstance(values, list):
        return problems
    email, username = values
    carried = carried_addresses(user, email, verified=flags["email_verified"])
    account = build_account(
        carried.email,
        username,
        password,
        token=row_token(user),
        created=user.date_joined or utcnow(),
        imported=_provenance(user),
        **{**flags, "email_verified": carried.verified},
    )
    setattr(account, ADDRESSES_FIELD, set(carried.verified_others) or None)
    account.unverified_emails = set(carried.waiting) or None
    notes = carried.notes + _identities(user, account, providers)
    passkeys, problems = _factors(user, account)
    if problems:
        return problems
    keys, problems = _keys(user, account)
    if problems:
        return problems
    return Candidate(user, account, passkeys, keys, notes)


def clean_values(user: SourceUser, *, allow_reserved: bool) -> tuple[str, str] | list[Problem]:
    """``(email, username)`` as a sign-up stores them, checked by the sign-up form's rules
    (the fields of :class:`accounts.rules.AccountValuesForm`, which normalize through the
    adapter, then the adapter's ``clean_email`` and ``clean_username`` and reserved names,
    as :func:`accounts.rules.clean_account_values` runs them, without building a form per
    user), or a line per value refused. The one place the import reads a username: a site
    whose accounts have none changes it here. Reserved usernames (``admin``,
    ``support``...) stay with staff and superusers, as the staff tools may give them."""
    adapter = get_adapter()
    fields = AccountValuesForm.base_fields
    checks: dict[str, Callable[[str], str]] = {"email": adapter.clean_email, "username": adapter.clean_username}
    cleaned, problems = {}, []
    for name in ("email", "username"):
        problem = text_problem(getattr(user, name), required=True)
        if problem:
            problems.append(Problem(user.source_id, name, INVALID, problem, line=user.line))
            continue
        try:
            value = checks[name](fields[name].clean(getattr(user, name)))
            if name == "username" and not allow_reserved and adapter.is_reserved_username(value):
                raise adapter.validation_error("username_reserved")
            cleaned[name] = value
        except ValidationError as error:
            problems.extend(
                Problem(user.source_id, name, INVALID, message, detail=each.code, line=user.line)
                for each in error.error_list
                for message in each.messages
            )
    return problems or (cleaned["email"], cleaned["username"])


@dataclass
class CarriedAddresses:
    """What an account holds of a source user's addresses: its primary ``email`` and
    whether it is ``verified``, its other verified addresses (``email_addresses``, each
    with its lock, as the primary), those waiting for their proof (``unverified_emails``,
    no lock), and a report line for each address not carried."""

    email: str
    verified: bool
    verified_others: list[str] = field(default_factory=list)
    waiting: list[str] = field(default_factory=list)
    notes: list[Problem] = field(default_factory=list)


def carried_addresses(user: SourceUser, email: str, *, verified: bool) -> CarriedAddresses:
    """The addresses of ``user`` (its cleaned primary ``email``, ``verified`` or not, and
    django-allauth's other ``account_emailaddress`` rows) as the account holds them.

    With one address per account (``ACCOUNTS_MAX_EMAIL_ADDRESSES`` 1, the default) each
    other row is reported. With more: each row is cleaned as a sign-up's address is; a
    verified one becomes primary when the source's primary is not verified (the primary
    must be: a person who proved one mailbox keeps logging in with it), the old primary
    then waiting; the verified others come in as members of the account's set of
    addresses, each with its lock in the account's create (so two users never share one:
    :mod:`.conflicts`), the unverified ones as addresses waiting for their proof, holding
    no lock, as an address added on the site waits (the person sends its link again from
    the email page). Reported, the user imported all the same: a row that is no valid
    address, one that looks like another of the user's, those past the bound (verified
    ones kept first), and every other row of an account with no verified address (an
    account not verified adds no address)."""
    limit = app_settings.MAX_EMAIL_ADDRESSES
    carried = CarriedAddresses(email, verified)
    if limit <= 1:
        carried.notes = [
            _address_note(user, other.email, "An account holds one address: this one was not imported.")
            for other in user.other_addresses
        ]
        return carried
    rows: list[tuple[str, bool]] = []
    for other in user.other_addresses:
        cleaned, problem = _cleaned_address(other.email)
        if cleaned is None:
            carried.notes.append(_address_note(user, other.email, problem))
        else:
            rows.append((cleaned, bool(other.verified)))
    promoted = None if verified else next((row for row in rows if row[1]), None)
    if promoted is not None:
        rows = [row for row in rows if row is not promoted]
        demoted, problem = _cleaned_address(email)
        if demoted is None:
            carried.notes.append(_address_note(user, email, problem))
        else:
            rows.insert(0, (demoted, False))
        carried.email, carried.verified = promoted[0], True
    if not carried.verified:
        message = "The account's address is not verified: an account adds no other address before it is."
        carried.notes += [_address_note(user, address, message) for address, _ in rows]
        return carried
    try:
        held, same = _address_keys(carried.email), _address_keys(carried.email, lookalikes=False)
    except InvalidUniqueValue:
        return carried  # a primary that can be no key: the user is reported invalid (its keys)
    for address, is_verified in sorted(rows, key=lambda row: not row[1]):
        keys = _address_keys(address)
        if _address_keys(address, lookalikes=False) <= same:
            continue  # the same mailbox spelled again: carried once (its verified row first)
        if keys & held:
            message = "It looks the same as another address of this user: it was not imported."
            carried.notes.append(_address_note(user, address, message))
            continue
        if 1 + len(carried.verified_others) + len(carried.waiting) >= limit:
            message = (
                f"An account holds at most {limit} addresses (ACCOUNTS_MAX_EMAIL_ADDRESSES): this one was not imported."
            )
            carried.notes.append(_address_note(user, address, message))
            continue
        held |= keys
        same |= _address_keys(address, lookalikes=False)
        (carried.verified_others if is_verified else carried.waiting).append(address)
    return carried


def _cleaned_address(value: object) -> tuple[str | None, str]:
    """``(value as a sign-up stores an address, "")`` (the sign-up form's field and the
    adapter's ``clean_email``; it has a lock key), or ``(None, why it cannot be one)``."""
    problem = text_problem(value, required=True)
    if problem:
        return None, problem
    try:
        cleaned: str = get_adapter().clean_email(AccountValuesForm.base_fields["email"].clean(value))
        _address_keys(cleaned)
    except ValidationError as error:
        return None, str(error.messages[0])
    except InvalidUniqueValue as error:
        return None, str(error.message)
    return cleaned, ""


def _address_keys(address: str, *, lookalikes: bool = True) -> set[str]:
    """The lock keys of ``address`` (cleaned) in each constraint on the email, each prefixed
    by its namespace: its lock, and its look-alike lock when one is declared (unless
    ``lookalikes`` is false)."""
    return {
        f"{constraint.namespace}#{constraint.key_for(address)}"
        for constraint in account_constraints()
        if constraint.fields == ("email",) and (lookalikes or not constraint.lookalike)
    }


def _address_note(user: SourceUser, address: object, message: str) -> Problem:
    return Problem(user.source_id, "email", EXTRA_ADDRESS_NOT_IMPORTED, message, detail=str(address), line=user.line)


def _provenance(user: SourceUser) -> dict[str, str]:
    provenance = {"source_id": source_id_text(user.source_id)}
    if isinstance(user.last_login, datetime):
        provenance["last_login"] = user.last_login.astimezone(UTC).isoformat()
    return provenance


def _identities(user: SourceUser, account: Account, providers: dict[str, str]) -> list[Problem]:
    """Give ``account`` the identities of ``user`` at providers the site configures; a line
    for each other one (the user is imported all the same: the password, or a reset, still
    lets them in)."""
    elements, notes = set(), []
    for identity in user.identities:
        issuer = providers.get(identity.provider)
        problem = text_problem(identity.uid, required=True)
        if issuer is None or problem or (identity.issuer and identity.issuer != issuer):
            why = problem or (
                f"The site configures no OpenID Connect provider {identity.provider!r}."
                if issuer is None
                else f"Its ID token's issuer {identity.issuer!r} is not the provider's {issuer!r}."
            )
            notes.append(
                Problem(
                    user.source_id,
                    "identity",
                    IDENTITY_NOT_IMPORTED,
                    why,
                    detail=f"{identity.provider}:{identity.uid}",
                    line=user.line,
                )
            )
            continue
        elements.add(identity_element(issuer, identity.uid))
    account.oidc_identities = elements or None
    return notes


def _factors(user: SourceUser, account: Account) -> tuple[list[Passkey], list[Problem]]:
    """Give ``account`` the second factors of ``user``; returns its passkeys' items, and the
    lines saying which factor cannot be carried (the user is then not imported: a person
    who had a second factor must not come in without it)."""
    factors = user.factors
    problems = []
    if factors.totp_secret is not None:
        if text_problem(factors.totp_secret, required=True) or not _is_base32(factors.totp_secret):
            problems.append(Problem(user.source_id, "totp", INVALID, "The TOTP secret is not base32.", line=user.line))
        else:
            account.totp_secret = factors.totp_secret
            account.totp_created = factors.totp_created or utcnow()
    codes = [*factors.recovery_codes, *factors.used_recovery_codes]
    if any(text_problem(code, required=True) for code in codes):
        problems.append(
            Problem(user.source_id, "recovery_codes", INVALID, "A recovery code is not text.", line=user.line)
        )
    elif codes:
        account.recovery_codes = recovery_code_digests(account.id, factors.recovery_codes) or None
        account.used_recovery_codes = recovery_code_digests(account.id, factors.used_recovery_codes) or None
    passkeys = []
    for source in factors.passkeys:
        problem = text_problem(source.credential_id, required=True) or text_problem(source.name)
        if problem:
            problems.append(Problem(user.source_id, "passkey", INVALID, problem, line=user.line))
            continue
        passkey = new_passkey(account, source, source.name or "Passkey")
        passkey.created = source.created or utcnow()
        passkey.last_used = source.last_used
        passkey.user_handle = source.user_handle
        passkeys.append(passkey)
    if passkeys:
        account.passkeys = {passkey.credential_id for passkey in passkeys}
    if len(passkeys) + len(account.oidc_identities or ()) > MAX_PASSKEYS:
        message = f"An account holds at most {MAX_PASSKEYS} passkeys and identities together."
        problems.append(Problem(user.source_id, "passkey", INVALID, message, line=user.line))
    return passkeys, problems


def _is_base32(secret: str) -> bool:
    try:
        base64.b32decode(secret.upper() + "=" * (-len(secret) % 8))
    except (binascii.Error, ValueError):
        return False
    return True


def _keys(user: SourceUser, account: Account) -> tuple[list[Key], list[Problem]]:
    """Every lock key ``account`` holds or claims (an unverified address's too: two source
    users never share an address), and the line of a value that can be no key."""
    keys: list[Key] = []
    for constraint in account_constraints():
        field_name = FIELD_NAMES.get(constraint.fields[0], constraint.fields[0])
        try:
            if constraint.many:
                members = sorted(constraint.member_keys(account).items(), key=lambda member: member[1])
                keys.extend(
                    Key(constraint.namespace, key, field_name, constraint.lookalike, value) for value, key in members
                )
                continue
            claimed = constraint.claimed_keys(account)
        except InvalidUniqueValue as error:
            return [], [Problem(user.source_id, field_name, INVALID, error.message, line=user.line)]
        keys.extend(Key(constraint.namespace, key, field_name, constraint.lookalike) for key in claimed)
    return keys, []


def providers_by_id() -> dict[str, str]:
    """The site's OpenID Connect providers, ``{id: issuer}`` (``ACCOUNTS_OIDC_PROVIDERS``)."""
    return {
        entry["id"]: entry["issuer"] for entry in app_settings.OIDC_PROVIDERS if "id" in entry and "issuer" in entry
    }
