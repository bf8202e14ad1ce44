"""The one place that builds and runs TransactWriteItems requests.

Every create, change and delete of an item with unique constraints is ONE transaction:
the item's own action plus a guarded action per lock item. The request is built here in
the order it is sent, so position ``i`` of DynamoDB's ``CancellationReasons`` is action
``i`` of :attr:`Transaction.actions`, and each failure maps back to the fields it concerns.

Expiry: an item whose ``expires`` (the table's TTL attribute) has passed is ABSENT, though
DynamoDB may keep it for days. So every lock Put is guarded by ``attribute_not_exists(PK)
OR expires < :now`` (an expired lock may be taken over), a lock Put for an item that expires
carries the item's ``expires``, and every guard on an item as read adds ``expires > :now``
when the item expires (an expired item cannot be changed, verified or deleted).

Partial constraints (the email): an item the constraint leaves out (an unverified account)
holds no lock; its create or change sends a ``ConditionCheck attribute_not_exists(PK)`` on
the lock key instead, so a value another item holds is refused by position like a Put.

Retries:

- transport failures (timeouts, resets) resend the SAME ``ClientRequestToken``, so a
  transaction that committed but whose answer was lost is not applied twice;
- ``TransactionConflict`` cancellations are retried a few times with jittered backoff and a
  new token (a cancelled transaction did not commit), then raise :class:`Busy`;
- a failed condition is never retried: it is an answer;
- when a request may have been applied and no answer says whether it was (the connection
  broke after sending, or DynamoDB kept answering ``TransactionInProgress``), the outcome is
  unknown: :func:`create`, :func:`change` and :func:`delete` settle it by resending the same
  request with the same token (:func:`settle`), and raise :class:`OutcomeUnknown` only when
  even that cannot tell. "Nothing was written" is said only when it is known.

Invariants the transactions keep (the audit's findings are their violations):

- **I1** each lock key has at most one live owner: every new lock is a Put guarded by
  ``attribute_not_exists(PK)``;
- **I2** every value a live item holds under a declared constraint is locked by that item:
  the item's write and its lock Puts are one transaction, and a change is guarded by every
  attribute its keys are built from, as read;
- **I3** once activity stops, no lock is left without a live owner holding its value: old
  locks are deleted in the same transaction (only if ours), and a lock found to be another
  item's is kept only while a ConditionCheck proves it still is.
"""

import functools
import json
import random
import time
import uuid
from dataclasses import dataclass, field
from functools import reduce

import botocore.exceptions

from . import deadline
from .exceptions import (
    Busy,
    InvalidTransaction,
    InvalidUniqueValue,
    ItemAlreadyExists,
    OutcomeUnknown,
    StaleItem,
    TokenReused,
    TransactionCancelled,
    Unavailable,
    UniqueViolation,
)
from .tables import TTL_ATTRIBUTE, dynamodb_client, epoch_now, lock_model_for
from .uniqueness import LOCK_SORT_KEY, constraints_of

MAX_ACTIONS = 100
MAX_TOKEN_LENGTH = 36
CONFLICT_ATTEMPTS = 4
TRANSPORT_ATTEMPTS = 3
BACKOFF_BASE_SECONDS = 0.02
# A change or delete re-plans this many times when an old lock turns out to be another
# item's, or changes hands again while we look (each attempt is cancelled, never partial).
LOCK_ATTEMPTS = 4
# Pauses before each resend that settles an unknown outcome (same token, so applied once).
SETTLE_DELAYS = (0.2, 0.5, 1.0)

