"""The shape of a TransactWriteItems request: its actions, their roles and guards.

An :class:`Action` is one entry of ``TransactItems`` with the role it plays (the item, a
new lock, an old lock...), and a :class:`Transaction` is the request in the order it is
sent. The builders here write each guarded Put, Update, Delete and ConditionCheck the
planners (:mod:`.plans`) put together, and the conditions they are guarded by.
"""

import base64
import functools
import json
import uuid
from collections.abc import Callable, Collection, Mapping
from dataclasses import dataclass, field
from enum import StrEnum
from functools import reduce
from typing import Any

from pynamodb.attributes import Attribute, ListAttribute, MapAttribute
from pynamodb.exceptions import AttributeNullError
from pynamodb.expressions.condition import Condition
from pynamodb.expressions.operand import Path
from pynamodb.expressions.update import Action as UpdateAction
from pynamodb.models import Model

from ..exceptions import InvalidTransaction, LastMember
from ..tables import Lock, Registry, malformed_attributes
from ..tables.clocks import TTL_ATTRIBUTE, epoch_now, takeover_cutoff
from ..tables.raw import TOMBSTONE_ATTRIBUTE
from ..uniqueness import LOCK_SORT_KEY

MAX_ACTIONS = 100
MAX_TOKEN_LENGTH = 36

CREATE, CHANGE, DELETE, REPAIR = "create", "change", "delete", "repair"


class Role(StrEnum):
    """What an action does in its transaction: a cancelled transaction's reasons are read by
    it (:func:`~.running.cancellation_error`), each failed condition meaning what its role says."""

    # The item itself: its Put, Update or Delete (a deletion's tombstone Put).
    ITEM = "item"
    # A lock Put (or the ConditionCheck of a partial constraint's value) that fails when
    # another item holds the value.
    NEW_LOCK = "new_lock"
    # A release: a lock's Delete guarded by ``owner = me``.
    OLD_LOCK = "old_lock"
    # A lock the item keeps, updated with it (it stops expiring), guarded by ``owner = me``.
    HELD_LOCK = "held_lock"
    # A ConditionCheck that an old lock we do not release still names the other item.
    KEPT_LOCK = "kept_lock"
    # In a repair: the lock being fixed, and ConditionChecks on the accounts involved. Any
    # failed condition of a repair means the table moved since it was read: StaleItem.
    REPAIRED_LOCK = "repaired_lock"
    HOLDER_CHECK = "holder_check"
    # An item the item owns in its partition (a passkey's credential item of an account).
    OWNED_ITEM = "owned_item"
    # A ConditionCheck that a rate counter is under its limit (a sign-in with a second
    # factor's code): its failure is the limit's refusal, whatever else failed.
    LIMIT = "limit"
    # An item's entry in a registry (tables.Registry), put or deleted with the item's own write.
    REGISTRY = "registry"
    # A ConditionCheck that another member's entry is still in a registry the item leaves: its
    # failure means that member left meanwhile (the last-staff rule, see registry_actions).
    OTHER_MEMBER = "other_member"
    # A sign-in's (accounts.transactions.authenticators): the new session's Put; a single-use
    # write (a staged session, a TOTP step, a recovery code, a signature counter); a
    # housekeeping delete that needs no guard; the Put of the session slot a login's new
    # session takes (ACCOUNTS_MAX_SESSIONS), guarded by the slot's holder as read.
    SESSION = "session"
    SPENT = "spent"
    CLEARED = "cleared"
    SLOT = "slot"
    # A security event's Put (accounts.timeline), riding in the change it records: it has
    # no condition, so it never fails (see .events).
    EVENT = "event"
    # A ConditionCheck that the account's password is the one a staged login was judged
    # with (the second step's sign-in, see .authenticators.password_as_staged).
    STAGED_PASSWORD = "staged_password"
    # A ConditionCheck that the account a sign-in makes a session for still exists, is
    # active and is no tombstone, as read (see .authenticators.account_as_signed_in).
    ACCOUNT_ACTIVE = "account_active"
    # The Put of the record that an app's ID token was accepted (see
    # .authenticators.id_token_spend): it fails when the token was used already.
    ID_TOKEN = "id_token"
    # A ConditionCheck that a session still lives (a refresh token's, see .tokens).
    LIVE_SESSION = "live_session"
    # A ConditionCheck that the account's password, address and phone number are those a
    # login code was judged against (a code's sign-in, see .authenticators.code_as_issued).
    CODE_ISSUED = "code_issued"
    # A ConditionCheck that the staff member changing a superuser's account is still an
    # active staff superuser (see .hierarchy).
    ACTOR = "actor"
    # The Delete of a session an end of sessions read, guarded by its still being there:
    # its failure means a reauthentication gave it a new key meanwhile (see .session_ends).
    ENDED = "ended"


