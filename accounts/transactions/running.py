"""Running a transaction: sending it, retrying what is safe, and reading its answer.

Retries:

- transport failures (timeouts, resets) resend the SAME ``ClientRequestToken``, so a
  transaction that committed but whose answer was lost is not applied twice;
- ``TransactionConflict`` cancellations are retried a few times with jittered backoff, each
  a new request planned again (a new token, the clock read again: a cancelled transaction
  did not commit), then raise :class:`Busy`; a resend with the same token is the very same
  request (DynamoDB applies a token once only for identical parameters);
- a failed condition is never retried: it is an answer;
- when a request may have been applied and no answer says whether it was (the connection
  broke after sending, or DynamoDB kept answering ``TransactionInProgress``), the outcome is
  unknown: :func:`create`, :func:`change` and :func:`delete` settle it by resending the same
  request with the same token (:func:`settle`), and raise :class:`OutcomeUnknown` only when
  even that cannot tell. "Nothing was written" is said only when it is known.

A cancelled transaction's answer is read by position (:func:`cancellation_error`).
:func:`create`, :func:`change` and :func:`delete` plan a transaction and run it.
"""

import random
import time
from collections.abc import Callable, Iterable, Mapping, Sequence
from typing import Any, TypeVar, cast

import botocore.exceptions
from pynamodb.models import Model

from .. import deadline
from ..exceptions import (
    AccountRefused,
    ActorRefused,
    Busy,
    InvalidTransaction,
    ItemAlreadyExists,
    LastMember,
    OutcomeUnknown,
    OverLimit,
    StaleItem,
    TokenReused,
    TransactionCancelled,
    Unavailable,
    UniqueViolation,
)
from ..tables import Registry
from ..tables.clients import dynamodb_client
from .actions import (
    CREATE,
    KEPT_LOCK,
    LIMIT,
    NEW_LOCK,
    OLD_LOCK,
    OTHER_MEMBER,
    Action,
    Role,
    Transaction,
    leaving,
)
from .plans import changed_copy, keys_after_change, plan_change, plan_create, plan_delete, remember_keys

# The item a create or change is given back as (a project's own model, typed as its class).
ModelT = TypeVar("ModelT", bound=Model)
CONFLICT_ATTEMPTS = 4
TRANSPORT_ATTEMPTS = 3
BACKOFF_BASE_SECONDS = 0.02
# A change or delete re-plans this many times when an old lock turns out to be another
# item's, or changes hands again while we look (each attempt is cancelled, never partial).
LOCK_ATTEMPTS = 4
# Pauses before each resend that settles an unknown outcome (same token, so applied once).
SETTLE_DELAYS = (0.2, 0.5, 1.0)

TRANSPORT_ERRORS = (botocore.exceptions.ConnectionError, botocore.exceptions.HTTPClientError)
# A connection that broke after it was made (read timeout, reset): the request may have
# been received and applied. A ConnectionError (refused, connect timeout) sent nothing.
MAYBE_SENT_ERRORS = (botocore.exceptions.HTTPClientError,)
# Answers that say "not now" without cancelling: resend the same request, same token.
RESEND_CODES = frozenset(
    {
        "TransactionInProgressException",
        "ThrottlingException",
        "ProvisionedThroughputExceededException",
        "RequestLimitExceeded",
        "InternalServerError",
        "ServiceUnavailable",
    }
)
# Answers after which the request may still commit: its outcome is unknown until settled.
AMBIGUOUS_CODES = frozenset({"TransactionInProgressException", "InternalServerError"})
# Cancellation reasons that mean "collided with other traffic", worth another attempt.
CONTENDED_REASONS = frozenset({"TransactionConflict", "ThrottlingError", "ProvisionedThroughputExceeded"})


class LockNotOwned(TransactionCancelled):
    """An old lock this item meant to release (or keep) is not as the request assumed.

    ``keys`` lists them; ``owners`` maps each of those still held by another item to that
    owner (``None``: the lock names nobody). A key in ``keys`` but not in ``owners`` is now
    free or ours, so the next attempt releases it.
    """

    def __init__(
        self, keys: Iterable[str], reasons: Sequence[object] = (), owners: Mapping[str, Any] | None = None
    ) -> None:
        self.keys = frozenset(keys)
        self.owners = dict(owners or {})
        super().__init__(f"Lock(s) not as expected: {', '.join(sorted(self.keys))}", reasons)


def _backoff(attempt: int) -> None:
    # Full jitter: concurrent losers spread out instead of colliding again in step.
    time.sleep(random.uniform(0, BACKOFF_BASE_SECONDS * 2**attempt))