CREATE, CHANGE, DELETE, REPAIR, COUNT = "create", "change", "delete", "repair", "count"
# NEW_LOCK: a lock Put (or the ConditionCheck of a partial constraint's value) that fails
# when another item holds the value; OLD_LOCK: a release; HELD_LOCK: a lock the item keeps,
# updated with it (it stops expiring), guarded by ``owner = me``.
ITEM, NEW_LOCK, OLD_LOCK, HELD_LOCK = "item", "new_lock", "old_lock", "held_lock"
# A ConditionCheck that an old lock we do not release still names the other item.
KEPT_LOCK = "kept_lock"
# Roles in a repair: the lock being fixed, and ConditionChecks on the accounts involved.
# Any failed condition of a repair means the table moved since it was read: StaleItem.
REPAIRED_LOCK, HOLDER_CHECK = "repaired_lock", "holder_check"

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

    def __init__(self, keys, reasons=(), owners=None):
        self.keys = frozenset(keys)
        self.owners = dict(owners or {})
        super().__init__(f"Lock(s) not as expected: {', '.join(sorted(self.keys))}", reasons)


@dataclass(frozen=True)
class Action:
    """One entry of ``TransactItems``, with what it means to the engine."""

    kind: str  # "Put", "Update", "Delete" or "ConditionCheck"
    body: dict
    role: str  # ITEM, NEW_LOCK or OLD_LOCK
    target: tuple  # (table, partition key, sort key): DynamoDB allows one action per item
    constraint: object = None
    lock_key: str = None


@dataclass
class Transaction:
    """A TransactWriteItems request, ready to send (or to show, see :func:`explain`)."""

    operation: str
    actions: list
    token: str = field(default_factory=lambda: uuid.uuid4().hex)

    def request(self):
        """The exact parameters of the TransactWriteItems call, as the AWS CLI takes them."""
        return {
            "TransactItems": [{action.kind: action.body} for action in self.actions],
            "ClientRequestToken": self.token,
        }


def _key_target(item):
    model = type(item)
    range_name = model._range_keyname
    return (
        model.Meta.table_name,
        getattr(item, model._hash_keyname),
        getattr(item, range_name) if range_name else None,
    )


def _owner(item):
    return getattr(item, type(item)._hash_keyname)


@functools.lru_cache(maxsize=64)
def _not_exists_guard(model):
    """``attribute_not_exists(<hash key>)`` as PynamoDB serializes it, with its names.

    It depends on the model only, so it is serialized once per model.
    """
    names = {}
    expression = model._hash_key_attribute().does_not_exist().serialize(names, {})
    return expression, {placeholder: name for name, placeholder in names.items()}


def _guarded_put(item):
    """The Put of ``item`` guarded by ``attribute_not_exists(<hash key>)``.

    The same request as PynamoDB's ``get_save_kwargs_from_instance(condition=...)``, in
    half the time (measured on an account: 42 -> 22 us): PynamoDB builds and serializes the
    same condition again, and maps every attribute once more, on each call.
    """
    model = type(item)
    if model._version_attribute_name is not None:
        # PynamoDB bumps the version and adds its own condition: let it combine the two.
        return item.get_save_kwargs_from_instance(condition=model._hash_key_attribute().does_not_exist())
    attributes = item.serialize(null_check=True)
    keys = [model._hash_key_attribute(), model._range_key_attribute()]
    # Keys first, as PynamoDB orders them.
    keyed = {attribute.attr_name: attributes.pop(attribute.attr_name) for attribute in keys if attribute is not None}
    expression, names = _not_exists_guard(model)
    return {
        "TableName": model.Meta.table_name,
        "Item": {**keyed, **attributes},
        "ConditionExpression": expression,
        "ExpressionAttributeNames": dict(names),  # a copy: the cached one is shared
    }


@functools.lru_cache(maxsize=64)
def _free_guard(lock_model):
    """``attribute_not_exists(PK) OR expires < :now`` as PynamoDB serializes it: the lock is
    free when it is absent or expired. Returns the expression, its names and the
    placeholder of ``:now``, serialized once per model (the value changes, not the text)."""
    names, values = {}, {}
    condition = lock_model._hash_key_attribute().does_not_exist() | (lock_model.expires < 0)
    expression = condition.serialize(names, values)
    (placeholder,) = values
    return expression, {placeholder: name for name, placeholder in names.items()}, placeholder


