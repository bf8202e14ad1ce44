"""The lock audit: lock items out of step with the accounts, their guarded repair, backfill.

Lock items are plumbing nobody sees until a signup fails mysteriously or a person cannot
reclaim an old handle. The audit reads the whole table (a parallel Scan: a staff command,
never a person's request, or a DynamoDB export) once, into rows, and joins the lock items
with the values the items hold in one query: the accounts and every model listed in
``ACCOUNTS_UNIQUE_MODELS`` (each declared constraint of each). What the join finds is read
again by key before it is reported (see docs/audit.md). Memory is bounded by a page per
thread and the join's ``ACCOUNTS_AUDIT_MEMORY_LIMIT``, not the table.

Expired items (an unverified sign-up past its ``expires``, and its locks) and the
tombstones deleted accounts leave are absent to the audit as to every read, though TTL may
not have deleted them yet; an item with an attribute of the wrong type is read anyway and
reported ``malformed``. An unverified account
holds no email lock (the email is a partial constraint), so it is never ``missing`` one,
and no repair gives an address to an account that has not verified it.

Its parts, whose public names are all importable from here:

- :mod:`accounts.audit.findings`: the kinds of finding, ``Finding``, ``Report``, and how
  what different pages saw of one key is merged;
- :mod:`accounts.audit.scope`: the models and constraints the audit covers;
- :mod:`accounts.audit.checking`: the rules: what an item holds, what is out of step;
- :mod:`accounts.audit.rows`: what the workers keep of each item read, as Parquet rows;
- :mod:`accounts.audit.joining`: ``findings.sql``, the one query over the rows (DuckDB);
- :mod:`accounts.audit.confirming`: the candidates read again, the findings they show;
- :mod:`accounts.audit.exports`: DynamoDB exports to S3, read and written;
- :mod:`accounts.audit.reading`: the reads, paced by a read-unit budget, backing off
  when throttled;
- :mod:`accounts.audit.scan`: the drivers, ``run_audit`` (threads or one slice of N),
  ``run_export_audit``, ``run_findings_audit``;
- :mod:`accounts.audit.checkpoints`: where a run got to, to continue a stopped one;
- :mod:`accounts.audit.records`: reports as JSON documents, and merging slices' reports;
- :mod:`accounts.audit.repairs`: the guarded repairs, of a report or of one lock key;
- :mod:`accounts.audit.backfilling`: ``backfill``, for a table whose accounts predate
  their locks;
- :mod:`accounts.audit.locks`: the locks one account should hold, as they stand.
"""

from .backfilling import backfill, is_backfilled
from .checkpoints import Checkpoint
from .exports import ExportWriter, InvalidExport, read_export, write_export
from .findings import (
    DUPLICATE,
    INVALID,
    INVARIANT_OF,
    KINDS,
    MALFORMED,
    MISSING,
    MISSING_ENTRY,
    NO_OWNER,
    ORPHANED,
    OWNER_CHANGED,
    OWNER_GONE,
    REPAIRABLE,
    STRAY_ENTRY,
    TRANSIENT,
    UNDECLARED,
    UNRECORDED,
    WRONG_OWNER,
    DamagedLock,
    Finding,
    Findings,
    Report,
    lock_as_read,
)
from .joining import InvalidFindings, read_findings
from .locks import LockState, lock_states
from .reading import ReadBudget
from .records import InvalidReport, merge_reports, report_document, report_from_document
from .repairs import (
    ACTION_OF,
    CHANGED,
    CLAIMED,
    FAILED,
    LISTED,
    NOT_REPAIRABLE,
    NOTHING_TO_DO,
    RECORDED,
    RELEASED,
    REPAIR_WORKERS,
    REPAIRED,
    REWRITTEN,
    TRANSFERRED,
    UNLISTED,
    Repair,
    action_of,
    examine_entry,
    examine_item,
    examine_key,
    plan_repair,
    remaining,
    repair,
    repair_all,
    repair_key,
)
from .scan import AuditStopped, estimated_items, run_audit, run_export_audit, run_findings_audit
from .scope import audited_models, constraint_for_namespace, model_and_constraint

__all__ = [
    "ACTION_OF",
    "AuditStopped",
    "CHANGED",
    "Checkpoint",
    "CLAIMED",
    "DUPLICATE",
    "FAILED",
    "LISTED",
    "INVALID",
    "INVARIANT_OF",
    "KINDS",
    "MALFORMED",
    "MISSING",
    "MISSING_ENTRY",
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
    "STRAY_ENTRY",
    "TRANSIENT",
    "UNDECLARED",
    "UNRECORDED",
    "UNLISTED",
    "WRONG_OWNER",
    "DamagedLock",
    "ExportWriter",
    "Finding",
    "Findings",
    "InvalidExport",
    "InvalidFindings",
    "InvalidReport",
    "LockState",
    "ReadBudget",
    "Repair",
    "Report",
    "action_of",
    "audited_models",
    "backfill",
    "constraint_for_namespace",
    "estimated_items",
    "examine_entry",
    "examine_item",
    "examine_key",
    "is_backfilled",
    "lock_as_read",
    "lock_states",
    "merge_reports",
    "model_and_constraint",
    "plan_repair",
    "read_export",
    "read_findings",
    "remaining",
    "repair",
    "repair_all",
    "repair_key",
    "report_document",
    "report_from_document",
    "run_audit",
    "run_export_audit",
    "run_findings_audit",
    "write_export",
]
