"""The locks one account should hold, as they stand (the staff account page), read one
GetItem each."""

from dataclasses import dataclass

from pynamodb.exceptions import DoesNotExist

from ..exceptions import InvalidUniqueValue
from ..tables import is_expired, lock_model_for, malformed_attributes
from ..uniqueness import LOCK_SORT_KEY, constraints_of
from .findings import MALFORMED, MISSING, WRONG_OWNER, DamagedLock


def _read_lock(model, key):
    """``(exists, owner)`` of lock ``key``, read consistently; ``owner`` is a
    :class:`~.findings.DamagedLock` when the lock's owner or ``expires`` has the wrong type."""
    try:
        lock = lock_model_for(model).get(key, LOCK_SORT_KEY, consistent_read=True)
    except DoesNotExist:
        return False, None
    if is_expired(lock):
        return False, None
    stored = malformed_attributes(lock)
    if stored:
        return True, DamagedLock(None if "owner" in stored else lock.owner, stored)
    return True, lock.owner


@dataclass(frozen=True)
class LockState:
    """One lock an account should hold, as it stands: ``status`` is ``ok``, ``missing``,
    ``other_owner`` (held by another item), ``no_owner``, ``malformed`` (its owner or
    ``expires`` has the wrong type) or ``invalid`` (the value cannot be a lock key)."""

    constraint: object
    key: str
    exists: bool
    owner: str
    status: str
    detail: str = ""

    @property
    def fields(self):
        """The account fields of the constraint this lock is for."""
        return self.constraint.fields

    @property
    def repair_kind(self):
        """The finding kind a repair of this lock addresses, or ``None``."""
        return {"missing": MISSING, "other_owner": WRONG_OWNER, "no_owner": WRONG_OWNER, "malformed": MALFORMED}.get(
            self.status
        )


def lock_states(account):
    """The lock of each of ``account``'s unique values, read consistently (one GetItem each)."""
    model = type(account)
    states = []
    for constraint in constraints_of(model):
        try:
            keys = constraint.lock_keys(account)
        except InvalidUniqueValue as error:
            states.append(LockState(constraint, None, False, None, "invalid", error.message))
            continue
        for key in keys:
            exists, owner = _read_lock(model, key)
            if not exists:
                status = "missing"
            elif isinstance(owner, DamagedLock):
                owner, status = owner.owner, "malformed"
            elif owner is None:
                status = "no_owner"
            else:
                status = "ok" if owner == account.PK else "other_owner"
            states.append(LockState(constraint, key, exists, owner, status))
    return states