# The roles by name, as the planners, the runner and the tests import them.
ITEM, NEW_LOCK, OLD_LOCK, HELD_LOCK, KEPT_LOCK = Role.ITEM, Role.NEW_LOCK, Role.OLD_LOCK, Role.HELD_LOCK, Role.KEPT_LOCK
REPAIRED_LOCK, HOLDER_CHECK, OWNED_ITEM = Role.REPAIRED_LOCK, Role.HOLDER_CHECK, Role.OWNED_ITEM
LIMIT, REGISTRY, OTHER_MEMBER = Role.LIMIT, Role.REGISTRY, Role.OTHER_MEMBER
# The item attribute recording, by namespace, the lock keys it holds (see tables.Account).
LOCK_KEYS = "lock_keys"


# (table, partition key, sort key) of the item an action writes or checks.
Target = tuple[str, Any, Any]
# A raw DynamoDB request body (TableName, Key or Item, ConditionExpression...).
Body = dict[str, Any]


@dataclass(frozen=True)
class Action:
    """One entry of ``TransactItems``, with what it means to the engine."""

    kind: str  # "Put", "Update", "Delete" or "ConditionCheck"
    body: dict[str, Any]
    role: Role
    target: Target  # DynamoDB allows one action per item
    constraint: Any = None  # the UniqueConstraint a lock action is for
    lock_key: str | None = None
    # The value a new lock is for, as the item holds it (an element of a set-valued
    # constraint): a cancellation names it (UniqueViolation.values).
    value: Any = None


@dataclass
class Transaction:
    """A TransactWriteItems request, ready to send (or to show, see :func:`explain`).

    ``now`` is this server's clock when the request was planned: every condition comparing
    ``expires`` uses it. A resend with the same token sends the very same request (DynamoDB
    applies a token once only for identical parameters); a new attempt (:meth:`replan`)
    reads the clock again.
    """

    operation: str
    actions: list[Action]
    token: str = field(default_factory=lambda: uuid.uuid4().hex)
    now: int | None = None
    # Builds the actions at a given ``now`` (None: the actions hold no clock reading).
    build: Callable[[int], list[Action]] | None = field(default=None, repr=False, compare=False)

    def replan(self) -> None:
        """Make this the request of a new attempt after a cancelled one (which did not
        commit): a new token, and the actions planned again with the clock read again."""
        self.token = uuid.uuid4().hex
        if self.build is not None:
            self.now = epoch_now()
            self.actions = self.build(self.now)

    def request(self) -> dict[str, Any]:
        """The exact parameters of the TransactWriteItems call, as the AWS CLI takes them."""
        return {
            "TransactItems": [{action.kind: action.body} for action in self.actions],
            "ClientRequestToken": self.token,
        }


def explain(transaction: Transaction) -> str:
    """The request of ``transaction`` as JSON, in the shape ``aws dynamodb transact-write-items
    --cli-input-json`` takes (binary values in base64, as it reads them). Nothing is sent."""
    return json.dumps(transaction.request(), indent=2, ensure_ascii=False, default=_base64)


def _base64(value: object) -> str:
    if isinstance(value, bytes):
        return base64.b64encode(value).decode()
    raise TypeError(f"{type(value).__name__} is not JSON serializable")


def key_target(item: Model) -> Target:
    model = type(item)
    range_name = model._range_keyname
    return (
        model.Meta.table_name,
        getattr(item, str(model._hash_keyname)),
        getattr(item, range_name) if range_name else None,
    )


def hash_key_attribute(model: type[Model]) -> Attribute[Any]:
    """The model's hash key attribute (PynamoDB's own accessor carries no annotation)."""
    attribute: Attribute[Any] = model._hash_key_attribute()
    return attribute