def _free_condition(lock_model, now):
    """The same guard as :func:`_free_guard`, as a PynamoDB condition."""
    return lock_model._hash_key_attribute().does_not_exist() | (lock_model.expires < now)


def _lock_put(lock_model, key, owner, expires=None, now=None):
    """The guarded Put of lock ``key`` held by ``owner`` (expiring at ``expires``, if set):
    the request PynamoDB builds for ``lock_model(PK=key, owner=owner, expires=expires)``
    with condition ``attribute_not_exists(PK) OR expires < :now``, without a model instance
    per lock (a create puts one lock per constraint, and the lock item is three strings)."""
    expression, names, placeholder = _free_guard(lock_model)
    item = {"PK": {"S": key}, "SK": {"S": LOCK_SORT_KEY}}
    if expires is not None:
        item[TTL_ATTRIBUTE] = {"N": str(expires)}  # before owner, as PynamoDB orders them
    item["owner"] = {"S": owner}
    return {
        "TableName": lock_model.Meta.table_name,
        "Item": item,
        "ConditionExpression": expression,
        # On a collision DynamoDB returns the lock, so we learn who holds the value.
        "ReturnValuesOnConditionCheckFailure": "ALL_OLD",
        "ExpressionAttributeNames": dict(names),
        "ExpressionAttributeValues": {placeholder: {"N": str(epoch_now() if now is None else now)}},
    }


def _lock_check(lock_model, key, constraint):
    """``ConditionCheck attribute_not_exists(PK)`` on lock ``key``: the value of a partial
    constraint (an unverified email) is refused when another item holds it, and not taken.
    (Locks of partial values never expire: only a verified account holds one.)"""
    body = lock_model.get_operation_kwargs_from_class(
        key, LOCK_SORT_KEY, condition=lock_model._hash_key_attribute().does_not_exist()
    )
    # On a collision DynamoDB returns the lock, so we learn who holds the value.
    body["ReturnValuesOnConditionCheckFailure"] = "ALL_OLD"
    return Action("ConditionCheck", body, NEW_LOCK, (lock_model.Meta.table_name, key, LOCK_SORT_KEY), constraint, key)


def _lock_keep(lock_model, key, owner, constraint):
    """``Update lock REMOVE expires`` guarded by ``owner = me``: a lock the item keeps
    stops expiring together with the item."""
    lock = lock_model(PK=key, owner=owner)
    body = lock.get_update_kwargs_from_instance(
        actions=[lock_model.expires.remove()], condition=lock_model.owner == owner
    )
    return Action("Update", body, HELD_LOCK, (lock_model.Meta.table_name, key, LOCK_SORT_KEY), constraint, key)


def _lock_action(kind, lock_model, key, owner, role, constraint, expires=None):
    if kind == "Put":
        body = _lock_put(lock_model, key, owner, expires)
    else:
        # Release only our own lock; a lock already gone is fine (nothing to release).
        body = lock_model(PK=key, owner=owner).get_delete_kwargs_from_instance(
            condition=(lock_model.owner == owner) | lock_model.PK.does_not_exist(),
            return_values_on_condition_failure="ALL_OLD",
        )
    return Action(kind, body, role, (lock_model.Meta.table_name, key, LOCK_SORT_KEY), constraint, key)


def _kept_lock_check(lock_model, key, owner, constraint):
    """A ConditionCheck that old lock ``key``, which we do not release, still names ``owner``.

    Without it, a lock found to be another item's and then handed to us between two
    attempts (a staff transfer) would be left behind, held by us for a value we no longer
    hold (I3). Returns the lock on failure, so the next attempt knows its new owner.
    """
    body = lock_model.get_operation_kwargs_from_class(key, LOCK_SORT_KEY, condition=_held_by(lock_model, owner))
    body["ReturnValuesOnConditionCheckFailure"] = "ALL_OLD"
    return Action("ConditionCheck", body, KEPT_LOCK, (lock_model.Meta.table_name, key, LOCK_SORT_KEY), constraint, key)


