"""An account's phone number in the table, each change ONE guarded transaction through
:func:`accounts.store.update_account` (the engine moves the ``PHONE`` lock: the number's
constraint is partial on ``phone_verified``, so only a verified number holds its lock)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from .. import lookups, store, timeline
from ..exceptions import InvalidUniqueValue
from ..tables import ACCOUNT_PREFIX, Account, get_account_model
from ..transactions import Action

FIELD = "phone"


def read_account(account_id: str) -> Account | None:
    """The account a code was sent for, as its verification reads it (one consistent GetItem)."""
    return store.get_account(account_id)


def get_by_phone(phone: str) -> Account | None:
    """The account whose verified number is ``phone`` (any notation), or ``None``: a
    consistent GetItem of its lock, then of its owner. An unverified number names nobody."""
    try:
        account: Account | None = lookups.get_by_unique(get_account_model(), store.constraint_for(FIELD), phone)
    except InvalidUniqueValue:
        return None
    return account


def owner_id(phone: str) -> str | None:
    """The id of the account whose lock holds ``phone`` (one consistent GetItem of the lock),
    or ``None``. It chooses which text a number gets, never whether it is taken."""
    try:
        key = store.constraint_for(FIELD).key_for(phone)
    except InvalidUniqueValue:
        return None
    owner = lookups.lock_owner(get_account_model(), key)
    return owner.removeprefix(ACCOUNT_PREFIX) if owner and owner.startswith(ACCOUNT_PREFIX) else None


def verify(
    account: Account,
    phone: str,
    *,
    also: Sequence[Action] = (),
    origin: timeline.Origin = timeline.NO_ORIGIN,
) -> Account:
    """Make ``phone`` the account's verified number, ``account`` as read, in ONE transaction:
    ``Update account SET phone, phone_verified [phone, phone_verified, password and updated
    as read]``, ``Put UNIQ#PHONE#<phone> [attribute_not_exists(PK) OR expires < :now -
    margin]``, and, when it had another verified number, ``Delete`` its lock ``[owner = me OR
    attribute_not_exists(PK)]``: the old number is released by the very write that gives the
    account the new one, never before. ``also``: the checks of the code's tries
    (:meth:`accounts.ratelimit.Guess.conditions`). Raises
    :class:`~accounts.exceptions.UniqueViolation` (``phone``) when another account verified
    the number first, :class:`~accounts.exceptions.StaleItem` when the account changed since
    it was read (its number, or its password), :class:`~accounts.exceptions.OverLimit`."""
    update: Any = store.update_account
    return update(  # type: ignore[no-any-return]
        account, phone=phone, phone_verified=True, as_read=("password",), also=also, origin=origin
    )


def set_unverified(account: Account, phone: str, *, origin: timeline.Origin = timeline.NO_ORIGIN) -> Account:
    """Give ``account`` the number ``phone``, unverified (a sign-up's number, changed before
    its code was typed): ONE transaction, which releases the lock of a verified number it
    had and checks that no verified account holds ``phone`` (``ConditionCheck
    [attribute_not_exists(PK)]``), else :class:`~accounts.exceptions.UniqueViolation`."""
    update: Any = store.update_account
    return update(account, phone=phone, phone_verified=False, origin=origin)  # type: ignore[no-any-return]


def remove(account: Account, *, origin: timeline.Origin = timeline.NO_ORIGIN) -> Account:
    """Take the number off ``account``, as read, and release its lock, in ONE transaction
    (``Update account REMOVE phone, phone_verified [as read]``, ``Delete`` its lock ``[owner =
    me OR attribute_not_exists(PK)]``): the number is free at once."""
    update: Any = store.update_account
    return update(account, phone=None, phone_verified=None, origin=origin)  # type: ignore[no-any-return]


def set_phone(account: Account, phone: str, verified: bool, *, origin: timeline.Origin = timeline.NO_ORIGIN) -> Account:
    """Store ``phone`` as ``account``'s number, verified or not (django-allauth's adapter
    ``set_phone``: for a host's own code, a command, an import), in ONE transaction that
    moves the lock as :func:`verify` and :func:`set_unverified` do."""
    if verified:
        return verify(account, phone, origin=origin)
    return set_unverified(account, phone, origin=origin)


def is_verified(account: Account) -> bool:
    """Whether ``account`` has a number and holds its lock: its code was typed back. As the
    constraint reads it, an absent flag counts as verified (a number written before the flag
    existed, under a project's own declaration of ``phone``, keeps the lock it had)."""
    return bool(account.phone) and account.phone_verified is not False