def owner_of(item: Model) -> Any:
    return getattr(item, str(type(item)._hash_keyname))


@functools.lru_cache(maxsize=64)
def _not_exists_guard(model: type[Model]) -> tuple[str, dict[str, str]]:
    """``attribute_not_exists(<hash key>)`` as PynamoDB serializes it, with its names.

    It depends on the model only, so it is serialized once per model.
    """
    names: dict[str, str] = {}
    expression = hash_key_attribute(model).does_not_exist().serialize(names, {})
    return expression, {placeholder: name for name, placeholder in names.items()}


@functools.lru_cache(maxsize=64)
def _serializers(model: type[Model]) -> tuple[tuple[str, Attribute[Any], bool, bool], ...]:
    """Per attribute of ``model``, keys first as PynamoDB orders them: its name, the
    attribute, whether its value may be read straight from the item's ``attribute_values``
    (not when its class reads it its own way: PynamoDB's ``VersionAttribute`` casts), and
    whether it is a container."""
    attributes = model.get_attributes()
    keys: list[str] = [name for name in (model._hash_keyname, model._range_keyname) if name]
    names = keys + [name for name in attributes if name not in keys]
    return tuple(
        (
            name,
            attributes[name],
            type(attributes[name]).__get__ is Attribute.__get__,
            isinstance(attributes[name], (ListAttribute, MapAttribute)),
        )
        for name in names
    )


def serialized_item(item: Model) -> dict[str, Any]:
    """``item.serialize(null_check=True)``, keys first: the same attributes in about half
    the time (measured on an account: 17 -> 10 us). PynamoDB reads every value through its
    descriptor; a create serializes every attribute of the item it writes."""
    values = item.attribute_values
    serialized: dict[str, Any] = {}
    for name, attribute, plain, container in _serializers(type(item)):
        value = values.get(name) if plain else getattr(item, name)
        try:
            if value is None:
                stored = None
            elif container:
                if isinstance(value, MapAttribute) and not value.validate(null_check=True):
                    raise ValueError(f"Attribute '{name}' is not correctly typed")
                # Only containers take null_check (PynamoDB's annotation of serialize omits it).
                stored = attribute.serialize(value, null_check=True)  # type: ignore[call-arg]
            else:
                stored = attribute.serialize(value)
        except AttributeNullError as error:
            error.prepend_path(name)
            raise
        if stored is not None:
            serialized[attribute.attr_name] = {attribute.attr_type: stored}
        elif not attribute.null:
            raise AttributeNullError(name)
    return serialized


def guarded_put(item: Model) -> Body:
    """The Put of ``item`` guarded by ``attribute_not_exists(<hash key>)``.

    The same request as PynamoDB's ``get_save_kwargs_from_instance(condition=...)``, in
    a quarter of the time (measured on an account: 42 -> 11 us): PynamoDB builds and
    serializes the same condition again, and maps every attribute once more, on each call.
    """
    model = type(item)
    if model._version_attribute_name is not None:
        # PynamoDB bumps the version and adds its own condition: let it combine the two.
        return item.get_save_kwargs_from_instance(condition=hash_key_attribute(model).does_not_exist())
    expression, names = _not_exists_guard(model)
    return {
        "TableName": model.Meta.table_name,
        "Item": serialized_item(item),
        "ConditionExpression": expression,
        "ExpressionAttributeNames": dict(names),  # a copy: the cached one is shared
    }


@functools.lru_cache(maxsize=64)
def _free_guard(lock_model: type[Lock]) -> tuple[str, dict[str, str], str]:
    """``attribute_not_exists(PK) OR expires < :cutoff`` as PynamoDB serializes it: the lock
    is free when it is absent, or expired longer ago than the clock-skew margin
    (``:cutoff`` = ``:now - ACCOUNTS_CLOCK_SKEW_MARGIN``, see :func:`~accounts.tables.takeover_cutoff`).
    Returns the expression, its names and the placeholder of ``:cutoff``, serialized once
    per model (the value changes, not the text)."""
    names: dict[str, str] = {}
    values: dict[str, Any] = {}
    condition = hash_key_attribute(lock_model).does_not_exist() | (lock_model.expires < 0)
    expression = condition.serialize(names, values)
    (placeholder,) = values
    return expression, {placeholder: name for name, placeholder in names.items()}, placeholder


