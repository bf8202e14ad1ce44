"""Several creates in one TransactWriteItems: a bulk import's batches (``accounts_import``).

Each member is a create planned by :func:`~.plans.plan_create`, with every guard a sign-up
sends; a batch sends their actions one after the other, up to DynamoDB's 100 actions, as ONE
request. DynamoDB commits all of them or none, and a cancelled batch's
``CancellationReasons`` are read by position, member by member (:func:`member_outcomes`):

- a member whose account Put failed already exists (the import's account ids are derived
  from the source's rows, so it is this very user, imported by an earlier run) or was
  deleted since (its tombstone holds the id: an id never comes back);
- a member whose lock failed is refused for that value: another account holds it;
- a member with no failed condition did not commit only because another member failed, or
  collided with other traffic: it is sent again at once, in another batch.

:func:`predict_outcomes` reads the same items the guards compare (one consistent
``BatchGetItem``) and answers what sending the batch would, without sending it: a dry run
reports exactly what a real run would, up to the traffic between the two.
"""

import hashlib
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from enum import StrEnum
from typing import Any

from .. import dynamo
from ..exceptions import (
    Busy,
    ItemAlreadyExists,
    OutcomeUnknown,
    TransactionCancelled,
    UniqueViolation,
)
from ..tables.clocks import TTL_ATTRIBUTE, epoch_now, takeover_cutoff
from ..tables.raw import is_tombstone, raw_number
from .actions import ITEM, MAX_ACTIONS, NEW_LOCK, OWNED_ITEM, Action, Transaction, checked_actions
from .running import CONTENDED_REASONS, cancellation_error, run, settle

IMPORT = "import"


class Outcome(StrEnum):
    """What became of one member of a batch."""

    # Written by this batch.
    CREATED = "created"
    # Its account item exists: an earlier run imported it.
    EXISTS = "exists"
    # Its account id holds the tombstone of a deleted account: it is never created again.
    DELETED = "deleted"
    # A value of it is held by another item: ``refusal`` names them.
    TAKEN = "taken"
    # It did not commit with this batch, through no fault of its own: send it again.
    AGAIN = "again"


@dataclass(frozen=True)
class MemberOutcome:
    """The outcome of one member; ``refusal`` is the :class:`UniqueViolation` of a ``TAKEN``
    one (its fields, namespaces and the owners of the locks that refused it)."""

    outcome: Outcome
    refusal: UniqueViolation | None = None


@dataclass
class Batch:
    """Members' creates sent as one request: ``transaction`` is the request, each member's
    actions at ``slices[i]`` of it."""

    transaction: Transaction
    members: list[Transaction]
    slices: list[slice]


def batch_size(members: Sequence[Transaction]) -> int:
    """How many actions ``members`` sent together would be."""
    return sum(len(member.actions) for member in members)


def batch_token(members: Sequence[Transaction], now: int | None) -> str:
    """The ClientRequestToken of a batch: derived from its members' rows (each member's
    account, which its source row derives) and the instant it was planned at, so a resend of
    the same request carries the same token and a request planned again another."""
    digest = hashlib.sha256(f"{IMPORT}\0{now}".encode())
    for member in members:
        digest.update(f"\0{member.actions[0].target[1]}".encode())
    return digest.hexdigest()[:32]


def plan_batch(members: Sequence[Transaction]) -> Batch:
    """The batch sending ``members`` (creates from :func:`~.plans.plan_create`) in one
    request. Each account Put returns the item it finds (``ALL_OLD``), so a refusal says
    whether the id holds the account or its tombstone."""
    members = list(members)

    def build(now: int) -> list[Action]:
        # A new attempt (after contention) plans every member again at the clock then.
        for member in members:
            if member.build is not None:
                member.now = now
                member.actions = member.build(now)
        return merged()

    def merged() -> list[Action]:
        return checked_actions([_returning_old(action) for member in members for action in member.actions])

    # The members were planned just now: sent as they are, the first time.
    now = min((member.now for member in members if member.now is not None), default=epoch_now())
    transaction = Transaction(IMPORT, merged(), now=now, build=build)
    transaction.token = batch_token(members, now)
    slices, start = [], 0
    for member in members:
        slices.append(slice(start, start + len(member.actions)))
        start += len(member.actions)
    return Batch(transaction, members, slices)


