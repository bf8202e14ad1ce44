"""Backfill: the locks missing from a table whose accounts predate them, created, the locks
whose key changed since they were written, re-keyed, and the keys accounts hold, recorded;
then the table records the key version its locks are keyed with."""

from dataclasses import replace

from ..tables import record_key_version
from .findings import MISSING, ORPHANED, OWNER_CHANGED, UNRECORDED
from .repairs import CLAIMED, repair_all
from .scan import run_audit


def is_backfilled(finding):
    """Whether backfill fixes ``finding``: a missing lock, a lock keyed on a value its owner
    no longer maps to (the normalization or the Unicode data changed: a re-key), or a lock
    its holder does not record."""
    return finding.kind in (MISSING, UNRECORDED) or (finding.kind == ORPHANED and finding.owner_status == OWNER_CHANGED)


def backfill(*, dry_run=False, segments=1, progress=None, repair_progress=None, model_class=None):
    """Create every missing lock of a table whose accounts predate the locks, re-key the
    locks whose key changed since they were written (new lock created, old released), and
    record in each account the keys of the locks it holds.

    Returns ``(report, repairs)``. Values held by several accounts are left alone (they are
    the report's ``duplicate`` findings, look-alike pairs included), as are the other kinds
    of finding; with ``dry_run`` nothing is written and ``repairs`` is empty. When every
    repair succeeded, the table records that its locks are keyed with this server's
    :data:`~accounts.identifiers.KEY_VERSION` (the system check ``accounts.E016`` compares).
    """
    report = run_audit(model_class, segments=segments, progress=progress)
    if dry_run:
        return report, []
    repairs = _repair(report, {MISSING, ORPHANED, UNRECORDED}, repair_progress, model_class)
    if any(result.repaired and result.action == CLAIMED for result in repairs):
        # A lock just created is recorded in its account once it exists: a second pass.
        again = run_audit(model_class, segments=segments)
        repairs += _repair(again, {UNRECORDED}, repair_progress, model_class)
    if all(result.repaired for result in repairs):
        record_key_version()
    return report, repairs


def _repair(report, kinds, progress, model_class):
    chosen = replace(report, findings=[finding for finding in report.findings if is_backfilled(finding)])
    return repair_all(chosen, kinds=kinds, progress=progress, model_class=model_class)
