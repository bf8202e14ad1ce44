"""Finding an item by a unique value: strongly consistent reads of the base table only.

A GSI is eventually consistent and cannot answer "is this taken?", so the only lookup is
GetItem on the lock item (consistent), then GetItem on its owner (consistent). Reads go
through :mod:`accounts.dynamo`'s client, under the request deadline. An item whose
``expires`` has passed is absent here, as in every guard: TTL deletes it days late.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import Any, TypeVar

from pynamodb.models import Model

from . import dynamo
from .tables import lock_model_for
from .tables.raw import is_gone, is_tombstone, raw_text
from .uniqueness import LOCK_SORT_KEY, MAX_KEY_BYTES, UniqueConstraint, keys_in_namespace

Item = TypeVar("Item", bound=Model)
# A raw DynamoDB item or key, as botocore gives and takes it: {name: {type: value}}.
Raw = dict[str, Any]


def can_be_a_key(value: Any) -> bool:
    """Whether DynamoDB could hold ``value`` as a partition key: a key it would refuse
    (over 2,048 bytes, or not text at all) names no item, so a lookup of it finds nothing
    rather than failing (a URL with a 3,000-character id is a 404, not a 500)."""
    try:
        return 0 < len(value.encode("utf-8")) <= MAX_KEY_BYTES
    except UnicodeEncodeError:
        return False


class _Along:
    """Items to read with a lock lookup (raw keys), then what that read found."""

    def __init__(self, keys: Sequence[Raw]) -> None:
        self.keys = keys
        self.found: dict[tuple[str, str], Raw] | None = None  # {(PK, SK): raw item} once read

    def answer(self, key: Raw) -> tuple[bool, Raw | None]:
        """``(True, raw item or None)`` when ``key`` was read along, else ``(False, None)``."""
        if self.found is None or key not in self.keys:
            return False, None
        raw = self.found.get((key["PK"]["S"], key["SK"]["S"]))
        return True, None if raw is None or is_gone(raw) else raw


def _along(model_class: type[Model], hash_keys: Iterable[str]) -> _Along | None:
    """The :class:`_Along` of the items of ``model_class`` at ``hash_keys`` (its default sort
    key), or ``None`` when none of them can be a key."""
    range_key = _default_range_key(model_class)
    keys = [_raw_key(model_class, hash_key, range_key) for hash_key in hash_keys if can_be_a_key(hash_key)]
    return _Along(keys) if keys else None


def lock_owner(model_class: type[Model], key: str, along: _Along | None = None) -> str | None:
    """The PK of the item holding lock ``key``, or ``None`` when nobody holds it; ``along``
    (an :class:`_Along`): items to read in the same ``BatchGetItem`` as the lock."""
    lock_model = lock_model_for(model_class)
    if along is not None and along.found is None and lock_model.Meta.table_name == dynamo.table_name():
        lock_key = dynamo.key(key, LOCK_SORT_KEY)
        items = dynamo.batch_get([lock_key, *along.keys])
        along.found = {(raw["PK"]["S"], raw["SK"]["S"]): raw for raw in items}
        lock = along.found.get((key, LOCK_SORT_KEY))
        lock = None if lock is None or is_gone(lock) else lock
    else:
        lock = _get_raw(lock_model, key, LOCK_SORT_KEY)
    # An owner of another type than a string (damage) names no item: nobody holds the value.
    return raw_text(lock.get("owner")) if lock is not None else None


def _default_range_key(model_class: type[Model]) -> Any:
    range_attribute = model_class._range_key_attribute()
    return range_attribute.default if range_attribute is not None else None


def get_item(model_class: type[Item], hash_key: str, along: _Along | None = None) -> Item | None:
    """The item with this partition key (sort key: the model's default), or ``None``; from
    ``along`` (an :class:`_Along`) when it was read there."""
    if not can_be_a_key(hash_key):
        return None
    range_key = _default_range_key(model_class)
    read, raw = along.answer(_raw_key(model_class, hash_key, range_key)) if along is not None else (False, None)
    if not read:
        raw = _get_raw(model_class, hash_key, range_key)
    return None if raw is None else model_class.from_raw_data(raw)


def was_deleted(model_class: type[Model], hash_key: str) -> bool:
    """Whether the item at this partition key was deleted and left its tombstone there
    (consistent read): its key is never used again."""
    raw = _get_raw(model_class, hash_key, _default_range_key(model_class), gone_too=True)
    return raw is not None and is_tombstone(raw)


def _raw_key(model_class: type[Model], hash_key: str, range_key: Any = None) -> Raw:
    key: Raw = {}
    attributes = (model_class._hash_key_attribute(), hash_key), (model_class._range_key_attribute(), range_key)
    for attribute, value in attributes:
        if attribute is not None:
            key[attribute.attr_name] = {attribute.attr_type: attribute.serialize(value)}
    return key


def _get_raw(model_class: type[Model], hash_key: str, range_key: Any = None, gone_too: bool = False) -> Raw | None:
    """The raw item at this key (a consistent GetItem), or ``None``; an expired item or a
    tombstone is absent (unless ``gone_too``): TTL deletes expired items days late."""
    key = _raw_key(model_class, hash_key, range_key)
    answer = dynamo.call("get_item", TableName=model_class.Meta.table_name, Key=key, ConsistentRead=True)
    raw = answer.get("Item")
    return None if raw is None or (is_gone(raw) and not gone_too) else raw


def _get_with_partition(model_class: type[Item], hash_key: str) -> tuple[Item | None, list[Raw]]:
    """``(item, others)``: the item at ``hash_key`` (``None`` when absent or expired), read
    with every other item of its partition (``others``, raw) in one ``Query``."""
    # PynamoDB's helper is unannotated: untyped_calls_exclude allows it on Model, not on a TypeVar.
    model: type[Model] = model_class
    sort_key = model._range_key_attribute().default
    items = dynamo.query_partition(hash_key)
    raw = next((item for item in items if item["SK"]["S"] == sort_key), None)
    others = [item for item in items if item is not raw]
    return (None if raw is None or is_gone(raw) else model_class.from_raw_data(raw)), others


def get_by_unique(
    model_class: type[Item], constraint: UniqueConstraint, *values: object, likely: Iterable[str] = ()
) -> Item | None:
    """The item holding ``values`` under ``constraint`` (scope values first), or ``None``.

    ``likely``: partition keys of items of ``model_class`` the value probably names (the
    accounts a browser logged in to before), read in the same ``BatchGetItem`` as the lock:
    when one of them holds it, the lookup costs one request instead of two.

    A lock whose owner is gone, or no longer holds the value, finds nothing: such a lock is
    damage for the staff audit to repair, never a reason to return the wrong item. The owner
    holds the value under any of its constraints of the namespace: an account's address is
    found whether it is the primary or one of its others.
    """
    key = constraint.key_for(*values)
    along = _along(model_class, likely) if likely else None
    owner = lock_owner(model_class, key, along)
    if owner is None:
        return None
    item = get_item(model_class, owner, along)
    if item is None or key not in keys_in_namespace(item, constraint.namespace):
        return None
    return item


def get_by_unique_with_partition(
    model_class: type[Item], constraint: UniqueConstraint, *values: object
) -> tuple[Item | None, list[Raw]]:
    """``(item, others)``: the item holding ``values`` under ``constraint`` as
    :func:`get_by_unique` finds it, read with its whole partition in one ``Query`` instead of
    one ``GetItem`` (the same request count), and the raw items found there besides it
    (``[]`` when nobody holds the value). A login learns this way how many sessions the
    account has, without a request of its own."""
    key = constraint.key_for(*values)
    owner = lock_owner(model_class, key)
    if owner is None:
        return None, []
    if model_class.Meta.table_name == dynamo.table_name() and can_be_a_key(owner):
        item, others = _get_with_partition(model_class, owner)
    else:
        item, others = get_item(model_class, owner), []
    if item is None or key not in keys_in_namespace(item, constraint.namespace):
        return None, others
    return item, others