def _old_lock_action(lock_model, key, owner, constraint, keep_locks):
    """Release old lock ``key`` (only if ours or gone), or, when ``keep_locks`` says another
    item holds it, check that it still does."""
    if key in keep_locks:
        return _kept_lock_check(lock_model, key, keep_locks[key], constraint)
    return _lock_action("Delete", lock_model, key, owner, OLD_LOCK, constraint)


def _expires(item):
    """The item's ``expires`` (epoch seconds), or ``None`` when it does not expire."""
    return getattr(item, TTL_ATTRIBUTE, None) if TTL_ATTRIBUTE in type(item).get_attributes() else None


def _still_as_read(item, names):
    """A condition that the item exists, is not expired (``expires > :now`` when it
    expires), and ``names`` still hold the values we read.

    ``attribute_exists(PK)`` is sent only when no other conjunct requires the item: in
    DynamoDB a comparison with an attribute that is not there is false, so ``expires > :now``
    or ``name = :read`` already fails on a missing item (protocol/README.md: every conjunct
    sent is one the model shows necessary).
    """
    model = type(item)
    attributes = model.get_attributes()
    conditions = []
    if _expires(item) is not None:
        conditions.append(attributes[TTL_ATTRIBUTE] > epoch_now())
    for name in sorted(names):
        value = getattr(item, name, None)
        attribute = attributes[name]
        conditions.append(attribute.does_not_exist() if value is None else attribute == value)
    if _expires(item) is None and all(getattr(item, name, None) is None for name in names):
        conditions.insert(0, model._hash_key_attribute().exists())
    return reduce(lambda left, right: left & right, conditions)


def _absent(model):
    """A condition that the item does not exist, or has expired (it is then absent)."""
    condition = model._hash_key_attribute().does_not_exist()
    if TTL_ATTRIBUTE in model.get_attributes():
        condition = condition | (model.get_attributes()[TTL_ATTRIBUTE] < epoch_now())
    return condition


def _current_lock_key(constraint, item):
    # Data written before a constraint existed may lack the value: it then holds no lock.
    try:
        return constraint.lock_key(item)
    except InvalidUniqueValue:
        return None


def _current_claimed_key(constraint, item):
    try:
        return constraint.claimed_key(item)
    except InvalidUniqueValue:
        return None


def _transaction(operation, actions, token):
    if len(actions) > MAX_ACTIONS:
        raise InvalidTransaction(f"{len(actions)} actions; DynamoDB allows at most {MAX_ACTIONS}.")
    targets = [action.target for action in actions]
    if len(set(targets)) < len(targets):
        repeated = sorted({str(target) for target in targets if targets.count(target) > 1})
        raise InvalidTransaction(f"Two actions on one item are not allowed: {', '.join(repeated)}")
    if token is not None and not 1 <= len(token) <= MAX_TOKEN_LENGTH:
        raise InvalidTransaction(f"A ClientRequestToken has 1 to {MAX_TOKEN_LENGTH} characters.")
    return Transaction(operation, actions, token) if token else Transaction(operation, actions)


def plan_create(item, *, token=None):
    """The transaction creating ``item`` and one guarded lock per unique constraint.

    ``Put item [attribute_not_exists(PK)]``, then per constraint, in declaration order:
    ``Put lock [attribute_not_exists(PK) OR expires < :now]`` (carrying the item's
    ``expires`` when it has one), or, for a partial constraint that leaves the item out,
    ``ConditionCheck lock [attribute_not_exists(PK)]``.
    """
    model = type(item)
    lock_model = lock_model_for(model)
    owner = _owner(item)
    expires = _expires(item)
    actions = [Action("Put", _guarded_put(item), ITEM, _key_target(item))]
    for constraint in constraints_of(model):
        key = constraint.lock_key(item)
        if key is not None:
            actions.append(_lock_action("Put", lock_model, key, owner, NEW_LOCK, constraint, expires))
            continue
        claimed = None if constraint.applies_to(item) else constraint.claimed_key(item)
        if claimed is not None:
            actions.append(_lock_check(lock_model, claimed, constraint))
    return _transaction(CREATE, actions, token)