def _lock_owner(reason: Mapping[str, Any]) -> Any:
    """The owner of the lock ``reason`` returned (ALL_OLD): its PK, ``None`` when it names
    nobody, or the raw value of an owner of the wrong type (damage), which a kept lock's
    check then compares as stored."""
    owner = reason.get("Item", {}).get("owner")
    return owner if owner is None or "S" not in owner else owner["S"]


def cancellation_error(
    transaction: Transaction, reasons: Sequence[Mapping[str, Any]]
) -> TransactionCancelled | InvalidTransaction:
    """The exception for a cancelled ``transaction``, reading ``reasons`` by position."""
    item_failed = False
    collided: set[str] = set()
    owners: dict[str, Any] = {}
    namespaces: dict[str, set[str]] = {}
    values: dict[str, set[Any]] = {}
    not_owned: dict[str, tuple[bool, Any]] = {}
    contended, other = False, []
    over_limit: list[Any] = []
    members_gone: list[str] = []
    account_refused = actor_refused = False
    me = _owner_of_transaction(transaction)
    # DynamoDB answers one reason per action; a short answer leaves the rest unread.
    for action, reason in zip(transaction.actions, reasons, strict=False):
        code = reason.get("Code", "None")
        if code == "None":
            continue
        if code == "ConditionalCheckFailed":
            if action.role == NEW_LOCK:
                collided.update(action.constraint.fields)
                owners.update(dict.fromkeys(action.constraint.fields, _lock_owner(reason)))
                for name in action.constraint.fields:
                    namespaces.setdefault(name, set()).add(action.constraint.namespace)
                    if action.value is not None:
                        # Which value is taken: an element of a set names itself.
                        values.setdefault(name, set()).add(action.value)
            elif action.role in (OLD_LOCK, KEPT_LOCK):
                # ALL_OLD returns the lock as it is; no Item means it is gone.
                # Every release and kept lock's check names its lock (see actions.lock_action).
                not_owned[cast(str, action.lock_key)] = (reason.get("Item") is not None, _lock_owner(reason))
            elif action.role == LIMIT:
                over_limit.append(reason.get("Item"))
            elif action.role == OTHER_MEMBER:
                # The other member checked left its registry since the registry was read.
                members_gone.append(action.target[1])
            elif action.role == Role.ACCOUNT_ACTIVE:
                # The account a session is written for was deactivated or deleted meanwhile.
                account_refused = True
            elif action.role == Role.ACTOR:
                # The staff member changing a superuser's account lost their own flags meanwhile.
                actor_refused = True
            else:
                # The item, or a lock it keeps, is not as read (HELD_LOCK: not ours any more).
                item_failed = True
        elif code in CONTENDED_REASONS:
            contended = True
        else:
            other.append(code)
    if over_limit:
        # Over the limit, the answer must not say whether anything else would have passed.
        return OverLimit("A rate limit checked by the transaction is reached.", reasons, filter(None, over_limit))
    if actor_refused:
        return ActorRefused("The staff member acting is no longer an active staff superuser.", reasons)
    if account_refused:
        return AccountRefused("The account is no longer there or active as read.", reasons)
    if item_failed:
        if transaction.operation == CREATE:
            return ItemAlreadyExists("The item's key already exists.", reasons)
        return StaleItem("The item changed or was deleted since it was read.", reasons)
    if collided:
        return UniqueViolation(collided, owners, reasons, namespaces, values)
    if not_owned:
        held = {key: owner for key, (exists, owner) in not_owned.items() if exists and owner != me}
        return LockNotOwned(not_owned, reasons, held)
    if members_gone:
        return LastMember("The other member checked has left the registry.", reasons, members_gone[0])
    if contended:
        return Busy("Other transactions on the same items kept conflicting; nothing was written.", reasons)
    return InvalidTransaction(f"DynamoDB rejected the transaction: {', '.join(other) or 'no reason given'}")


def _is_own_replay(transaction: Transaction, error: Exception) -> bool:
    """After a lost answer, is ``error`` just our own earlier attempt having committed?"""
    if transaction.operation != CREATE or not isinstance(error, ItemAlreadyExists):
        return False
    me = _owner_of_transaction(transaction)
    for action, reason in zip(transaction.actions, error.reasons, strict=False):
        failed = action.role == NEW_LOCK and reason.get("Code") == "ConditionalCheckFailed"
        if failed and _lock_owner(reason) != me:
            return False
    return True


def _owner_of_transaction(transaction: Transaction) -> Any:
    return transaction.actions[0].target[1]