def free_condition(model: type[Model], now: int) -> Condition:
    """The same guard as :func:`_free_guard`, as a PynamoDB condition (on a lock, or on an
    item that expires as a lock does: a single-use record)."""
    condition: Condition = hash_key_attribute(model).does_not_exist() | (
        model.get_attributes()[TTL_ATTRIBUTE] < takeover_cutoff(now)
    )
    return condition


def lock_put_request(
    lock_model: type[Lock], key: str, owner: str, expires: int | None, now: int, key_version: str | None = None
) -> Body:
    """The guarded Put of lock ``key`` held by ``owner`` (expiring at ``expires``, if set;
    recording ``key_version``, if set): the request PynamoDB builds for
    ``lock_model(PK=key, owner=owner, expires=expires, key_version=key_version)`` with
    condition ``attribute_not_exists(PK) OR expires < :cutoff`` (at ``now``), without a
    model instance per lock (a create puts one lock per constraint, and the lock item is
    a few strings)."""
    expression, names, placeholder = _free_guard(lock_model)
    item: dict[str, dict[str, str]] = {"PK": {"S": key}, "SK": {"S": LOCK_SORT_KEY}}
    # In the order PynamoDB writes them (by name).
    if expires is not None:
        item[TTL_ATTRIBUTE] = {"N": str(expires)}
    if key_version is not None:
        item["key_version"] = {"S": key_version}
    item["owner"] = {"S": owner}
    return {
        "TableName": lock_model.Meta.table_name,
        "Item": item,
        "ConditionExpression": expression,
        # On a collision DynamoDB returns the lock, so we learn who holds the value.
        "ReturnValuesOnConditionCheckFailure": "ALL_OLD",
        "ExpressionAttributeNames": dict(names),
        "ExpressionAttributeValues": {placeholder: {"N": str(takeover_cutoff(now))}},
    }


def lock_check(lock_model: type[Lock], key: str, constraint: Any) -> Action:
    """``ConditionCheck attribute_not_exists(PK)`` on lock ``key``: the value of a partial
    constraint (an unverified email) is refused when another item holds it, and not taken.
    (Locks of partial values never expire: only a verified account holds one.)"""
    body = lock_model.get_operation_kwargs_from_class(
        key, LOCK_SORT_KEY, condition=hash_key_attribute(lock_model).does_not_exist()
    )
    # On a collision DynamoDB returns the lock, so we learn who holds the value.
    body["ReturnValuesOnConditionCheckFailure"] = "ALL_OLD"
    return Action("ConditionCheck", body, NEW_LOCK, (lock_model.Meta.table_name, key, LOCK_SORT_KEY), constraint, key)


def lock_keep(lock_model: type[Lock], key: str, owner: str, constraint: Any) -> Action:
    """``Update lock REMOVE expires`` guarded by ``owner = me``: a lock the item keeps
    stops expiring together with the item."""
    lock = lock_model(PK=key, owner=owner)
    body = lock.get_update_kwargs_from_instance(
        actions=[lock_model.expires.remove()], condition=lock_model.owner == owner
    )
    return Action("Update", body, HELD_LOCK, (lock_model.Meta.table_name, key, LOCK_SORT_KEY), constraint, key)


def lock_action(
    kind: str,
    lock_model: type[Lock],
    key: str,
    owner: str,
    role: Role,
    constraint: Any,
    now: int,
    expires: int | None = None,
    value: Any = None,
) -> Action:
    if kind == "Put":
        body = lock_put_request(lock_model, key, owner, expires, now, constraint.key_version if constraint else None)
    else:
        # Release only our own lock; a lock already gone is fine (nothing to release).
        body = lock_model(PK=key, owner=owner).get_delete_kwargs_from_instance(
            condition=(lock_model.owner == owner) | lock_model.PK.does_not_exist(),
            return_values_on_condition_failure="ALL_OLD",
        )
    return Action(kind, body, role, (lock_model.Meta.table_name, key, LOCK_SORT_KEY), constraint, key, value)