def changed_copy(item, changes):
    """A copy of ``item`` with ``changes`` applied; ``item`` itself is left as read."""
    model = type(item)
    unknown = set(changes) - set(model.get_attributes())
    if unknown:
        raise ValueError(f"{model.__name__} has no attribute(s) {', '.join(sorted(unknown))}")
    copy = model.from_raw_data(item.serialize(null_check=False))
    for name, value in changes.items():
        setattr(copy, name, value)
    return copy


def plan_change(item, changes, *, token=None, keep_locks=None, unheld=()):
    """The transaction applying ``changes`` (attribute -> new value) to ``item`` as read.

    ``Update item [(expires > :now, if it expires) AND every changed or lock-deciding
    attribute = as read]``, then per constraint whose lock key really changes
    after normalization: ``Put new lock [attribute_not_exists(PK) OR expires < :now]`` (I1;
    carrying the item's new ``expires``) and ``Delete old lock [owner = me OR
    attribute_not_exists(PK)]``. Every attribute of each moved key is guarded as read (scope
    included), so two concurrent changes of one item cannot orphan a lock (I2, I3).
    Constraints whose attributes ``changes`` does not touch are left alone, even when their
    stored value cannot be locked (legacy data). A value a partial constraint leaves out gets
    ``ConditionCheck lock [attribute_not_exists(PK)]`` instead of a Put. When the change
    removes ``expires`` (a verification), each lock the item keeps gets ``Update lock
    REMOVE expires [owner = me]``.

    ``keep_locks`` maps old lock keys not to release to the other item holding each
    (``None``: the lock names nobody); each gets a ConditionCheck that it still does
    (``owner = that item``), so the transaction is cancelled if the lock moved meanwhile.
    ``unheld`` lists ``(constraint, key)`` pairs that must be free, each checked with
    ``ConditionCheck lock [attribute_not_exists(PK)]`` and refused by position like a Put
    (an email change request: the new address must not be held, though no lock moves yet).
    """
    keep_locks = keep_locks or {}
    model = type(item)
    changed = changed_copy(item, changes)
    lock_model = lock_model_for(model)
    owner = _owner(item)
    expires = _expires(changed)
    stops_expiring = _expires(item) is not None and expires is None
    guarded = set(changes)
    lock_actions = []
    for constraint in constraints_of(model):
        if not stops_expiring and not set(changes).intersection(constraint.guarded_attributes):
            # Untouched: its lock stays as it is, even when the stored value could not be
            # locked (legacy data), so a password change never fails on an old blank name.
            continue
        old_key = _current_lock_key(constraint, item)
        new_key = constraint.lock_key(changed)
        if old_key == new_key:
            if old_key is not None and stops_expiring:
                lock_actions.append(_lock_keep(lock_model, old_key, owner, constraint))
            elif old_key is None and not constraint.applies_to(changed):
                claimed = constraint.claimed_key(changed)
                if claimed is not None and claimed != _current_claimed_key(constraint, item):
                    guarded.update(constraint.guarded_attributes)
                    lock_actions.append(_lock_check(lock_model, claimed, constraint))
            continue
        # Guard every attribute the key is built from, not only the changed ones: a
        # concurrent change of the scope (the team) must cancel a change of the field (the
        # number), or the lock would move inside a team the item has left.
        guarded.update(constraint.guarded_attributes)
        if new_key is not None:
            lock_actions.append(_lock_action("Put", lock_model, new_key, owner, NEW_LOCK, constraint, expires))
        if old_key is not None:
            lock_actions.append(_old_lock_action(lock_model, old_key, owner, constraint, keep_locks))
    for constraint, key in unheld:
        lock_actions.append(_lock_check(lock_model, key, constraint))
    attributes = model.get_attributes()
    updates = [
        attributes[name].remove() if value is None else attributes[name].set(value)
        for name, value in changes.items()
    ]
    update = Action(
        "Update",
        item.get_update_kwargs_from_instance(actions=updates, condition=_still_as_read(item, guarded)),
        ITEM,
        _key_target(item),
    )
    return _transaction(CHANGE, [update, *lock_actions], token)


