"""What the audit finds: one lock key out of step with the items (a :class:`Finding`), and
the :class:`Report` of one audit.

A finding is one of, by the invariant it breaks:

- ``duplicate`` (I1, each lock key has at most one live owner): several items hold one
  value; only a person can choose who keeps it;
- ``transient``: a duplicate one of whose holders expires within the clock-skew margin
  (``ACCOUNTS_CLOCK_SKEW_MARGIN``) of now: by another server's clock that holder may have
  expired already and its value been taken legitimately. It resolves itself when that
  holder expires: nothing for a person to choose (deleting the other holder would delete
  the rightful one);
- ``missing`` (I2, every value a live item holds is locked by that item): an item holds a
  value that has no lock;
- ``wrong_owner`` (I2): one item holds the value, but the lock names another item (or none);
- ``orphaned`` (I3, no lock is left without a live owner holding its value): a lock whose
  value nobody holds (it names no owner, its owner is gone, or its owner's value no longer
  normalizes to the key);
- ``malformed``: an item read with an attribute of the wrong type (damage: an operator's
  raw write, such as ``expires`` as a string or ``owner`` as a number), a lock item (its
  ``owner`` or ``expires``) or an audited item (its ``expires`` or the values its locks are
  keyed on). Reads never fail on one (see :class:`accounts.tables.TableModel`); the repair
  writes it again as it is read: a lock for its one holder, or released when nobody holds
  its value; an item's values as read;
- ``unrecorded``: an item holds its locks (they name it) but does not record their keys in
  ``lock_keys`` (an item written before items recorded them): a change would compute the
  keys to release instead of reading them; ``accounts_backfill`` records them;
- ``invalid``: an item's value cannot become a lock key (empty or too long);
- ``undeclared``: locks in a namespace no audited model declares, so nothing can check
  them (one finding per namespace, with how many locks it holds);
- ``damaged``, ``no_credential``, ``stray_credential``: second factors out of step with
  their items and locks, for a person to look at (see :mod:`.factors`);
- ``stray_entry``, ``missing_entry`` (R1, a registry lists exactly its members): an entry of
  the staff registry (``PK=STAFF``) whose account is gone or no active staff (items written
  outside the app), which the last-staff guard would count as another member; an active
  staff account with no entry. The repair deletes or puts the entry, guarded by the account
  as read (or still gone), as ``accounts_backfill --staff`` does.

The audit reads the table page by page, so one value's holders may show up on different
pages: :class:`Findings` merges what each page saw of a lock key into one finding.
"""

import threading
from dataclasses import dataclass, field, replace
from datetime import datetime

from django.utils.translation import gettext as _

from ..app_settings import app_settings
from ..tables import TTL_ATTRIBUTE, epoch_now, raw_expires, raw_text
from ..transactions import LOCK_KEYS, recorded_keys

ORPHANED, MISSING, WRONG_OWNER, DUPLICATE, INVALID = "orphaned", "missing", "wrong_owner", "duplicate", "invalid"
TRANSIENT, MALFORMED, UNRECORDED = "transient", "malformed", "unrecorded"
UNDECLARED = "undeclared"
DAMAGED, NO_CREDENTIAL, STRAY_CREDENTIAL = "damaged", "no_credential", "stray_credential"
STRAY_ENTRY, MISSING_ENTRY = "stray_entry", "missing_entry"
KINDS = (
    ORPHANED,
    MISSING,
    WRONG_OWNER,
    DUPLICATE,
    TRANSIENT,
    MALFORMED,
    UNRECORDED,
    INVALID,
    UNDECLARED,
    DAMAGED,
    NO_CREDENTIAL,
    STRAY_CREDENTIAL,
    STRAY_ENTRY,
    MISSING_ENTRY,
)
# Second factors' findings: one item each, merged with nothing else (see merge_key).
FACTOR_KINDS = (DAMAGED, NO_CREDENTIAL, STRAY_CREDENTIAL)
# A registry's findings: one entry each, its key the member's PK, merged with nothing else.
REGISTRY_KINDS = (STRAY_ENTRY, MISSING_ENTRY)
REPAIRABLE = frozenset({ORPHANED, MISSING, WRONG_OWNER, MALFORMED, UNRECORDED, STRAY_ENTRY, MISSING_ENTRY})
# The invariant each kind of finding breaks (see the module docstring); ``invalid`` breaks
# none: such a value holds no lock, and the engine refuses to write one.
INVARIANT_OF = {
    DUPLICATE: "I1",
    MISSING: "I2",
    WRONG_OWNER: "I2",
    ORPHANED: "I3",
    STRAY_ENTRY: "R1",
    MISSING_ENTRY: "R1",
}