def _kept_lock_check(lock_model: type[Lock], key: str, owner: Any, constraint: Any) -> Action:
    """A ConditionCheck that old lock ``key``, which we do not release, still names ``owner``.

    Without it, a lock found to be another item's and then handed to us between two
    attempts (a staff transfer) would be left behind, held by us for a value we no longer
    hold (I3). Returns the lock on failure, so the next attempt knows its new owner.
    """
    body = lock_model.get_operation_kwargs_from_class(key, LOCK_SORT_KEY, condition=held_by(lock_model, owner))
    body["ReturnValuesOnConditionCheckFailure"] = "ALL_OLD"
    return Action("ConditionCheck", body, KEPT_LOCK, (lock_model.Meta.table_name, key, LOCK_SORT_KEY), constraint, key)


def old_lock_action(
    lock_model: type[Lock], key: str, owner: str, constraint: Any, keep_locks: Mapping[str, Any], now: int
) -> Action:
    """Release old lock ``key`` (only if ours or gone), or, when ``keep_locks`` says another
    item holds it, check that it still does."""
    if key in keep_locks:
        return _kept_lock_check(lock_model, key, keep_locks[key], constraint)
    return lock_action("Delete", lock_model, key, owner, OLD_LOCK, constraint, now)


def recorded_keys(item: Model) -> dict[str, Any]:
    """The lock keys ``item`` records it holds, by slot (a namespace: its key; a set-valued
    constraint's slot: the map of each element to its key; ``{}`` when it records none: its
    model keeps no ``lock_keys``, or it was written before they were recorded)."""
    stored = getattr(item, LOCK_KEYS, None) if LOCK_KEYS in type(item).get_attributes() else None
    if stored is None:
        return {}
    return dict(stored.as_dict() if isinstance(stored, MapAttribute) else stored)


def recording_actions(item: Model, keys: Mapping[str, Any], *, start: bool = True) -> list[UpdateAction]:
    """The update actions recording ``keys`` (slot -> the key it now holds, or, for a
    set-valued constraint's slot, the map of each element to its key; ``None``: it holds
    none there) in ``item``'s ``lock_keys``, slot by slot, or, when it has none yet and
    ``start``, the whole map (a slot it does not name is computed when needed)."""
    attributes = type(item).get_attributes()
    if LOCK_KEYS not in attributes or not keys:
        return []
    lock_keys = attributes[LOCK_KEYS]
    if getattr(item, LOCK_KEYS, None) is None:
        if not start:
            return []
        held = {namespace: key for namespace, key in keys.items() if key is not None}
        return [lock_keys.set(held)] if held else []
    return [
        lock_keys[namespace].remove() if key is None else lock_keys[namespace].set(key)
        for namespace, key in sorted(keys.items())
    ]


def expires_of(item: Model) -> Any:
    """The item's ``expires`` (epoch seconds), or ``None`` when it does not expire."""
    return getattr(item, TTL_ATTRIBUTE, None) if TTL_ATTRIBUTE in type(item).get_attributes() else None


def still_as_read(item: Model, names: Collection[str], now: int) -> Condition:
    """A condition that the item exists, is not expired at ``now`` (``expires >= :now`` when
    it expires), and ``names`` still hold the values we read.

    ``attribute_exists(PK)`` is sent only when no other conjunct requires the item: in
    DynamoDB a comparison with an attribute that is not there is false, so ``expires >= :now``
    or ``name = :read`` already fails on a missing item (protocol/README.md: every conjunct
    sent is one the model shows necessary). Likewise ``attribute_not_exists(deleted)``, only
    when no ``name = :read`` rules out a tombstone (which holds nothing but its key, when it
    was deleted and a far-off ``expires``).
    """
    model = type(item)
    attributes = model.get_attributes()
    expires = expires_of(item)
    # A value of the wrong type (damage) is compared as it is stored, raw: as read.
    stored = malformed_attributes(item)
    read = {name: stored.get(name, getattr(item, name, None)) for name in sorted(names)}
    conditions: list[Condition] = [] if expires is None else [attributes[TTL_ATTRIBUTE] >= now]
    for name, value in read.items():
        attribute = attributes[name]
        conditions.append(attribute.does_not_exist() if value is None else attribute == value)
    values_read = [value for name, value in read.items() if name != TTL_ATTRIBUTE and value is not None]
    if _tombstone_lifetime(model) is not None and not values_read:
        conditions.insert(0, Path(TOMBSTONE_ATTRIBUTE).does_not_exist())
    if expires is None and all(value is None for value in read.values()):
        conditions.insert(0, hash_key_attribute(model).exists())
    return reduce(lambda left, right: left & right, conditions)


