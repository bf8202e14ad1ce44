"""An account's several addresses (``ACCOUNTS_MAX_EMAIL_ADDRESSES`` above 1), each change ONE
transaction through the engine.

The primary address is the account's ``email``, as it always was (its lock, its look-alike
rules, its verification). The others are two sets of the account item:

- ``email_addresses``, the verified ones: a set-valued unique constraint in the email's own
  namespace (:func:`accounts.tables.address_constraints`), so each holds a lock
  ``UNIQ#EMAIL#<key>`` naming the account, as the primary does, and an address is held once,
  by one account, primary or not; the account records each one's key (``lock_keys``);
- ``unverified_emails``, those added and waiting for the link mailed to them: they hold no
  lock, as an email change waiting for its link holds none (only a proven mailbox holds an
  address). Adding one checks that no account holds it (unless
  ``ACCOUNTS_PREVENT_ENUMERATION``); opening its link Puts its lock, or is refused when
  another account verified it first.

Every change is guarded by the sets as read, so two tabs (or a person and staff) never lose
each other's change, and the size of the sets as read is the size in the table: the bound
``ACCOUNTS_MAX_EMAIL_ADDRESSES`` (primary included) is checked on the item as read, and the
guard keeps it true. Refusals before anything is sent raise :class:`AddressRefused`; the
engine's (another account holds it, the account changed) are its own exceptions.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from . import signals, store, timeline, transactions
from .app_settings import app_settings
from .exceptions import InvalidUniqueValue
from .tables import ADDRESSES_FIELD, Account

UNVERIFIED_FIELD = "unverified_emails"

# Why a request about an address is refused before anything is sent (django-allauth's codes).
DUPLICATE = "duplicate_email"  # the account has it already (in any spelling)
TOO_MANY = "max_email_addresses"  # the account has ACCOUNTS_MAX_EMAIL_ADDRESSES already
UNKNOWN = "unknown_email"  # not an address of the account
PRIMARY = "cannot_remove_primary_email"  # the primary address is never removed
UNVERIFIED = "unverified_primary_email"  # only a verified address becomes primary
LAST_VERIFIED = "last_verified_email"  # the account's only verified address, and no other way in
ACCOUNT_UNVERIFIED = "account_unverified"  # an account not verified yet adds no address


class AddressRefused(Exception):
    """A request about an address refused before anything was sent: ``code`` says why
    (:data:`DUPLICATE`, :data:`TOO_MANY`, :data:`UNKNOWN`, :data:`PRIMARY`,
    :data:`UNVERIFIED`, :data:`LAST_VERIFIED`, :data:`ACCOUNT_UNVERIFIED`)."""

    def __init__(self, code: str, email: str = "") -> None:
        self.code = code
        self.email = email
        super().__init__(f"{code}: {email}")


@dataclass(frozen=True)
class Address:
    """One address of an account, as its pages and the API list it."""

    email: str
    primary: bool
    verified: bool


def enabled() -> bool:
    """Whether accounts may have several addresses (``ACCOUNTS_MAX_EMAIL_ADDRESSES`` above 1)."""
    return app_settings.MAX_EMAIL_ADDRESSES > 1


def addresses_of(account: Account) -> list[Address]:
    """Every address of ``account``: the primary first, then the other verified ones, then
    those waiting for their link, each group in alphabetical order."""
    listed = [Address(account.email, True, store.is_verified(account))]
    listed += [Address(email, False, True) for email in sorted(_verified_others(account))]
    listed += [Address(email, False, False) for email in sorted(_unverified(account))]
    return listed


def verified_addresses(account: Account) -> list[str]:
    """The addresses of ``account`` proven to be its own: where its security notices go."""
    return [address.email for address in addresses_of(account) if address.verified]


def find(account: Account, email: str) -> Address | None:
    """The address of ``account`` that ``email`` spells (any case, width or IDNA spelling of
    the domain: the same lock key), as the account holds it, or ``None``."""
    key = _key(email)
    if key is None:
        return None
    for address in addresses_of(account):
        if _key(address.email) == key:
            return address
    return None


def held_address(account: Account, email: str) -> str | None:
    """The verified address of ``account`` that ``email`` spells, as the account holds it
    (where mail for it goes), or ``None``: what a login, a password reset or a login code
    typed with an address matched."""
    found = find(account, email)
    return found.email if found is not None and found.verified else None


def _key(email: str) -> str | None:
    try:
        return store.constraint_for("email").key_for(email)
    except InvalidUniqueValue:
        return None


def _verified_others(account: Account) -> set[str]:
    return set(getattr(account, ADDRESSES_FIELD, None) or ())


def _unverified(account: Account) -> set[str]:
    return set(getattr(account, UNVERIFIED_FIELD, None) or ())


def _or_none(values: set[str]) -> set[str] | None:
    # DynamoDB holds no empty set: an empty one is removed.
    return values or None


def check_room(account: Account, email: str) -> None:
    """Raise :class:`AddressRefused` unless ``account`` (as read) may add ``email``: verified,
    without that address in any spelling, and below ``ACCOUNTS_MAX_EMAIL_ADDRESSES``."""
    if not store.is_verified(account):
        raise AddressRefused(ACCOUNT_UNVERIFIED, email)
    if find(account, email) is not None:
        raise AddressRefused(DUPLICATE, email)
    if len(addresses_of(account)) >= app_settings.MAX_EMAIL_ADDRESSES:
        raise AddressRefused(TOO_MANY, email)


@dataclass(frozen=True)
class AddressChange:
    """What one change of an account's addresses sends through
    :func:`accounts.store.update_account`: its ``changes``, the attributes it keeps but
    guards as read (``as_read``), and the locks that must be free (``unheld``). Built from
    the account as read; ``accounts_explain`` shows the transaction it makes."""

    changes: dict[str, Any]
    as_read: tuple[str, ...] = ()
    unheld: tuple[tuple[Any, str], ...] = ()


def adding(account: Account, email: str) -> AddressChange:
    """Adding ``email`` to ``account`` (as read), waiting for its link: the set of those
    waiting grows, guarded as read, and the address's lock must be free (unless
    ``ACCOUNTS_PREVENT_ENUMERATION``). The bound counts every address as read: no other
    change adds one without changing that set (a verification moves one out of it, a
    removal only takes away), so its guard keeps the count. Raises :class:`AddressRefused`
    (:func:`check_room`)."""
    check_room(account, email)
    constraint = store.constraint_for("email")
    unheld = ((constraint, constraint.key_for(email)),) if store.refuses_registered_addresses() else ()
    return AddressChange({UNVERIFIED_FIELD: _unverified(account) | {email}}, (), unheld)


def verifying(account: Account, email: str) -> AddressChange:
    """Verifying ``email``, waiting for its link: it moves to the verified ones (whose
    constraint Puts its lock). Raises :class:`AddressRefused` (:data:`UNKNOWN`)."""
    if email not in _unverified(account):
        raise AddressRefused(UNKNOWN, email)
    others = {UNVERIFIED_FIELD: _or_none(_unverified(account) - {email})}
    return AddressChange({**others, ADDRESSES_FIELD: _verified_others(account) | {email}})


def removing(account: Account, email: str) -> tuple[Address, AddressChange]:
    """Removing ``email``: ``(the address, the change)``; a verified one's lock is released
    by its constraint. The primary and whether it is verified are guarded as read (the
    rule of the last verified address reads them). Raises :class:`AddressRefused`
    (:func:`removable`)."""
    found = removable(account, email)
    field = ADDRESSES_FIELD if found.verified else UNVERIFIED_FIELD
    left = (_verified_others if found.verified else _unverified)(account) - {found.email}
    return found, AddressChange({field: _or_none(left)}, ("email", "email_verified"))


def making_primary(account: Account, email: str) -> tuple[Address, AddressChange | None]:
    """Making ``email`` primary: ``(the address, the change)``, no change when it is the
    primary already. Raises :class:`AddressRefused` (:data:`UNKNOWN`, :data:`UNVERIFIED`)."""
    found = find(account, email)
    if found is None:
        raise AddressRefused(UNKNOWN, email)
    if not found.verified:
        raise AddressRefused(UNVERIFIED, found.email)
    if found.primary:
        return found, None
    others = _verified_others(account) - {found.email}
    changes: dict[str, Any] = {"email": found.email, **store.email_change_cancellation(account)}
    if store.is_verified(account):
        changes[ADDRESSES_FIELD] = others | {account.email}
    else:
        # Staff left the old primary unverified: it goes back to waiting for its link.
        changes.update({ADDRESSES_FIELD: _or_none(others), UNVERIFIED_FIELD: _unverified(account) | {account.email}})
        changes["email_verified"] = True
    return found, AddressChange(changes)


def _send(
    account: Account,
    change: AddressChange,
    *,
    token: str | None = None,
    also: Sequence[transactions.Action] = (),
    origin: timeline.Origin = timeline.NO_ORIGIN,
) -> None:
    store.update_account(
        account, unheld=change.unheld, also=also, token=token, origin=origin, as_read=change.as_read, **change.changes
    )


def add_unverified(
    account: Account,
    email: str,
    *,
    token: str | None = None,
    also: Sequence[transactions.Action] = (),
    origin: timeline.Origin = timeline.NO_ORIGIN,
) -> Account:
    """Add ``email`` to ``account`` (as read) as an address waiting for its link, in ONE
    transaction: ``Update account SET unverified_emails [unverified_emails and updated as
    read]`` and ``ConditionCheck email lock [attribute_not_exists(PK)]``, so an
    address another account holds is refused now (:class:`~accounts.exceptions.UniqueViolation`
    on ``email``). With ``ACCOUNTS_PREVENT_ENUMERATION`` the check is not sent: the address is
    added all the same, and its verification's lock Put is what refuses it. Refusals before
    sending: :func:`check_room`. ``token``, ``also``, ``origin``: as
    :func:`accounts.store.update_account`."""
    _send(account, adding(account, email), token=token, also=also, origin=origin)
    return account


def verify(
    account: Account,
    email: str,
    *,
    also: Sequence[transactions.Action] = (),
    origin: timeline.Origin = timeline.NO_ORIGIN,
) -> Account:
    """Verify ``email``, an address of ``account`` (as read) waiting for its link: ONE
    transaction moves it from ``unverified_emails`` to ``email_addresses`` (both as read)
    and Puts its lock ``[attribute_not_exists(PK) OR expires < :now - margin]``, recorded in
    ``lock_keys``; ``also``: more actions of that transaction (a code's checks). Raises :class:`~accounts.exceptions.UniqueViolation` (``email_addresses``,
    naming the address) when another account holds it (it verified it first),
    :class:`~accounts.exceptions.StaleItem` when the account changed since it was read, and
    :class:`AddressRefused` (:data:`UNKNOWN`) before sending when it is not waiting."""
    _send(account, verifying(account, email), also=also, origin=origin)
    signals.email_verified.send(sender=type(account), account=account)
    return account


def removable(account: Account, email: str) -> Address:
    """The address of ``account`` that ``email`` spells, if it may be removed; else
    :class:`AddressRefused`: unknown, the primary (:data:`PRIMARY`), or the account's only
    verified address while it has no other way in (:data:`LAST_VERIFIED`: the primary is
    unverified, as staff may set it; a verified primary is always another way in)."""
    found = find(account, email)
    if found is None:
        raise AddressRefused(UNKNOWN, email)
    if found.primary:
        raise AddressRefused(PRIMARY, found.email)
    if found.verified and verified_addresses(account) == [found.email]:
        raise AddressRefused(LAST_VERIFIED, found.email)
    return found


def remove(account: Account, email: str, *, origin: timeline.Origin = timeline.NO_ORIGIN) -> Address:
    """Remove ``email`` from ``account`` (as read) in ONE transaction, and free it at once:
    a verified one's lock is deleted in that transaction (``owner = me OR
    attribute_not_exists(PK)``). Guarded by the sets, the primary and whether it is verified
    as read, so a make-primary or a staff change landing first cancels it
    (:class:`~accounts.exceptions.StaleItem`). Refusals before sending: :func:`removable`.
    Returns the address removed."""
    found, change = removing(account, email)
    _send(account, change, origin=origin)
    return found


def make_primary(account: Account, email: str, *, origin: timeline.Origin = timeline.NO_ORIGIN) -> Account:
    """Make ``email``, a verified address of ``account`` (as read), its primary ``email``, in
    ONE transaction guarded by both as read: ``Update account SET email, email_addresses
    [email, email_verified, email_addresses as read]``. No lock moves: the address was held
    in the email's namespace and still is, and so is the old primary, now one of the others
    (an old primary that staff left unverified goes back to waiting for its link, and the
    account is verified by the new one). A pending email change is cancelled with it.
    Raises :class:`AddressRefused` (:data:`UNKNOWN`, :data:`UNVERIFIED`) before sending."""
    old = account.email
    found, change = making_primary(account, email)
    if change is None:
        return account
    _send(account, change, origin=origin)
    signals.email_changed.send(sender=type(account), account=account, old_email=old, new_email=found.email)
    return account
