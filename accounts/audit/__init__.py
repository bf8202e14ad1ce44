"""The lock audit: lock items out of step with the accounts, their guarded repair, backfill.

Lock items are plumbing nobody sees until a signup fails mysteriously or a person cannot
reclaim an old handle. The audit reads the whole table (a Scan: acceptable on this staff
path, never on a person's request) and compares, key by key, the lock items with the
values the items hold: the accounts and every model listed in ``ACCOUNTS_UNIQUE_MODELS``
(each declared constraint of each).

Expired items (an unverified sign-up past its ``expires``, and its locks) and the
tombstones deleted accounts leave are absent to the audit as to every read, though TTL may
not have deleted them yet; an item with an attribute of the wrong type is read anyway and
reported ``malformed``. An unverified account
holds no email lock (the email is a partial constraint), so it is never ``missing`` one,
and no repair gives an address to an account that has not verified it.

Its parts, whose public names are all importable from here:

- :mod:`accounts.audit.findings`: the kinds of finding, ``Finding``, ``Report``, and how
  locks and items are compared;
- :mod:`accounts.audit.scope`: the models and constraints the audit covers;
- :mod:`accounts.audit.scan`: the parallel Scan of the table, and ``run_audit``;
- :mod:`accounts.audit.repairs`: the guarded repairs, of a report or of one lock key;
- :mod:`accounts.audit.backfilling`: ``backfill``, for a table whose accounts predate
  their locks;
- :mod:`accounts.audit.locks`: the locks one account should hold, as they stand.
"""

from .backfilling import backfill, is_backfilled
from .findings import (
    DUPLICATE,
    INVALID,
    INVARIANT_OF,
    KINDS,
    MALFORMED,
    MISSING,
    NO_OWNER,
    ORPHANED,
    OWNER_CHANGED,
    OWNER_GONE,
    REPAIRABLE,
    TRANSIENT,
    UNRECORDED,
    WRONG_OWNER,
    DamagedLock,
    Finding,
    Report,
    find_problems,
    lock_as_read,
)
from .locks import LockState, lock_states
from .repairs import (
    ACTION_OF,
    CHANGED,
    CLAIMED,
    FAILED,
    NOT_REPAIRABLE,
    NOTHING_TO_DO,
    RECORDED,
    RELEASED,
    REPAIR_WORKERS,
    REPAIRED,
    REWRITTEN,
    TRANSFERRED,
    Repair,
    action_of,
    examine_item,
    examine_key,
    plan_repair,
    remaining,
    repair,
    repair_all,
    repair_key,
)
from .scan import run_audit, scan_table
from .scope import audited_models, constraint_for_namespace, model_and_constraint

__all__ = [
    "ACTION_OF",
    "CHANGED",
    "CLAIMED",
    "DUPLICATE",
    "FAILED",
    "INVALID",
    "INVARIANT_OF",
    "KINDS",
    "MALFORMED",
    "MISSING",
    "NOT_REPAIRABLE",
    "NOTHING_TO_DO",
    "NO_OWNER",
    "RECORDED",
    "ORPHANED",
    "OWNER_CHANGED",
    "OWNER_GONE",
    "RELEASED",
    "REPAIRABLE",
    "REPAIRED",
    "REPAIR_WORKERS",
    "REWRITTEN",
    "TRANSFERRED",
    "TRANSIENT",
    "UNRECORDED",
    "WRONG_OWNER",
    "DamagedLock",
    "Finding",
    "LockState",
    "Repair",
    "Report",
    "action_of",
    "audited_models",
    "backfill",
    "constraint_for_namespace",
    "examine_item",
    "examine_key",
    "find_problems",
    "is_backfilled",
    "lock_as_read",
    "lock_states",
    "model_and_constraint",
    "plan_repair",
    "remaining",
    "repair",
    "repair_all",
    "repair_key",
    "run_audit",
    "scan_table",
]
