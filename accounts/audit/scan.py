"""The audit's read: one parallel Scan of the table, and the audit (:func:`run_audit`)
that compares the locks it read with the items."""

import threading
import time
from concurrent.futures import ThreadPoolExecutor

from .. import transactions
from ..tables import TOMBSTONE_ATTRIBUTE, TTL_ATTRIBUTE, epoch_now, is_gone
from ..uniqueness import LOCK_SORT_KEY, constraints_of
from .findings import KINDS, Report, find_problems, lock_as_read
from .scope import audited_models
from .undeclared import UndeclaredLocks


def _model_of(raw, models):
    """The audited model a raw scanned item belongs to, or ``None`` (a lock, or not ours)."""
    pk = raw.get("PK", {}).get("S", "")
    sort_key = raw.get("SK", {}).get("S")
    for model in models:
        if pk.startswith(model.key_prefix) and sort_key == transactions.actions._default_range_key(model):
            return model
    return None


class _ScanTally:
    """Items scanned so far across segments, reported to ``progress`` as they arrive."""

    def __init__(self, progress):
        self._lock = threading.Lock()
        self._progress = progress
        self.scanned = 0

    def add(self, count):
        with self._lock:
            self.scanned += count
            if self._progress is not None:
                self._progress(self.scanned)


def _scan_segment(connection, segment, total_segments, attributes, tally):
    items = []
    start = None
    while True:
        # Consistent reads, so the audit does not report a change committed just before it.
        page = connection.scan(
            segment=segment,
            total_segments=total_segments,
            exclusive_start_key=start,
            consistent_read=True,
            attributes_to_get=attributes,
        )
        items.extend(page.get("Items", ()))
        tally.add(page.get("ScannedCount", 0))
        start = page.get("LastEvaluatedKey")
        if start is None:
            return items


def scan_table(model_class=None, *, segments=1, progress=None, undeclared=None):
    """Read every audited item and every lock of their constraints with a parallel Scan.

    Covers ``model_class`` alone when given, else every model of :func:`audited_models`.
    Returns ``(items, locks, scanned)``: PK -> item (key and unique values only), lock key
    -> owner (``None`` when the lock names nobody; a ``DamagedLock`` when its owner or
    ``expires`` has the wrong type), and the number of items scanned.
    ``progress(scanned)`` is called after each page, from the scanning threads;
    ``undeclared`` (an :class:`~accounts.audit.undeclared.UndeclaredLocks`) counts the
    other locks.

    One pass reads every kind of item through the table connection, which is what
    ``Model.scan(segment=, total_segments=)`` sends: ``Model.scan`` would map every item to
    one model class, and an account model drops a lock's ``owner``. Items of other models
    sharing the table, and locks of other namespaces, are left out: they are not ours.
    """
    models = [model_class] if model_class is not None else audited_models()
    if segments < 1:
        raise ValueError("segments must be at least 1.")
    constraints = [constraint for model in models for constraint in constraints_of(model)]
    connection = models[0]._get_connection()
    # PynamoDB builds its botocore client lazily; build it once here rather than in every thread.
    connection.connection.client  # noqa: B018
    # Only what the comparison and the repair guards read: keys, owners, unique values.
    unique_names = set()
    for model in models:
        declared = model.get_attributes()
        unique_names.update(
            declared[name].attr_name for constraint in constraints_of(model) for name in constraint.guarded_attributes
        )
    kept = {"PK", "SK", "owner", TTL_ATTRIBUTE, TOMBSTONE_ATTRIBUTE, transactions.LOCK_KEYS}
    attributes = sorted(kept | unique_names)
    tally = _ScanTally(progress)
    with ThreadPoolExecutor(max_workers=segments) as pool:
        pages = list(
            pool.map(lambda segment: _scan_segment(connection, segment, segments, attributes, tally), range(segments))
        )
    items, locks = {}, {}
    now = epoch_now()
    for page in pages:
        for raw in page:
            pk = raw.get("PK", {}).get("S", "")
            if is_gone(raw, now):
                # Expired (TTL has not deleted it yet), or a deleted item's tombstone: absent.
                # Nothing to find or repair.
                continue
            model = _model_of(raw, models)
            if model is not None:
                items[pk] = model.from_raw_data(raw)
            elif raw.get("SK", {}).get("S") == LOCK_SORT_KEY and any(c.owns_key(pk) for c in constraints):
                locks[pk] = lock_as_read(raw)
            elif undeclared is not None and raw.get("SK", {}).get("S") == LOCK_SORT_KEY:
                undeclared.add(pk)
    return items, locks, tally.scanned


def run_audit(model_class=None, *, segments=1, progress=None):
    """Scan the table and return a :class:`Report` of every lock out of step.

    Covers ``model_class`` alone when given, else the accounts and every model of
    ``ACCOUNTS_UNIQUE_MODELS``. ``segments`` > 1 reads the table with that many parallel
    Scan segments; ``progress`` is called with the number of items scanned so far. An
    audit of every model also counts the locks the configuration no longer declares
    (:mod:`accounts.audit.undeclared`).
    """
    models = [model_class] if model_class is not None else audited_models()
    started = time.perf_counter()
    # Only an audit of every model can tell that no constraint declares a namespace.
    undeclared = None if model_class else UndeclaredLocks([c for model in models for c in constraints_of(model)])
    items, locks, scanned = scan_table(model_class, segments=segments, progress=progress, undeclared=undeclared)
    findings = []
    for model in models:
        findings.extend(find_problems(items, locks, constraints_of(model), model))
    findings.sort(key=lambda finding: (KINDS.index(finding.kind), finding.key or "", finding.holders))
    seconds = time.perf_counter() - started
    return Report(items, locks, scanned, segments, seconds, findings, undeclared.counts if undeclared else {})
