"""The lock audit: lock items out of step with the accounts, their guarded repair, backfill.

Lock items are plumbing nobody sees until a signup fails mysteriously or a person cannot
reclaim an old handle. The audit reads the whole table (a Scan: acceptable on this staff
path, never on a person's request) and compares, key by key, the lock items with the
values the items hold: the accounts and every model listed in ``ACCOUNTS_UNIQUE_MODELS``
(each declared constraint of each). A finding is one of, by the invariant it breaks:

- ``duplicate`` (I1, each lock key has at most one live owner): several items hold one
  value; only a person can choose who keeps it;
- ``missing`` (I2, every value a live item holds is locked by that item): an item holds a
  value that has no lock;
- ``wrong_owner`` (I2): one item holds the value, but the lock names another item (or none);
- ``orphaned`` (I3, no lock is left without a live owner holding its value): a lock whose
  value nobody holds (it names no owner, its owner is gone, or its owner's value no longer
  normalizes to the key);
- ``invalid``: an item's value cannot become a lock key (empty or too long).

Expired items (an unverified sign-up past its ``expires``, and its locks) are absent to the
audit as to every read, though TTL may not have deleted them yet. An unverified account
holds no email lock (the email is a partial constraint), so it is never ``missing`` one,
and no repair gives an address to an account that has not verified it.

The first three are repaired one guarded transaction each (built by
:mod:`accounts.transactions`): the lock must still be as read and every account involved
must still hold what was read, so a repair never clobbers a concurrent legitimate change.
When anything moved, DynamoDB cancels the repair and it is reported as ``changed``.
"""

import threading
import time
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field, replace

from django.utils.module_loading import import_string
from django.utils.translation import gettext as _
from pynamodb.exceptions import DoesNotExist

from . import lookups, transactions
from .app_settings import app_settings
from .exceptions import InvalidUniqueValue, StaleItem, UniquenessError
from .tables import TTL_ATTRIBUTE, account_pk, epoch_now, get_account_model, is_expired, lock_model_for
from .uniqueness import LOCK_SORT_KEY, constraints_of

ORPHANED, MISSING, WRONG_OWNER, DUPLICATE, INVALID = "orphaned", "missing", "wrong_owner", "duplicate", "invalid"
KINDS = (ORPHANED, MISSING, WRONG_OWNER, DUPLICATE, INVALID)
REPAIRABLE = frozenset({ORPHANED, MISSING, WRONG_OWNER})
# The invariant each kind of finding breaks (see the module docstring); ``invalid`` breaks
# none: such a value holds no lock, and the engine refuses to write one.
INVARIANT_OF = {DUPLICATE: "I1", MISSING: "I2", WRONG_OWNER: "I2", ORPHANED: "I3"}

# Why a lock's owner does not hold the lock's value.
NO_OWNER, OWNER_GONE, OWNER_CHANGED = "no_owner", "owner_gone", "owner_changed"

# How a repair ended.
REPAIRED, CHANGED, FAILED, NOT_REPAIRABLE, NOTHING_TO_DO = (
    "repaired",
    "changed",
    "failed",
    "not_repairable",
    "nothing_to_do",
)
RELEASED, CLAIMED, TRANSFERRED = "released", "claimed", "transferred"
ACTION_OF = {ORPHANED: RELEASED, MISSING: CLAIMED, WRONG_OWNER: TRANSFERRED}

# Transactions on different locks never conflict, so repairs run side by side.
REPAIR_WORKERS = 8