def plan_delete(item, *, token=None, keep_locks=None):
    """The transaction deleting ``item`` and releasing every lock it holds.

    The item's Delete is guarded by its unique values as read; each lock's Delete by
    ``owner = me OR attribute_not_exists(PK)``. ``keep_locks`` is as in :func:`plan_change`:
    a lock held by another item is not deleted but checked to still be held by it.
    """
    keep_locks = keep_locks or {}
    model = type(item)
    lock_model = lock_model_for(model)
    owner = _owner(item)
    constraints = constraints_of(model)
    # Partial constraints' conditions too: a verification landing first takes the email lock.
    guarded = {name for constraint in constraints for name in constraint.guarded_attributes}
    actions = [
        Action(
            "Delete",
            item.get_delete_kwargs_from_instance(condition=_still_as_read(item, guarded)),
            ITEM,
            _key_target(item),
        )
    ]
    for constraint in constraints:
        key = _current_lock_key(constraint, item)
        if key is not None:
            actions.append(_old_lock_action(lock_model, key, owner, constraint, keep_locks))
    return _transaction(DELETE, actions, token)


def _default_range_key(model):
    range_attribute = model._range_key_attribute()
    return range_attribute.default if range_attribute is not None else None


def _condition_check(model, hash_key, condition):
    range_key = _default_range_key(model)
    body = model.get_operation_kwargs_from_class(hash_key, range_key, condition=condition)
    return Action("ConditionCheck", body, HOLDER_CHECK, (model.Meta.table_name, hash_key, range_key))


def _held_by(lock_model, owner):
    """A condition that the lock exists and still names ``owner`` (``None``: names nobody)."""
    if owner is None:
        return lock_model.PK.exists() & lock_model.owner.does_not_exist()
    return lock_model.owner == owner


def _holder_checks(model, constraint, item, owner, owner_item):
    """ConditionChecks that ``item`` (if any) still holds its value as read, and that the
    lock's current ``owner`` still does not: gone when ``owner_item`` is ``None``, else with
    the values read (which did not map to the lock)."""
    checks = []
    if item is not None:
        checks.append(_condition_check(model, _owner(item), _still_as_read(item, constraint.guarded_attributes)))
    # A lock naming nobody (or an empty owner, which no item can have as key) needs no check.
    if owner:
        if owner_item is None:
            checks.append(_condition_check(model, owner, _absent(model)))
        else:
            checks.append(_condition_check(model, owner, _still_as_read(owner_item, constraint.guarded_attributes)))
    return checks


def _give_lock(item, constraint, condition):
    """The Put making ``item`` the owner of its value's lock, if ``condition`` holds."""
    model = type(item)
    lock_model = lock_model_for(model)
    key = constraint.lock_key(item)
    if key is None:
        raise InvalidTransaction(f"{_owner(item)} holds no value under {constraint!r}: no lock to give it.")
    lock = lock_model(PK=key, owner=_owner(item), expires=_expires(item))
    body = lock.get_save_kwargs_from_instance(condition=condition(lock_model))
    return Action("Put", body, REPAIRED_LOCK, _key_target(lock), constraint, key)


def plan_claim_lock(item, constraint, *, token=None):
    """The transaction creating the missing lock of ``item``'s value under ``constraint``.

    Guarded: the lock must not exist (or be expired), and ``item`` must still hold the value
    as read, so a concurrent signup or change of that value wins and this repair is cancelled.
    An item a partial constraint leaves out (an unverified email) holds no lock: refused.
    """
    put = _give_lock(item, constraint, lambda lock_model: _free_condition(lock_model, epoch_now()))
    return _transaction(REPAIR, [put, *_holder_checks(type(item), constraint, item, None, None)], token)