# Why a lock's owner does not hold the lock's value.
NO_OWNER, OWNER_GONE, OWNER_CHANGED = "no_owner", "owner_gone", "owner_changed"


@dataclass(frozen=True)
class UndeclaredNamespace:
    """Stands for the constraint of a lock namespace that no audited model declares."""

    namespace: str
    fields: tuple = ()
    lookalike: bool = False


@dataclass(frozen=True)
class RegistryName:
    """Stands for the constraint of a registry's finding: the registry's partition (``STAFF``)."""

    namespace: str
    fields: tuple = ()
    lookalike: bool = False


@dataclass(frozen=True)
class DamagedLock:
    """A lock item read with its ``owner`` or ``expires`` of the wrong type: ``owner`` is its
    owner when that is a string (else ``None``), ``stored`` the raw values of the damaged
    attributes, as the repair's guard compares them."""

    owner: str
    stored: dict


def lock_as_read(raw):
    """What the audit keeps of a raw lock item: its owner (``None``: it names nobody), or a
    :class:`DamagedLock` when its owner or ``expires`` has the wrong type."""
    stored = {}
    if "owner" in raw and raw_text(raw["owner"]) is None:
        stored["owner"] = raw["owner"]
    if TTL_ATTRIBUTE in raw and raw_expires(raw) is None:
        stored[TTL_ATTRIBUTE] = raw[TTL_ATTRIBUTE]
    owner = raw_text(raw.get("owner"))
    return DamagedLock(owner, stored) if stored else owner