@dataclass(frozen=True)
class Finding:
    """One lock key (or, for ``invalid``, one account value) out of step.

    ``owner`` is the lock's owner as read (``None`` when the lock is absent or names nobody),
    ``owner_status`` says why that owner does not hold the value, and ``holders`` lists the
    PKs of the accounts whose value normalizes to ``key``.
    """

    kind: str
    constraint: object = field(compare=False, repr=False)
    key: str = None
    lock_exists: bool = False
    owner: str = None
    owner_status: str = None
    holders: tuple = ()
    detail: str = ""
    # The model declaring ``constraint`` (the account model when not given).
    model: object = field(default=None, compare=False, repr=False)

    @property
    def namespace(self):
        """The namespace of the constraint concerned (``EMAIL``, ``HANDLE``)."""
        return self.constraint.namespace

    @property
    def fields(self):
        """The account fields of the constraint concerned."""
        return self.constraint.fields

    @property
    def invariant(self):
        """The invariant this finding breaks (``I1``, ``I2``, ``I3``), or ``None``."""
        return INVARIANT_OF.get(self.kind)

    @property
    def repairable(self):
        """Whether a guarded transaction can fix this without a person choosing."""
        return self.kind in REPAIRABLE

    @property
    def holder(self):
        """The one account holding the value (``missing``, ``wrong_owner``), else ``None``."""
        return self.holders[0] if len(self.holders) == 1 else None

    def describe(self):
        """What is wrong, in a sentence for staff (in the active language)."""
        params = {
            "fields": _(" and ").join(self.fields),
            "owner": self.owner,
            "holder": self.holder,
            "holders": ", ".join(self.holders),
            "detail": self.detail,
        }
        return _describe_templates(self)[self.kind] % params

    def as_dict(self):
        """The finding as JSON-ready data."""
        return {
            "kind": self.kind,
            "invariant": self.invariant,
            "namespace": self.namespace,
            "fields": list(self.fields),
            "key": self.key,
            "lock_exists": self.lock_exists,
            "owner": self.owner,
            "owner_status": self.owner_status,
            "holders": list(self.holders),
            "description": self.describe(),
        }


def _describe_templates(finding):
    """The sentence of each finding kind, as ``finding``'s owner status words it."""
    orphaned = {
        NO_OWNER: _("The lock names no owner, and no account holds this value."),
        OWNER_GONE: _("The lock's owner %(owner)s does not exist."),
        OWNER_CHANGED: _("The lock's owner %(owner)s no longer holds this value."),
    }
    wrong_owner = {
        NO_OWNER: _("Account %(holder)s holds this %(fields)s, but the lock names no owner."),
        OWNER_GONE: _("Account %(holder)s holds this %(fields)s, but the lock names %(owner)s, which does not exist."),
        OWNER_CHANGED: _(
            "Account %(holder)s holds this %(fields)s, but the lock names %(owner)s, which holds another value."
        ),
    }
    if finding.constraint.lookalike:
        duplicate = _(
            "Accounts %(holders)s hold look-alike values of %(fields)s (one confusable skeleton); "
            "neither takes the lock until a person renames all but one."
        )
    else:
        duplicate = _(
            "Accounts %(holders)s hold this one %(fields)s; change all but one of them (a person has to choose)."
        )
    return {
        ORPHANED: orphaned.get(finding.owner_status),
        MISSING: _("Account %(holder)s holds this %(fields)s but has no lock."),
        WRONG_OWNER: wrong_owner.get(finding.owner_status),
        DUPLICATE: duplicate,
        INVALID: _("Account %(holder)s's %(fields)s cannot be locked: %(detail)s"),
    }


@dataclass
class Report:
    """What one audit read and found.

    ``accounts`` maps PK to each item as scanned (accounts, and the items of every model in
    ``ACCOUNTS_UNIQUE_MODELS``): its key and unique values only (the Scan reads nothing
    else), which is what the comparison and the repair guards need.
    """

    accounts: dict
    locks: dict
    scanned: int
    segments: int
    seconds: float
    findings: list

    @property
    def consistent(self):
        """No finding at all."""
        return not self.findings

    def of_kind(self, kind):
        """The findings of one kind, in key order."""
        return [finding for finding in self.findings if finding.kind == kind]

    def as_dict(self):
        """The report as JSON-ready data: every finding, and the keys of each kind."""
        data = {
            "consistent": self.consistent,
            "scanned": {
                "items": self.scanned,
                "accounts": len(self.accounts),
                "locks": len(self.locks),
                "segments": self.segments,
                "seconds": round(self.seconds, 3),
            },
        }
        for kind in KINDS:
            # An invalid value has no lock key: its account is what to look at.
            data[kind] = [finding.holder if kind == INVALID else finding.key for finding in self.of_kind(kind)]
        data["findings"] = [finding.as_dict() for finding in self.findings]
        return data


