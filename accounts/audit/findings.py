"""What the audit finds: one lock key out of step with the items (a :class:`Finding`), and
the :class:`Report` of one audit.

A finding is one of, by the invariant it breaks:

- ``duplicate`` (I1, each lock key has at most one live owner): several items hold one
  value; only a person can choose who keeps it;
- ``missing`` (I2, every value a live item holds is locked by that item): an item holds a
  value that has no lock;
- ``wrong_owner`` (I2): one item holds the value, but the lock names another item (or none);
- ``orphaned`` (I3, no lock is left without a live owner holding its value): a lock whose
  value nobody holds (it names no owner, its owner is gone, or its owner's value no longer
  normalizes to the key);
- ``invalid``: an item's value cannot become a lock key (empty or too long);
- ``undeclared``: locks in a namespace no audited model declares, so nothing can check
  them (one finding per namespace, with how many locks it holds).

The audit reads the table page by page, so one value's holders may show up on different
pages: :class:`Findings` merges what each page saw of a lock key into one finding.
"""

import threading
from dataclasses import dataclass, field, replace
from datetime import datetime

from django.utils.translation import gettext as _


ORPHANED, MISSING, WRONG_OWNER, DUPLICATE, INVALID = "orphaned", "missing", "wrong_owner", "duplicate", "invalid"
UNDECLARED = "undeclared"
KINDS = (ORPHANED, MISSING, WRONG_OWNER, DUPLICATE, INVALID, UNDECLARED)
REPAIRABLE = frozenset({ORPHANED, MISSING, WRONG_OWNER})
# The invariant each kind of finding breaks (see the module docstring); ``invalid`` breaks
# none: such a value holds no lock, and the engine refuses to write one.
INVARIANT_OF = {DUPLICATE: "I1", MISSING: "I2", WRONG_OWNER: "I2", ORPHANED: "I3"}

# Why a lock's owner does not hold the lock's value.
NO_OWNER, OWNER_GONE, OWNER_CHANGED = "no_owner", "owner_gone", "owner_changed"


@dataclass(frozen=True)
class UndeclaredNamespace:
    """Stands for the constraint of a lock namespace that no audited model declares."""

    namespace: str
    fields: tuple = ()
    lookalike: bool = False


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
    # The items involved (holders, and the lock's owner when it exists), PK -> item as
    # read: what a repair's guards compare with. Empty when the finding was stored.
    items: dict = field(default_factory=dict, compare=False, repr=False)
    # How many locks an ``undeclared`` finding stands for.
    count: int = 1

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
            "namespace": self.namespace,
            "key": self.key,
            "count": self.count,
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
            **({"count": self.count} if self.kind == UNDECLARED else {}),
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
        UNDECLARED: _(
            "%(count)d lock(s) in namespace %(namespace)s (such as %(key)s), which no audited model declares, "
            "so nothing checks them: add the model that declares it to ACCOUNTS_UNIQUE_MODELS."
        ),
    }


@dataclass
class Report:
    """What one audit read and found: of the whole table, or of the Scan segments
    ``covered`` out of ``total_segments`` (a slice, see ``accounts_audit --segment``).

    Counts only: the audit keeps no item it read beyond its page (each finding carries the
    items it involves, as read). ``segments`` is how many segments were read side by side.
    """

    scanned: int
    accounts: int
    locks: int
    segments: int
    seconds: float
    findings: list
    total_segments: int = 1
    covered: tuple = (0,)
    run_id: str = ""
    started: datetime = None
    finished: datetime = None

    @property
    def consistent(self):
        """No finding at all."""
        return not self.findings

    @property
    def complete(self):
        """Whether every Scan segment of the table was read (not a slice)."""
        return tuple(sorted(self.covered)) == tuple(range(self.total_segments))

    def of_kind(self, kind):
        """The findings of one kind, in key order."""
        return [finding for finding in self.findings if finding.kind == kind]

    def as_dict(self):
        """The report as JSON-ready data: every finding, and the keys of each kind."""
        data = {
            "consistent": self.consistent,
            "scanned": {
                "items": self.scanned,
                "accounts": self.accounts,
                "locks": self.locks,
                "segments": self.segments,
                "seconds": round(self.seconds, 3),
            },
        }
        for kind in KINDS:
            data[kind] = [_listed(finding) for finding in self.of_kind(kind)]
        data["findings"] = [finding.as_dict() for finding in self.findings]
        return data


def _listed(finding):
    """What a report lists for ``finding``: its lock key; an invalid value has none (its
    item is what to look at), an undeclared namespace is named."""
    if finding.kind == INVALID:
        return finding.holder
    if finding.kind == UNDECLARED:
        return finding.namespace
    return finding.key


def sort_findings(findings):
    """``findings`` in report order: by kind, then key, then holders."""
    return sorted(findings, key=lambda finding: (KINDS.index(finding.kind), finding.key or "", finding.holders))


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


def merge_key(finding):
    """What two findings must share to be about one thing: the lock key; for an invalid
    value, its item and namespace; for an undeclared namespace, the namespace."""
    if finding.kind == INVALID:
        return (INVALID, finding.namespace, finding.holders)
    if finding.kind == UNDECLARED:
        return (UNDECLARED, finding.namespace)
    return finding.key


def merged(first, second):
    """One finding from two of one :func:`merge_key`, or ``None`` when together they say
    the lock is as it should be: the holders of both, the lock as either saw it."""
    if first.kind == INVALID:
        return first
    if first.kind == UNDECLARED:
        return replace(first, count=first.count + second.count)
    items = {**first.items, **second.items}
    saw_lock = first if first.lock_exists else second
    holders = set(first.holders) | set(second.holders)
    finding = _examine(first.constraint, first.key, saw_lock.lock_exists, saw_lock.owner, holders, items, first.model)
    return None if finding is None else replace(finding, items=items)


class Findings:
    """The findings of one run, merged by :func:`merge_key` as they come in from the
    scanning threads (a value's holders may be read on different pages)."""

    def __init__(self, findings=()):
        self._lock = threading.Lock()
        self._by_key = {}
        for finding in findings:
            self.add(finding)

    def add(self, finding):
        """Merge ``finding`` in; returns whether its key was new."""
        key = merge_key(finding)
        with self._lock:
            known = self._by_key.get(key)
            if known is None:
                self._by_key[key] = finding
                return True
            combined = merged(known, finding)
            if combined is None:
                del self._by_key[key]
            else:
                self._by_key[key] = combined
            return False

    def __len__(self):
        return len(self._by_key)

    def sorted(self):
        """Every finding, in report order."""
        with self._lock:
            return sort_findings(self._by_key.values())
