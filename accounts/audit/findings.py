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
- ``invalid``: an item's value cannot become a lock key (empty or too long).
"""

from dataclasses import dataclass, field

from django.utils.translation import gettext as _

from ..app_settings import app_settings
from ..exceptions import InvalidUniqueValue
from ..tables import TTL_ATTRIBUTE, epoch_now, malformed_attributes, raw_expires, raw_text
from ..transactions import LOCK_KEYS, recorded_keys

ORPHANED, MISSING, WRONG_OWNER, DUPLICATE, INVALID = "orphaned", "missing", "wrong_owner", "duplicate", "invalid"
TRANSIENT, MALFORMED, UNRECORDED = "transient", "malformed", "unrecorded"
KINDS = (ORPHANED, MISSING, WRONG_OWNER, DUPLICATE, TRANSIENT, MALFORMED, UNRECORDED, INVALID)
REPAIRABLE = frozenset({ORPHANED, MISSING, WRONG_OWNER, MALFORMED, UNRECORDED})
# The invariant each kind of finding breaks (see the module docstring); ``invalid`` breaks
# none: such a value holds no lock, and the engine refuses to write one.
INVARIANT_OF = {DUPLICATE: "I1", MISSING: "I2", WRONG_OWNER: "I2", ORPHANED: "I3"}

# Why a lock's owner does not hold the lock's value.
NO_OWNER, OWNER_GONE, OWNER_CHANGED = "no_owner", "owner_gone", "owner_changed"


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
    # Locks of the app's own namespaces that no constraint declares: namespace -> count
    # (see accounts.audit.undeclared). No repair touches them.
    undeclared: dict = field(default_factory=dict)

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
        data["undeclared"] = dict(sorted(self.undeclared.items()))
        return data


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


def _is_unrecorded(constraint, key, holder):
    """Whether ``holder``, which holds lock ``key`` (it names it), records its keys and not
    this one (a set-valued constraint's keys are never recorded: computed again, they are the
    same)."""
    if constraint.many or LOCK_KEYS not in type(holder).get_attributes():
        return False
    return recorded_keys(holder).get(constraint.namespace) != key


def unrecorded_finding(pk, keys, constraints, model=None):
    """The ``unrecorded`` finding of item ``pk``: it holds ``keys`` (namespace -> key) but
    does not record them; ``stored`` keeps them for the repair."""
    return Finding(UNRECORDED, constraints[0], pk, True, holders=(pk,), model=model, stored=keys)


def find_problems(accounts, locks, constraints, model=None):
    """Every finding for these items (PK -> item) and locks (key -> owner or ``None``).

    With ``model``, only its items hold values under ``constraints`` (its own); every item
    still counts as a live owner.
    """
    findings = []
    now = epoch_now()
    holding = {pk: item for pk, item in accounts.items() if model is None or type(item) is model}
    for pk, item in holding.items():
        stored = malformed_attributes(item)
        if stored and constraints:
            malformed = tuple(sorted(stored))
            item_finding = {"holders": (pk,), "model": model, "malformed": malformed, "stored": stored}
            findings.append(Finding(MALFORMED, constraints[0], pk, True, **item_finding))
    unrecorded = {}
    for constraint in constraints:
        holders = {}
        for pk, account in holding.items():
            try:
                keys = constraint.lock_keys(account)
            except InvalidUniqueValue as error:
                # A look-alike lock is keyed on the same value: it is reported once, here.
                if not constraint.lookalike:
                    findings.append(Finding(INVALID, constraint, holders=(pk,), detail=error.message, model=model))
                continue
            for key in keys:
                holders.setdefault(key, []).append(pk)
        keys = set(holders) | {key for key in locks if constraint.owns_key(key)}
        for key in keys:
            finding = _examine(
                constraint, key, key in locks, locks.get(key), holders.get(key, ()), accounts, model, now
            )
            if finding is not None:
                findings.append(finding)
            elif key in holders and _is_unrecorded(constraint, key, holding[holders[key][0]]):
                unrecorded.setdefault(holders[key][0], {})[constraint.namespace] = key
    for pk, keys in unrecorded.items():
        findings.append(unrecorded_finding(pk, keys, constraints, model))
    findings.sort(key=lambda finding: (KINDS.index(finding.kind), finding.key or "", finding.holders))
    return findings