@dataclass(frozen=True)
class Repair:
    """How the repair of one finding ended: ``outcome`` is ``repaired``, ``changed`` (the
    table moved since it was read; nothing written), ``failed``, ``not_repairable`` or
    ``nothing_to_do``; ``action`` is ``released``, ``claimed`` or ``transferred``."""

    finding: Finding
    outcome: str
    action: str = None
    detail: str = ""

    @property
    def repaired(self):
        return self.outcome == REPAIRED

    def as_dict(self):
        """The repair as JSON-ready data."""
        return {
            "kind": self.finding.kind,
            "key": self.finding.key,
            "outcome": self.outcome,
            "action": self.action,
            "detail": self.detail,
        }


def _examine(constraint, key, lock_exists, owner, holders, accounts, model=None):
    """The finding for one lock key, or ``None`` when it is as it should be.

    ``accounts`` holds every item read (PK -> item), so an owner missing from it is gone.
    """
    holders = tuple(sorted(holders))
    base = {
        "constraint": constraint,
        "key": key,
        "lock_exists": lock_exists,
        "owner": owner,
        "holders": holders,
        "model": model,
    }
    if len(holders) > 1:
        return Finding(DUPLICATE, **base)
    if lock_exists and owner in holders:
        return None
    if not lock_exists:
        return Finding(MISSING, **base)
    if owner is None:
        owner_status = NO_OWNER
    elif owner not in accounts:
        owner_status = OWNER_GONE
    else:
        owner_status = OWNER_CHANGED
    return Finding(WRONG_OWNER if holders else ORPHANED, owner_status=owner_status, **base)


def audited_models():
    """The models whose constraints the audit covers: the account model, then each model of
    ``ACCOUNTS_UNIQUE_MODELS``. Each has ``key_prefix``, the start of its items' PK."""
    models = [get_account_model()]
    for path in app_settings.UNIQUE_MODELS:
        model = import_string(path) if isinstance(path, str) else path
        if model not in models:
            models.append(model)
    for model in models:
        if not getattr(model, "key_prefix", None):
            raise ValueError(f"{model.__name__} must declare key_prefix (the start of its items' PK) to be audited.")
    return models


def _model_of(raw, models):
    """The audited model a raw scanned item belongs to, or ``None`` (a lock, or not ours)."""
    pk = raw.get("PK", {}).get("S", "")
    sort_key = raw.get("SK", {}).get("S")
    for model in models:
        if pk.startswith(model.key_prefix) and sort_key == transactions.actions._default_range_key(model):
            return model
    return None


def find_problems(accounts, locks, constraints, model=None):
    """Every finding for these items (PK -> item) and locks (key -> owner or ``None``).

    With ``model``, only its items hold values under ``constraints`` (its own); every item
    still counts as a live owner.
    """
    findings = []
    holding = {pk: item for pk, item in accounts.items() if model is None or type(item) is model}
    for constraint in constraints:
        holders = {}
        for pk, account in holding.items():
            try:
                key = constraint.lock_key(account)
            except InvalidUniqueValue as error:
                # A look-alike lock is keyed on the same value: it is reported once, here.
                if not constraint.lookalike:
                    findings.append(Finding(INVALID, constraint, holders=(pk,), detail=error.message, model=model))
                continue
            if key is not None:
                holders.setdefault(key, []).append(pk)
        keys = set(holders) | {key for key in locks if constraint.owns_key(key)}
        for key in keys:
            finding = _examine(constraint, key, key in locks, locks.get(key), holders.get(key, ()), accounts, model)
            if finding is not None:
                findings.append(finding)
    findings.sort(key=lambda finding: (KINDS.index(finding.kind), finding.key or "", finding.holders))
    return findings


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