def run(transaction: Transaction) -> None:
    """Send ``transaction``; retry what is safe to retry; raise a precise error otherwise.

    Raises :class:`UniqueViolation`, :class:`ItemAlreadyExists`, :class:`StaleItem`,
    :class:`LockNotOwned`, :class:`Busy`, :class:`Unavailable` (nothing was sent),
    :class:`OutcomeUnknown` (it was sent and may have been applied), :class:`TokenReused` or
    :class:`InvalidTransaction`.
    """
    request = transaction.request()
    conflicts = resends = 0
    # Whether the request with the current token may have been applied, unanswered.
    maybe_applied = False
    while True:
        try:
            dynamodb_client().transact_write_items(**request)
            deadline.note_saved()
            return
        except deadline.DeadlinePassed as error:
            if maybe_applied:
                raise _unknown(transaction, f"no answer before the request deadline ({error})") from error
            raise
        except TRANSPORT_ERRORS as error:
            maybe_applied = maybe_applied or isinstance(error, MAYBE_SENT_ERRORS)
            resends += 1
            if resends >= TRANSPORT_ATTEMPTS:
                if maybe_applied:
                    raise _unknown(transaction, f"the connection broke after sending ({error})") from error
                raise Unavailable(f"DynamoDB could not be reached: {error}") from error
        except botocore.exceptions.ClientError as error:
            code = error.response.get("Error", {}).get("Code")
            if code == "TransactionCanceledException":
                failure = cancellation_error(transaction, error.response.get("CancellationReasons", []))
                if resends and _is_own_replay(transaction, failure):
                    deadline.note_saved()
                    return
                if not isinstance(failure, Busy):
                    raise failure from error
                conflicts += 1
                if conflicts >= CONFLICT_ATTEMPTS:
                    raise failure from error
                # The cancelled attempt did not commit (with its token, a committed request
                # is answered with success): after the pause, the retry is a new request,
                # planned again at this server's clock then (never an old :now).
                _backoff(conflicts)
                transaction.replan()
                request = transaction.request()
                maybe_applied = False
                continue
            if code in RESEND_CODES:
                maybe_applied = maybe_applied or code in AMBIGUOUS_CODES
                resends += 1
                if resends >= TRANSPORT_ATTEMPTS:
                    if maybe_applied:
                        raise _unknown(transaction, f"DynamoDB answered {code}") from error
                    raise Busy(f"DynamoDB is busy ({code}); nothing was written.") from error
            elif code == "IdempotentParameterMismatchException":
                raise TokenReused(f"Token {transaction.token} was used for a different request.") from error
            elif code == "ResourceNotFoundException":
                raise Unavailable(f"The table is missing: {error}") from error
            elif code == "ValidationException":
                raise InvalidTransaction(str(error)) from error
            else:
                raise
        _backoff(resends)


def _unknown(transaction: Transaction, why: str) -> OutcomeUnknown:
    return OutcomeUnknown(
        f"The {transaction.operation} may or may not have been written: {why}. "
        f"Resending it with token {transaction.token} within 10 minutes settles it.",
        transaction.token,
    )


def settle(transaction: Transaction, delays: Iterable[float] | None = None) -> None:
    """Find out whether ``transaction``, whose outcome was unknown, committed; apply it if not.

    Resends the same request with the same ``ClientRequestToken`` after each of ``delays``
    (default :data:`SETTLE_DELAYS`, read when called):
    DynamoDB answers a request it already applied (within 10 minutes) with success without
    applying it again, and still evaluates one it never received. So a return means it is
    applied exactly once; a cancellation error means it was not applied and now will not
    be; :class:`OutcomeUnknown` means even the resends could not tell.
    """
    for delay in SETTLE_DELAYS if delays is None else delays:
        left = deadline.remaining()
        if left is not None and left <= delay:
            # The request's deadline leaves no room to wait and resend: say it is unknown now.
            break
        time.sleep(delay)
        try:
            return run(transaction)
        except OutcomeUnknown:
            continue
        except Unavailable:
            # Nothing reached DynamoDB this time: the first attempt is still in doubt.
            continue
    raise _unknown(transaction, "resending with the same token got no answer either")


def _run_settled(transaction: Transaction) -> None:
    try:
        run(transaction)
    except OutcomeUnknown:
        settle(transaction)


def another_member(registry: Registry, model: type[Model], pk: str) -> str | None:
    """The PK of a member of ``registry`` other than ``pk``, or ``None`` when it lists
    none: one consistent ``Query`` of its partition (two entries at most: ``pk``'s own is
    one of them when it has one)."""
    try:
        answer = dynamodb_client().query(
            TableName=model.Meta.table_name,
            KeyConditionExpression="PK = :partition",
            ExpressionAttributeValues={":partition": {"S": registry.partition}},
            ProjectionExpression="SK",
            ConsistentRead=True,
            Limit=2,
        )
    except TRANSPORT_ERRORS as error:
        raise Unavailable(f"DynamoDB could not be reached: {error}") from error
    except botocore.exceptions.ClientError as error:
        code = error.response.get("Error", {}).get("Code")
        if code in RESEND_CODES:
            raise Unavailable(f"DynamoDB answered {code}") from error
        raise
    return next((entry["SK"]["S"] for entry in answer.get("Items", ()) if entry["SK"]["S"] != pk), None)