def absent_condition(model: type[Model], now: int) -> Condition:
    """A condition that the item does not exist, expired longer ago than the clock-skew
    margin (it is then absent by any server's clock, and its values free), or is a
    tombstone."""
    condition: Condition = hash_key_attribute(model).does_not_exist()
    if TTL_ATTRIBUTE in model.get_attributes():
        condition = condition | (model.get_attributes()[TTL_ATTRIBUTE] < takeover_cutoff(now))
    if _tombstone_lifetime(model) is not None:
        condition = condition | Path(TOMBSTONE_ATTRIBUTE).exists()
    return condition


def _tombstone_lifetime(model: type[Model]) -> Any:
    # Models outside the accounts table's (any PynamoDB model) leave none.
    return getattr(model, "tombstone_lifetime", None)


def item_removal(item: Model, condition: Condition | None, now: int) -> Action:
    """The action removing ``item`` if ``condition`` holds: its Delete, or, for a model that
    leaves a tombstone, the Put of its tombstone (``PK``, ``SK``, ``deleted``, ``expires``)
    in its place, which keeps its key from ever being created again."""
    lifetime = _tombstone_lifetime(type(item))
    body = item.get_delete_kwargs_from_instance(condition=condition)
    if lifetime is None:
        return Action("Delete", body, ITEM, key_target(item))
    ends = now + int(lifetime.total_seconds())
    tombstone = {**body.pop("Key"), TOMBSTONE_ATTRIBUTE: {"N": str(now)}, TTL_ATTRIBUTE: {"N": str(ends)}}
    return Action("Put", {"TableName": body.pop("TableName"), "Item": tombstone, **body}, ITEM, key_target(item))


def new_transaction(operation: str, build: Callable[[int], list[Action]], token: str | None) -> Transaction:
    """The transaction of the actions ``build(now)`` returns, planned at this server's clock
    now; ``build`` plans them again for each new attempt (:meth:`Transaction.replan`)."""
    if token is not None and not 1 <= len(token) <= MAX_TOKEN_LENGTH:
        raise InvalidTransaction(f"A ClientRequestToken has 1 to {MAX_TOKEN_LENGTH} characters.")

    def checked(now: int) -> list[Action]:
        return checked_actions(build(now))

    now = epoch_now()
    transaction = Transaction(operation, checked(now), now=now, build=checked)
    if token:
        transaction.token = token
    return transaction


def _owned_key(item: Model, sort_key: str) -> tuple[dict[str, dict[str, Any]], Target]:
    model = type(item)
    return {"PK": {"S": owner_of(item)}, "SK": {"S": sort_key}}, (model.Meta.table_name, owner_of(item), sort_key)


def owned_delete(item: Model, sort_key: str) -> Action:
    """Delete an item ``item`` owns (a passkey's credential item), with no condition: the
    owner's own guard, its values as read (an account's ``passkeys``), says which items it
    owns; one already gone is fine."""
    key, target = _owned_key(item, sort_key)
    return Action("Delete", {"TableName": target[0], "Key": key}, OWNED_ITEM, target)


def owned_keep(item: Model, sort_key: str) -> Action:
    """``Update REMOVE expires`` of an item ``item`` owns: it stops expiring with its owner
    (no condition, as :func:`owned_delete`)."""
    key, target = _owned_key(item, sort_key)
    body = {
        "TableName": target[0],
        "Key": key,
        "UpdateExpression": "REMOVE #expires",
        "ExpressionAttributeNames": {"#expires": TTL_ATTRIBUTE},
    }
    return Action("Update", body, OWNED_ITEM, target)


def registry_entry(model: type[Model], registry: Registry, pk: str, joins: bool) -> Action:
    """The unconditional Put (``joins``) or Delete of ``pk``'s item in ``registry``: it
    rides on the item's own action, whose guards decide whether the transaction commits."""
    table = model.Meta.table_name
    target = (table, registry.partition, pk)
    if joins:
        return Action("Put", {"TableName": table, "Item": registry.key(pk)}, REGISTRY, target)
    return Action("Delete", {"TableName": table, "Key": registry.key(pk)}, REGISTRY, target)