def plan_transfer_lock(item, constraint, owner, owner_item=None, *, token=None):
    """The transaction giving ``item`` the lock of its value, now held by the wrong ``owner``.

    ``owner`` is the lock's owner as read (``None``: the lock names nobody); ``owner_item`` is
    that owner as read, or ``None`` when it does not exist. Guarded: the lock still names
    ``owner``, ``item`` still holds the value, and the owner is still gone or unchanged.
    """
    put = _give_lock(item, constraint, lambda lock_model: _held_by(lock_model, owner))
    return _transaction(REPAIR, [put, *_holder_checks(type(item), constraint, item, owner, owner_item)], token)


def plan_release_lock(model_class, constraint, key, owner, owner_item=None, *, token=None):
    """The transaction deleting orphaned lock ``key``: nobody holds its value.

    ``owner`` is the lock's owner as read (``None``: the lock names nobody); ``owner_item`` is
    that owner as read (its value no longer maps to ``key``), or ``None`` when it does not
    exist. Guarded: the lock still names ``owner``, and the owner is still gone or unchanged.
    While the lock exists no other item can take its value, so nobody else needs checking.
    """
    lock_model = lock_model_for(model_class)
    lock = lock_model(PK=key, owner=owner)
    delete = Action(
        "Delete",
        lock.get_delete_kwargs_from_instance(condition=_held_by(lock_model, owner)),
        REPAIRED_LOCK,
        _key_target(lock),
        constraint,
        key,
    )
    return _transaction(REPAIR, [delete, *_holder_checks(model_class, constraint, None, owner, owner_item)], token)


def plan_updates(updates, *, token=None):
    """The transaction applying plain, unguarded ``UpdateItem`` parameters together (rate
    counters: one request for several counters). No lock is involved."""
    actions = [
        Action("Update", update, ITEM, (update["TableName"], update["Key"]["PK"]["S"], update["Key"]["SK"]["S"]))
        for update in updates
    ]
    return _transaction(COUNT, actions, token)


def _backoff(attempt):
    # Full jitter: concurrent losers spread out instead of colliding again in step.
    time.sleep(random.uniform(0, BACKOFF_BASE_SECONDS * 2**attempt))


def _lock_owner(reason):
    return reason.get("Item", {}).get("owner", {}).get("S")


def cancellation_error(transaction, reasons):
    """The exception for a cancelled ``transaction``, reading ``reasons`` by position."""
    item_failed = False
    collided, owners, namespaces, not_owned, contended, other = set(), {}, {}, {}, False, []
    me = _owner_of_transaction(transaction)
    for action, reason in zip(transaction.actions, reasons):
        code = reason.get("Code", "None")
        if code == "None":
            continue
        if code == "ConditionalCheckFailed":
            if action.role == NEW_LOCK:
                collided.update(action.constraint.fields)
                owners.update(dict.fromkeys(action.constraint.fields, _lock_owner(reason)))
                for name in action.constraint.fields:
                    namespaces.setdefault(name, set()).add(action.constraint.namespace)
            elif action.role in (OLD_LOCK, KEPT_LOCK):
                # ALL_OLD returns the lock as it is; no Item means it is gone.
                not_owned[action.lock_key] = (reason.get("Item") is not None, _lock_owner(reason))
            else:
                # The item, or a lock it keeps, is not as read (HELD_LOCK: not ours any more).
                item_failed = True
        elif code in CONTENDED_REASONS:
            contended = True
        else:
            other.append(code)
    if item_failed:
        if transaction.operation == CREATE:
            return ItemAlreadyExists("The item's key already exists.", reasons)
        return StaleItem("The item changed or was deleted since it was read.", reasons)
    if collided:
        return UniqueViolation(collided, owners, reasons, namespaces)
    if not_owned:
        held = {key: owner for key, (exists, owner) in not_owned.items() if exists and owner != me}
        return LockNotOwned(not_owned, reasons, held)
    if contended:
        return Busy("Other transactions on the same items kept conflicting; nothing was written.", reasons)
    return InvalidTransaction(f"DynamoDB rejected the transaction: {', '.join(other) or 'no reason given'}")