def other_members(before: Model, after: Model | None) -> dict[str, str | None]:
    """``{registry partition: another member's PK or None}`` for each registry a write of
    an item from ``before`` (as read) to ``after`` (``None``: deleted) takes it out of: the
    members the transaction checks (see :func:`~.plans.plan_change`)."""
    pk = _owner_of_item(before)
    return {registry.partition: another_member(registry, type(before), pk) for registry in leaving(before, after)}


def _is_member(item: Model) -> bool:
    # Only a member can leave a registry: the others need no Query (and no copy of the item).
    return any(registry.includes(item) for registry in getattr(type(item), "registries", ()))


def _owner_of_item(item: Model) -> Any:
    return getattr(item, str(type(item)._hash_keyname))


def _run_releasing_old_locks(
    plan: Callable[[dict[str, Any], dict[str, str | None], str | None], Transaction],
    token: str | None,
    before: Model | None = None,
    after: Model | None = None,
) -> None:
    """Run the transaction ``plan(keep_locks, others, token)`` builds, re-planning when an
    old lock is not as assumed: held by another item (keep it, checked), or, after that,
    gone or handed back to us (release it after all); and when the other member of a
    registry the item leaves (``before`` -> ``after``, see :func:`other_members`) left it
    meanwhile: the registry is read again, and with no other member left the answer is
    :class:`LastMember`. Every attempt but the last was cancelled, so only the first
    carries the caller's ``token``; each re-plan is a new request."""
    keep_locks: dict[str, Any] = {}
    for _ in range(LOCK_ATTEMPTS):
        others = {}
        if before is not None:
            others = other_members(before, after)
            for partition, other in others.items():
                if other is None:
                    message = f"No member of {partition} but {_owner_of_item(before)}: nothing was sent."
                    raise LastMember(message, registry=partition)
        try:
            return _run_settled(plan(keep_locks, others, token))
        except LockNotOwned as error:
            for key in error.keys:
                if key in error.owners:
                    keep_locks[key] = error.owners[key]
                else:
                    keep_locks.pop(key, None)
        except LastMember:
            if not others:
                raise
        token = None
    raise Busy("The old value's lock or the registry kept changing; nothing was written.")


def create(item: ModelT, *, token: str | None = None, check_unheld: bool = True, also: Sequence[Action] = ()) -> ModelT:
    """Create ``item`` and its locks in one transaction (with ``also``, actions on items it
    owns, see :func:`plan_create`). Returns ``item``.

    ``check_unheld``: see :func:`~.plans.plan_create`. Raises :class:`OutcomeUnknown` when
    resending with the same token could not tell whether it was written.
    """
    _run_settled(plan_create(item, token=token, check_unheld=check_unheld, also=also))
    return item


def change(
    item: ModelT,
    changes: Mapping[str, Any],
    *,
    token: str | None = None,
    unheld: Iterable[tuple[Any, str]] = (),
    also: Sequence[Action] = (),
    as_read: Iterable[str] = (),
) -> ModelT:
    """Apply ``changes`` to ``item`` and move its locks in one transaction.

    ``item`` must be as read from the table; on success it carries the new values.
    ``unheld``: lock keys that must be free; ``also``: actions on items it owns, sent in the
    same transaction; ``as_read``: attributes kept but guarded as read; see :func:`plan_change`.
    Raises :class:`StaleItem` when the item changed since it was read. An old lock held by
    another item is not released but checked, in the same transaction, to still be that
    item's (see :func:`plan_change`); if it moved meanwhile, the change is planned again.
    """
    moved = keys_after_change(item, changes)
    _run_releasing_old_locks(
        lambda keep, others, token: plan_change(
            item, changes, token=token, keep_locks=keep, unheld=unheld, also=also, others=others, as_read=as_read
        ),
        token,
        *((item, changed_copy(item, changes)) if _is_member(item) else ()),
    )
    for name, value in changes.items():
        setattr(item, name, value)
    remember_keys(item, moved)
    return item


def delete(item: Model, *, token: str | None = None, also: Sequence[Action] = (), as_read: Iterable[str] = ()) -> None:
    """Delete ``item`` and release its locks in one transaction; never another item's lock
    (checked to still be that item's, as in :func:`change`). ``also`` and ``as_read``: as
    :func:`change`'s."""
    _run_releasing_old_locks(
        lambda keep, others, token: plan_delete(
            item, token=token, keep_locks=keep, others=others, also=also, as_read=as_read
        ),
        token,
        *((item,) if _is_member(item) else ()),
    )
