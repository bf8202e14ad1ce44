"""Finding an item by a unique value: strongly consistent reads of the base table only.

A GSI is eventually consistent and cannot answer "is this taken?", so the only lookup is
GetItem on the lock item (consistent), then GetItem on its owner (consistent).
"""

from pynamodb.exceptions import DoesNotExist

from .tables import lock_model_for
from .uniqueness import LOCK_SORT_KEY, MAX_KEY_BYTES


def can_be_a_key(value):
    """Whether DynamoDB could hold ``value`` as a partition key: a key it would refuse
    (over 2,048 bytes, or not text at all) names no item, so a lookup of it finds nothing
    rather than failing (a URL with a 3,000-character id is a 404, not a 500)."""
    try:
        return 0 < len(value.encode("utf-8")) <= MAX_KEY_BYTES
    except UnicodeEncodeError:
        return False


def lock_owner(model_class, key):
    """The PK of the item holding lock ``key``, or ``None`` when nobody holds it."""
    lock_model = lock_model_for(model_class)
    try:
        return lock_model.get(key, LOCK_SORT_KEY, consistent_read=True).owner
    except DoesNotExist:
        return None


def get_item(model_class, hash_key):
    """The item with this partition key (sort key: the model's default), or ``None``."""
    if not can_be_a_key(hash_key):
        return None
    range_attribute = model_class._range_key_attribute()
    range_key = range_attribute.default if range_attribute is not None else None
    try:
        return model_class.get(hash_key, range_key, consistent_read=True)
    except DoesNotExist:
        return None


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