def _is_own_replay(transaction, error):
    """After a lost answer, is ``error`` just our own earlier attempt having committed?"""
    if transaction.operation != CREATE or not isinstance(error, ItemAlreadyExists):
        return False
    me = _owner_of_transaction(transaction)
    for action, reason in zip(transaction.actions, error.reasons):
        if action.role == NEW_LOCK and reason.get("Code") == "ConditionalCheckFailed":
            if _lock_owner(reason) != me:
                return False
    return True


def _owner_of_transaction(transaction):
    return transaction.actions[0].target[1]


def run(transaction):
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
                # is answered with success): the retry is a new request, not yet sent.
                transaction.token = uuid.uuid4().hex
                request = transaction.request()
                maybe_applied = False
                _backoff(conflicts)
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


def _unknown(transaction, why):
    return OutcomeUnknown(
        f"The {transaction.operation} may or may not have been written: {why}. "
        f"Resending it with token {transaction.token} within 10 minutes settles it.",
        transaction.token,
    )


def settle(transaction, delays=SETTLE_DELAYS):
    """Find out whether ``transaction``, whose outcome was unknown, committed; apply it if not.

    Resends the same request with the same ``ClientRequestToken`` after each of ``delays``:
    DynamoDB answers a request it already applied (within 10 minutes) with success without
    applying it again, and still evaluates one it never received. So a return means it is
    applied exactly once; a cancellation error means it was not applied and now will not
    be; :class:`OutcomeUnknown` means even the resends could not tell.
    """
    for delay in delays:
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


def _run_settled(transaction):
    try:
        run(transaction)
    except OutcomeUnknown:
        settle(transaction)


def _run_releasing_old_locks(plan, token):
    """Run the transaction ``plan(keep_locks, token)`` builds, re-planning when an old lock
    is not as assumed: held by another item (keep it, checked), or, after that, gone or
    handed back to us (release it after all). Every attempt but the last was cancelled, so
    only the first carries the caller's ``token``; each re-plan is a new request."""
    keep_locks = {}
    for _ in range(LOCK_ATTEMPTS):
        try:
            return _run_settled(plan(keep_locks, token))
        except LockNotOwned as error:
            for key in error.keys:
                if key in error.owners:
                    keep_locks[key] = error.owners[key]
                else:
                    keep_locks.pop(key, None)
            token = None
    raise Busy("The old value's lock kept changing hands; nothing was written.")


def create(item, *, token=None):
    """Create ``item`` and its locks in one transaction. Returns ``item``.

    Raises :class:`OutcomeUnknown` when resending with the same token could not tell
    whether it was written.
    """
    _run_settled(plan_create(item, token=token))
    return item


def change(item, changes, *, token=None, unheld=()):
    """Apply ``changes`` to ``item`` and move its locks in one transaction.

    ``item`` must be as read from the table; on success it carries the new values.
    ``unheld``: lock keys that must be free, see :func:`plan_change`.
    Raises :class:`StaleItem` when the item changed since it was read. An old lock held by
    another item is not released but checked, in the same transaction, to still be that
    item's (see :func:`plan_change`); if it moved meanwhile, the change is planned again.
    """
    _run_releasing_old_locks(
        lambda keep, token: plan_change(item, changes, token=token, keep_locks=keep, unheld=unheld), token
    )
    for name, value in changes.items():
        setattr(item, name, value)
    return item


def delete(item, *, token=None):
    """Delete ``item`` and release its locks in one transaction; never another item's lock
    (checked to still be that item's, as in :func:`change`)."""
    _run_releasing_old_locks(lambda keep, token: plan_delete(item, token=token, keep_locks=keep), token)


def explain(transaction):
    """The request of ``transaction`` as JSON, in the shape ``aws dynamodb transact-write-items
    --cli-input-json`` takes. Nothing is sent."""
    return json.dumps(transaction.request(), indent=2, ensure_ascii=False)