def _returning_old(action: Action) -> Action:
    if action.role != ITEM or action.kind != "Put":
        return action
    return Action(action.kind, {**action.body, "ReturnValuesOnConditionCheckFailure": "ALL_OLD"}, *_rest(action))


def _rest(action: Action) -> tuple[Any, ...]:
    return action.role, action.target, action.constraint, action.lock_key


def run_batch(batch: Batch) -> list[MemberOutcome]:
    """Send ``batch`` (transport failures resent with the same token, contention retried as
    :func:`~.running.run` does) and say what became of each member. Raises
    :class:`~accounts.exceptions.OutcomeUnknown` when even resending with the same token
    cannot tell whether it committed, and what :func:`~.running.run` raises for a request
    DynamoDB refuses whole."""
    if len(batch.transaction.actions) > MAX_ACTIONS:
        raise ValueError(f"A batch holds at most {MAX_ACTIONS} actions.")
    try:
        try:
            run(batch.transaction)
        except OutcomeUnknown:
            settle(batch.transaction)
    except TransactionCancelled as error:
        return member_outcomes(batch, error.reasons)
    return [MemberOutcome(Outcome.CREATED) for _ in batch.members]


def member_outcomes(batch: Batch, reasons: Sequence[Mapping[str, Any]]) -> list[MemberOutcome]:
    """Each member's outcome, from a cancelled batch's ``reasons`` read by position."""
    return [
        _member_outcome(member, list(reasons[part])) for member, part in zip(batch.members, batch.slices, strict=True)
    ]


def _member_outcome(member: Transaction, reasons: list[Mapping[str, Any]]) -> MemberOutcome:
    codes = {reason.get("Code", "None") for reason in reasons}
    if codes <= {"None", *CONTENDED_REASONS}:
        return MemberOutcome(Outcome.AGAIN)
    failure = cancellation_error(member, reasons)
    if isinstance(failure, ItemAlreadyExists):
        found = next(
            (
                reason.get("Item")
                for action, reason in zip(member.actions, reasons, strict=False)
                if action.role == ITEM
            ),
            None,
        )
        return MemberOutcome(Outcome.DELETED if found is not None and is_tombstone(found) else Outcome.EXISTS)
    if isinstance(failure, UniqueViolation):
        return MemberOutcome(Outcome.TAKEN, failure)
    if isinstance(failure, Busy):
        return MemberOutcome(Outcome.AGAIN)
    raise failure


def predict_outcomes(batch: Batch) -> list[MemberOutcome]:
    """What :func:`run_batch` would answer for ``batch`` now, without writing: the items its
    conditions compare, read in one consistent ``BatchGetItem``, judged as each guard judges
    them (an account or passkey Put: the key is free; a lock Put: absent, or expired longer
    ago than the clock-skew margin; a lock's ConditionCheck: absent)."""
    guarded = [action for action in batch.transaction.actions if action.role in (ITEM, NEW_LOCK, OWNED_ITEM)]
    guarded_ids = {id(action) for action in guarded}
    keys = [dynamo.key(action.target[1], action.target[2]) for action in guarded]
    found = {(raw["PK"]["S"], raw["SK"]["S"]): raw for raw in dynamo.batch_get(keys)}
    cutoff = takeover_cutoff(batch.transaction.now or 0)
    reasons: list[Mapping[str, Any]] = []
    for action in batch.transaction.actions:
        raw = found.get((action.target[1], action.target[2])) if id(action) in guarded_ids else None
        reasons.append(_predicted_reason(action, raw, cutoff))
    if all(reason["Code"] == "None" for reason in reasons):
        return [MemberOutcome(Outcome.CREATED) for _ in batch.members]
    return member_outcomes(batch, reasons)


def _predicted_reason(action: Action, raw: Mapping[str, Any] | None, cutoff: int) -> Mapping[str, Any]:
    if raw is None:
        return {"Code": "None"}
    if action.role == NEW_LOCK and action.kind == "Put":
        expires = raw_number(raw.get(TTL_ATTRIBUTE))
        if expires is not None and expires < cutoff:
            return {"Code": "None"}
    return {"Code": "ConditionalCheckFailed", "Item": raw}