@dataclass(frozen=True)
class Finding:
    """One lock key (or, for ``invalid`` and a ``malformed`` item, one account) out of step.

    ``owner`` is the lock's owner as read (``None`` when the lock is absent or names nobody),
    ``owner_status`` says why that owner does not hold the value, and ``holders`` lists the
    PKs of the accounts whose value normalizes to ``key``. For ``malformed``, ``malformed``
    names the attributes of the wrong type and ``stored`` keeps them as stored; ``key`` is
    the lock's, or the item's own PK when the damage is on the item.
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
    malformed: tuple = ()
    stored: dict = field(default=None, compare=False, repr=False)

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
    def on_item(self):
        """Whether this finding is on an item (its ``key`` is the item's), not on a lock: a
        ``malformed`` item, or an ``unrecorded`` one."""
        return self.kind in (MALFORMED, UNRECORDED) and self.key in self.holders

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
            "attributes": _(" and ").join(self.malformed),
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
            "malformed": list(self.malformed),
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
        TRANSIENT: _(
            "Accounts %(holders)s hold this %(fields)s, but one of them expires within the clock-skew "
            "margin: by another server's clock it may have expired already. This resolves itself when it "
            "expires; nothing to choose."
        ),
        MALFORMED: (
            _(
                "Account %(holder)s's %(attributes)s is stored with the wrong type: "
                "the repair writes it again as it is read."
            )
            if finding.on_item
            else _(
                "The lock's %(attributes)s is stored with the wrong type: "
                "the repair writes the lock again as it should be."
            )
        ),
        UNRECORDED: _(
            "Account %(holder)s holds its locks but does not record their keys (it was written before "
            "accounts recorded them): the repair records them."
        ),
        INVALID: _("Account %(holder)s's %(fields)s cannot be locked: %(detail)s"),
        UNDECLARED: _(
            "%(count)d lock(s) in namespace %(namespace)s (such as %(key)s), which no audited model declares, "
            "so nothing checks them: add the model that declares it to ACCOUNTS_UNIQUE_MODELS."
        ),
        DAMAGED: _(
            "%(key)s: the %(attributes)s of a second factor (%(namespace)s) is stored with the wrong type. "
            "No repair can rebuild it: have the owner of %(holder)s set that factor up again."
        ),
        NO_CREDENTIAL: _(
            "Account %(holder)s lists this passkey and holds its lock, but its credential item is gone: "
            "the passkey cannot be used. Have the owner register it again."
        ),
        STRAY_CREDENTIAL: _(
            "The credential item %(key)s is not listed by account %(holder)s and no lock names that account "
            "for it: it was left behind."
        ),
        STRAY_ENTRY: _(
            "The %(namespace)s registry lists %(key)s, which is gone or no active member: the last-staff "
            "guard would count it. The repair deletes the entry."
        ),
        MISSING_ENTRY: _(
            "Account %(key)s is an active member of the %(namespace)s registry but has no entry in it: "
            "the repair puts it."
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


def _expires_soon(item, now):
    """Whether ``item`` expires within the clock-skew margin of ``now`` (another server's
    clock may say it has expired)."""
    expires = getattr(item, TTL_ATTRIBUTE, None)
    return expires is not None and expires - now <= app_settings.CLOCK_SKEW_MARGIN.total_seconds()


def _examine(constraint, key, lock_exists, owner, holders, accounts, model=None, now=None):
    """The finding for one lock key, or ``None`` when it is as it should be.

    ``accounts`` holds every item read (PK -> item), so an owner missing from it is gone.
    """
    now = epoch_now() if now is None else now
    damaged = owner if isinstance(owner, DamagedLock) else None
    owner = damaged.owner if damaged else owner
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
        transient = any(_expires_soon(accounts[pk], now) for pk in holders if pk in accounts)
        return Finding(TRANSIENT if transient else DUPLICATE, **base)
    if damaged:
        return Finding(MALFORMED, malformed=tuple(sorted(damaged.stored)), stored=damaged.stored, **base)
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
    value, its item and namespace; for a finding on an item, its kind and item; for an
    undeclared namespace, the namespace."""
    if finding.on_item or finding.kind in FACTOR_KINDS or finding.kind in REGISTRY_KINDS:
        return (finding.kind, finding.namespace, finding.key)
    if finding.kind == INVALID:
        return (INVALID, finding.namespace, finding.holders)
    if finding.kind == UNDECLARED:
        return (UNDECLARED, finding.namespace)
    return finding.key


def merged(first, second):
    """One finding from two of one :func:`merge_key`, or ``None`` when together they say
    the lock is as it should be: the holders of both, the lock as either saw it."""
    if first.kind == INVALID or first.on_item or first.kind in FACTOR_KINDS or first.kind in REGISTRY_KINDS:
        return first
    if first.kind == UNDECLARED:
        return replace(first, count=first.count + second.count)
    items = {**first.items, **second.items}
    damaged = next((seen for seen in (first, second) if seen.kind == MALFORMED), None)
    saw_lock = damaged or (first if first.lock_exists else second)
    owner = DamagedLock(damaged.owner, damaged.stored) if damaged else saw_lock.owner
    holders = set(first.holders) | set(second.holders)
    finding = _examine(first.constraint, first.key, saw_lock.lock_exists, owner, holders, items, first.model)
    return None if finding is None else replace(finding, items=items)


def owner_named(lock_owner):
    """The owner a lock as read names (a :class:`DamagedLock`'s when its owner is a string)."""
    return lock_owner.owner if isinstance(lock_owner, DamagedLock) else lock_owner


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


def records_lock(model, constraint, recorded, key):
    """Whether an item of ``model`` holding lock ``key`` of ``constraint``, and recording
    ``recorded`` in its slot (a key; a set-valued constraint's map of elements to keys;
    ``None``: nothing), records that lock as it should: a model without ``lock_keys``
    records none, and the keys of a set-valued constraint that is not
    :attr:`~accounts.uniqueness.UniqueConstraint.recorded` are never recorded (computed
    again, they are the same)."""
    if LOCK_KEYS not in model.get_attributes() or (constraint.many and not constraint.recorded):
        return True
    if isinstance(recorded, dict):
        return key in recorded.values()
    return recorded == key


def _is_unrecorded(constraint, key, holder):
    """Whether ``holder``, which holds lock ``key`` (it names it), records its keys and not
    this one."""
    return not records_lock(type(holder), constraint, recorded_keys(holder).get(constraint.record_slot), key)


def unrecorded_finding(pk, keys, constraints, model=None):
    """The ``unrecorded`` finding of item ``pk``: it holds ``keys`` (namespace -> key) but
    does not record them; ``stored`` keeps them for the repair."""
    return Finding(UNRECORDED, constraints[0], pk, True, holders=(pk,), model=model, stored=keys)