def leaving(before: Model, after: Model | None) -> list[Registry]:
    """The registries of its model that a write of an item from ``before`` (as read) to
    ``after`` (``None``: deleted) takes it out of: it was a member and no longer is."""
    return [
        registry
        for registry in getattr(type(before), "registries", ())
        if registry.includes(before) and (after is None or not registry.includes(after))
    ]


def _other_member_check(model: type[Model], registry: Registry, pk: str) -> Action:
    """``ConditionCheck attribute_exists(PK)`` on member ``pk``'s entry in ``registry``."""
    body = model.get_operation_kwargs_from_class(registry.partition, pk, condition=hash_key_attribute(model).exists())
    return Action("ConditionCheck", body, OTHER_MEMBER, (model.Meta.table_name, registry.partition, pk))


def registry_actions(
    before: Model | None, after: Model | None, others: Mapping[str, str | None] | None = None
) -> list[Action]:
    """The registry entries a write of an item from ``before`` to ``after`` (either may be
    ``None``: created, deleted) puts or deletes: one per registry it joins or leaves.

    A deleted item leaves every registry of its model whatever it was read as: a change
    committed since the read (a staff grant) is not seen by a delete's guards.

    An item read as a member that leaves a registry carries a ``ConditionCheck`` on the
    entry of another member, ``others[registry.partition]`` (the last-staff rule): the
    registry is never left empty, because

    1. the leaving item's own entry goes in the same transaction, so two members leaving
       at once each check the entry the other deletes: DynamoDB serializes the two
       transactions, and the second finds the first's member gone and is cancelled;
    2. the entry checked is one the registry listed (a consistent ``Query``), and an
       entry exists exactly while its member is active staff (the transactions that change
       a member's flags put and delete it), so a check that passes names a member who stays.

    No other member to name raises :class:`~accounts.exceptions.LastMember`: nothing is sent.
    """
    item = after if after is not None else before
    assert item is not None, "a write has an item before or after it"
    model = type(item)
    others = others or {}
    actions: list[Action] = []
    for registry in getattr(model, "registries", ()):
        was = before is not None and registry.includes(before)
        now = after is not None and registry.includes(after)
        if was != now or after is None:
            actions.append(registry_entry(model, registry, owner_of(item), now))
        if was and not now:
            other = others.get(registry.partition)
            if other is None or other == owner_of(item):
                message = f"{owner_of(item)} is the last member of registry {registry.partition}."
                raise LastMember(message, registry=registry.partition)
            actions.append(_other_member_check(model, registry, other))
    return actions


def checked_actions(actions: list[Action]) -> list[Action]:
    """``actions``, refused (:class:`~accounts.exceptions.InvalidTransaction`) when they are
    more than DynamoDB's 100 or two of them are on one item."""
    if len(actions) > MAX_ACTIONS:
        raise InvalidTransaction(f"{len(actions)} actions; DynamoDB allows at most {MAX_ACTIONS}.")
    targets = [action.target for action in actions]
    if len(set(targets)) < len(targets):
        repeated = sorted({str(target) for target in targets if targets.count(target) > 1})
        raise InvalidTransaction(f"Two actions on one item are not allowed: {', '.join(repeated)}")
    return actions


def _default_range_key(model: type[Model]) -> Any:
    range_attribute = model._range_key_attribute()
    return range_attribute.default if range_attribute is not None else None


def condition_check(model: type[Model], hash_key: str, condition: Condition) -> Action:
    range_key = _default_range_key(model)
    body = model.get_operation_kwargs_from_class(hash_key, range_key, condition=condition)
    return Action("ConditionCheck", body, HOLDER_CHECK, (model.Meta.table_name, hash_key, range_key))


def held_by(lock_model: type[Lock], owner: Any) -> Condition:
    """A condition that the lock exists and still names ``owner``: an owner PK, ``None``
    (names nobody), or the raw value of an owner of the wrong type (``{"N": "5"}``: damage,
    compared as stored)."""
    condition: Condition
    if owner is None:
        condition = lock_model.PK.exists() & lock_model.owner.does_not_exist()
    else:
        condition = lock_model.owner == owner
    return condition
