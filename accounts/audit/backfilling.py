"""Backfill: the locks missing from a table whose accounts predate them, created, and the
locks whose key changed since they were written, re-keyed."""

from dataclasses import replace

from .findings import MISSING, ORPHANED, OWNER_CHANGED
from .repairs import repair_all
from .scan import run_audit


def is_backfilled(finding):
    """Whether backfill fixes ``finding``: a missing lock, or a lock keyed on a value its
    owner no longer maps to (the normalization or the Unicode data changed: a re-key)."""
    return finding.kind == MISSING or (finding.kind == ORPHANED and finding.owner_status == OWNER_CHANGED)


def backfill(*, dry_run=False, segments=1, progress=None, repair_progress=None, model_class=None):
    """Create every missing lock of a table whose accounts predate the locks, and re-key
    the locks whose key changed since they were written (new lock created, old released).

    Returns ``(report, repairs)``. Values held by several accounts are left alone (they are
    the report's ``duplicate`` findings, look-alike pairs included), as are the other kinds
    of finding; with ``dry_run`` nothing is written and ``repairs`` is empty.
    """
    report = run_audit(model_class, segments=segments, progress=progress)
    if dry_run:
        return report, []
    chosen = replace(report, findings=[finding for finding in report.findings if is_backfilled(finding)])
    return report, repair_all(chosen, kinds={MISSING, ORPHANED}, progress=repair_progress, model_class=model_class)
