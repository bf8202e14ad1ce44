"""Finding an item by a unique value: strongly consistent reads of the base table only.

A GSI is eventually consistent and cannot answer "is this taken?", so the only lookup is
GetItem on the lock item (consistent), then GetItem on its owner (consistent). An item
whose ``expires`` has passed is absent here, as in every guard: TTL deletes it days late.
"""

from pynamodb.exceptions import DoesNotExist

from .tables import is_expired, lock_model_for
from .uniqueness import LOCK_SORT_KEY


def lock_owner(model_class, key):
    """The PK of the item holding lock ``key``, or ``None`` when nobody holds it."""
    lock_model = lock_model_for(model_class)
    try:
        lock = lock_model.get(key, LOCK_SORT_KEY, consistent_read=True)
    except DoesNotExist:
        return None
    return None if is_expired(lock) else lock.owner


def get_item(model_class, hash_key):
    """The item with this partition key (sort key: the model's default), or ``None``."""
    range_attribute = model_class._range_key_attribute()
    range_key = range_attribute.default if range_attribute is not None else None
    try:
        item = model_class.get(hash_key, range_key, consistent_read=True)
    except DoesNotExist:
        return None
    return None if is_expired(item) else item


def get_by_unique(model_class, constraint, *values):
    """The item holding ``values`` under ``constraint`` (scope values first), or ``None``.

    A lock whose owner is gone, or no longer holds the value, finds nothing: such a lock is
    damage for the staff audit to repair, never a reason to return the wrong item.
    """
    key = constraint.key_for(*values)
    owner = lock_owner(model_class, key)
    if owner is None:
        return None
    item = get_item(model_class, owner)
    if item is None or constraint.lock_key(item) != key:
        return None
    return item