def scan_table(model_class=None, *, segments=1, progress=None):
    """Read every audited item and every lock of their constraints with a parallel Scan.

    Covers ``model_class`` alone when given, else every model of :func:`audited_models`.
    Returns ``(items, locks, scanned)``: PK -> item (key and unique values only), lock key
    -> owner (``None`` when the lock names nobody), and the number of items scanned.
    ``progress(scanned)`` is called after each page, from the scanning threads.

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
    attributes = sorted({"PK", "SK", "owner", TTL_ATTRIBUTE, *unique_names})
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
            if TTL_ATTRIBUTE in raw and int(raw[TTL_ATTRIBUTE]["N"]) < now:
                # Expired: absent, though TTL has not deleted it yet. Nothing to find or repair.
                continue
            model = _model_of(raw, models)
            if model is not None:
                items[pk] = model.from_raw_data(raw)
            elif raw.get("SK", {}).get("S") == LOCK_SORT_KEY and any(c.owns_key(pk) for c in constraints):
                locks[pk] = raw.get("owner", {}).get("S")
    return items, locks, tally.scanned


def run_audit(model_class=None, *, segments=1, progress=None):
    """Scan the table and return a :class:`Report` of every lock out of step.

    Covers ``model_class`` alone when given, else the accounts and every model of
    ``ACCOUNTS_UNIQUE_MODELS``. ``segments`` > 1 reads the table with that many parallel
    Scan segments; ``progress`` is called with the number of items scanned so far.
    """
    models = [model_class] if model_class is not None else audited_models()
    started = time.perf_counter()
    items, locks, scanned = scan_table(model_class, segments=segments, progress=progress)
    findings = []
    for model in models:
        findings.extend(find_problems(items, locks, constraints_of(model), model))
    findings.sort(key=lambda finding: (KINDS.index(finding.kind), finding.key or "", finding.holders))
    return Report(items, locks, scanned, segments, time.perf_counter() - started, findings)


def plan_repair(finding, accounts, model_class=None):
    """The guarded transaction repairing ``finding``, given the items as read (PK -> item)."""
    model = finding.model or model_class or get_account_model()
    constraint = finding.constraint
    owner_item = accounts.get(finding.owner) if finding.owner else None
    if finding.kind == MISSING:
        return transactions.plan_claim_lock(accounts[finding.holder], constraint)
    if finding.kind == WRONG_OWNER:
        return transactions.plan_transfer_lock(accounts[finding.holder], constraint, finding.owner, owner_item)
    if finding.kind == ORPHANED:
        return transactions.plan_release_lock(model, constraint, finding.key, finding.owner, owner_item)
    raise ValueError(f"A {finding.kind} finding has no automatic repair.")


def repair(finding, accounts, model_class=None):
    """Repair ``finding`` with one guarded transaction; returns a :class:`Repair`.

    ``accounts`` holds the accounts as read (PK -> item); the transaction checks that the
    lock and those accounts are still as read, so a concurrent change wins.
    """
    if not finding.repairable:
        return Repair(finding, NOT_REPAIRABLE, detail=finding.describe())
    try:
        transactions.run(plan_repair(finding, accounts, model_class))
    except StaleItem:
        return Repair(finding, CHANGED, detail="The lock or an account changed since it was read; nothing was written.")
    except UniquenessError as error:
        return Repair(finding, FAILED, detail=str(error))
    return Repair(finding, REPAIRED, ACTION_OF[finding.kind])


def repair_all(report, *, kinds=REPAIRABLE, workers=REPAIR_WORKERS, progress=None, model_class=None):
    """Repair every finding of ``kinds`` in ``report``, each in its own guarded transaction.

    Returns the :class:`Repair` of each finding attempted, in the report's order;
    ``progress(done, total)`` is called as repairs finish.
    """
    chosen = [finding for finding in report.findings if finding.kind in kinds and finding.repairable]
    done = 0
    done_lock = threading.Lock()

    def attempt(finding):
        nonlocal done
        result = repair(finding, report.accounts, model_class)
        with done_lock:
            done += 1
            if progress is not None:
                progress(done, len(chosen))
        return result

    with ThreadPoolExecutor(max_workers=max(1, workers)) as pool:
        return list(pool.map(attempt, chosen))


def remaining(report, repairs):
    """The findings of ``report`` still standing after ``repairs``."""
    fixed = {id(result.finding) for result in repairs if result.repaired}
    return [finding for finding in report.findings if id(finding) not in fixed]


def model_and_constraint(namespace, model_class=None):
    """``(model, constraint)`` of lock ``namespace`` among ``model_class`` (default: every
    audited model); raises ``KeyError`` when there is none."""
    for model in [model_class] if model_class is not None else audited_models():
        for constraint in constraints_of(model):
            if constraint.namespace == namespace:
                return model, constraint
    raise KeyError(f"No audited constraint has namespace {namespace!r}.")


def constraint_for_namespace(namespace, model_class=None):
    """The audited constraint of ``namespace``; raises ``KeyError`` when there is none."""
    return model_and_constraint(namespace, model_class)[1]


def _read_lock(model, key):
    """``(exists, owner)`` of lock ``key``, read consistently."""
    try:
        lock = lock_model_for(model).get(key, LOCK_SORT_KEY, consistent_read=True)
    except DoesNotExist:
        return False, None
    if is_expired(lock):
        return False, None
    return True, lock.owner


def examine_key(namespace, key, holder_ids=(), model_class=None):
    """Re-read lock ``key``, its owner and the accounts ``holder_ids`` (consistent GetItems).

    Returns ``(finding or None, accounts read)``. Point reads cannot see an account outside
    ``holder_ids`` holding the value; the audit's Scan can, and names them in the finding.
    """
    model, constraint = model_and_constraint(namespace, model_class)
    if not constraint.owns_key(key):
        raise KeyError(f"{key!r} is not a lock key of namespace {namespace!r}.")
    lock_exists, owner = _read_lock(model, key)
    accounts = {}
    holder_pks = {pk if pk.startswith(model.key_prefix) else account_pk(pk) for pk in holder_ids}
    for pk in holder_pks | ({owner} if owner else set()):
        account = lookups.get_item(model, pk)
        if account is not None:
            accounts[pk] = account
    holders = []
    for pk, account in accounts.items():
        try:
            if constraint.lock_key(account) == key:
                holders.append(pk)
        except InvalidUniqueValue:
            continue
    if not lock_exists and not holders:
        return None, accounts
    return _examine(constraint, key, lock_exists, owner, holders, accounts, model), accounts


def repair_key(kind, namespace, key, holder_ids=(), model_class=None):
    """Repair lock ``key`` as staff saw it (a finding of ``kind``), after reading it again.

    Nothing is written when the lock is now fine (``nothing_to_do``) or is now out of step
    in another way than ``kind`` (``changed``): staff should look again before acting.
    """
    finding, accounts = examine_key(namespace, key, holder_ids, model_class)
    if finding is None:
        seen = Finding(kind, constraint_for_namespace(namespace, model_class), key=key)
        return Repair(seen, NOTHING_TO_DO, detail="The lock is already as it should be.")
    if finding.kind != kind:
        return Repair(finding, CHANGED, detail=f"The lock changed since the audit: {finding.describe()}")
    return repair(finding, accounts, model_class)


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


@dataclass(frozen=True)
class LockState:
    """One lock an account should hold, as it stands: ``status`` is ``ok``, ``missing``,
    ``other_owner`` (held by another item), ``no_owner`` or ``invalid`` (the value cannot
    be a lock key)."""

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
        return {"missing": MISSING, "other_owner": WRONG_OWNER, "no_owner": WRONG_OWNER}.get(self.status)


def lock_states(account):
    """The lock of each of ``account``'s unique values, read consistently (one GetItem each)."""
    model = type(account)
    states = []
    for constraint in constraints_of(model):
        try:
            key = constraint.lock_key(account)
        except InvalidUniqueValue as error:
            states.append(LockState(constraint, None, False, None, "invalid", error.message))
            continue
        if key is None:
            continue
        exists, owner = _read_lock(model, key)
        if not exists:
            status = "missing"
        elif owner is None:
            status = "no_owner"
        else:
            status = "ok" if owner == account.PK else "other_owner"
        states.append(LockState(constraint, key, exists, owner, status))
    return states
