"""The audit's checks of one Scan page, with nothing kept beyond the page.

For each audited item of the page (an account, an item of ``ACCOUNTS_UNIQUE_MODELS``) the
locks its values map to are read, and for each lock of the page its owner: one consistent
``BatchGetItem`` (100 keys a request) for both. Then, key by key:

- :func:`check_held_value`: an item holds a value; its lock must exist and name it (I2),
  and when it names another item that holds the value too, the value is held twice (I1);
- :func:`check_lock`: a lock must name a live owner that holds its value (I3);
- :func:`check_item_values`: a value that cannot become a lock key is ``invalid``;
- a lock of a namespace no audited model declares is ``undeclared``;
- an item or lock read with an attribute of the wrong type is ``malformed`` (an item's, in
  the namespace of the constraint the attribute is a value of), and an item that holds its
  locks without recording their keys is ``unrecorded``;
- second factors: :func:`.factors.check_factors` (the account's factors against the
  partition's credential items and TOTP records and the credential locks).

A lock naming another item is resolved with a second read of that item (rare: only damage
needs it). Each check yields a finding of what this page saw; :class:`.findings.Findings`
merges what different pages saw of one key.
"""

from dataclasses import dataclass, replace
from types import SimpleNamespace

from pynamodb.constants import NULL

from ..exceptions import InvalidUniqueValue
from ..tables import TOMBSTONE_ATTRIBUTE, TTL_ATTRIBUTE, is_gone, malformed_attributes, raw_expires
from ..transactions import LOCK_KEYS
from ..uniqueness import LOCK_PREFIX, LOCK_SORT_KEY, constraints_of
from .factors import SCANNED_ATTRIBUTES, UNREBUILDABLE, WEBAUTHN, check_factors
from .findings import (
    INVALID,
    MALFORMED,
    UNDECLARED,
    Finding,
    UndeclaredNamespace,
    _examine,
    lock_as_read,
    owner_named,
    records_lock,
    unrecorded_finding,
)


def default_sort_key(model):
    """The sort key of a model's items (``PROFILE`` for accounts), or ``None``."""
    range_attribute = model._range_key_attribute()
    return range_attribute.default if range_attribute is not None else None


def model_path(model):
    """The dotted path naming ``model`` in reports: ``accounts.tables.Account``."""
    return f"{model.__module__}.{model.__qualname__}"


def namespace_of(lock_key):
    """The namespace of a lock key: ``UNIQ#EMAIL#a@b.c`` -> ``EMAIL``."""
    return lock_key[len(LOCK_PREFIX) :].partition("#")[0]


class Scope:
    """What an audit covers: the models, the constraint behind each lock namespace, and the
    attributes a read needs (keys, owners, expiry, and every attribute a lock key or a
    repair guard is built from).

    ``others``: audited models this run leaves out (an audit of one model); their locks
    are skipped, not ``undeclared``.
    """

    def __init__(self, models, others=()):
        self.models = tuple(models)
        self.skipped = {constraint.namespace for model in others for constraint in constraints_of(model)}
        self.constraints = {model: constraints_of(model) for model in self.models}
        self.sort_keys = {model: default_sort_key(model) for model in self.models}
        self._by_namespace = {
            constraint.namespace: (model, constraint) for model in self.models for constraint in self.constraints[model]
        }
        names = {"PK", "SK", "owner", TTL_ATTRIBUTE, TOMBSTONE_ATTRIBUTE, LOCK_KEYS}
        self._values = {}
        for model in self.models:
            declared = model.get_attributes()
            guarded = {name for constraint in self.constraints[model] for name in constraint.guarded_attributes}
            self._values[model] = [(name, declared[name]) for name in sorted(guarded)]
            names.update(declared[name].attr_name for name in guarded)
        if WEBAUTHN in self._by_namespace:
            names.update(SCANNED_ATTRIBUTES)
        self.attributes = sorted(names)

    def model_of(self, pk):
        """The audited model whose items' PKs start like ``pk``, or ``None``."""
        for model in self.models:
            if pk.startswith(model.key_prefix):
                return model
        return None

    def item_model(self, pk, sort_key):
        """The model of an audited item at this key, or ``None`` (a lock, a session...)."""
        model = self.model_of(pk)
        return model if model is not None and sort_key == self.sort_keys[model] else None

    def declared(self, lock_key):
        """``(model, constraint)`` of a lock key's namespace, or ``None`` when undeclared."""
        return self._by_namespace.get(namespace_of(lock_key))

    def constraint_of(self, namespace):
        """``(model, constraint)`` of ``namespace``, or ``None`` when no model declares it."""
        return self._by_namespace.get(namespace)

    def model_named(self, path):
        """The audited model whose dotted path is ``path``, or ``None``."""
        return next((model for model in self.models if model_path(model) == path), None)

    def item(self, model, raw):
        """An audited item as read (see :class:`ItemRead`)."""
        return ItemRead(model, raw, self._values[model])

    def item_key(self, model, pk):
        """The raw key of the item ``pk`` of ``model``."""
        sort_key = self.sort_keys[model]
        return {"PK": {"S": pk}, "SK": {"S": sort_key}} if sort_key is not None else {"PK": {"S": pk}}


def is_live(raw, now):
    """Whether a raw item counts as present: not expired (past its ``expires`` it is
    absent, though TTL may not have deleted it yet) and not a deleted item's tombstone."""
    return not is_gone(raw, now)


class ItemRead:
    """An audited item as a page read it: ``values`` holds the attributes its lock keys are
    built from, as ``model.from_raw_data`` would (a missing one takes the attribute's
    default), without building a PynamoDB model instance, which only a finding needs
    (:meth:`instance`): the audit reads every item of the table. An item with an attribute
    of the wrong type (damage) is read as its model reads it; ``malformed`` holds those
    attributes as stored (see :func:`accounts.tables.malformed_attributes`)."""

    __slots__ = ("model", "raw", "values", "malformed", "_instance")

    def __init__(self, model, raw, attributes):
        self.model = model
        self.raw = raw
        self._instance = None
        self.malformed = {}
        try:
            self.values = SimpleNamespace(**_values_of(raw, attributes))
        except (TypeError, ValueError, KeyError):
            self._read_damaged(attributes)
            return
        if TTL_ATTRIBUTE in raw and raw_expires(raw) is None:
            self._read_damaged(attributes)

    def _read_damaged(self, attributes):
        instance = self.instance()
        self.malformed = malformed_attributes(instance)
        self.values = SimpleNamespace(**{name: getattr(instance, name) for name, _ in attributes})

    def instance(self):
        """The item as a PynamoDB model instance (what a repair's guards compare with)."""
        if self._instance is None:
            self._instance = self.model.from_raw_data(self.raw)
        return self._instance


def _values_of(raw, attributes):
    values = {}
    for name, attribute in attributes:
        value = raw.get(attribute.attr_name)
        if value and NULL not in value:
            values[name] = attribute.deserialize(attribute.get_value(value))
        else:
            default = attribute.default
            values[name] = default() if callable(default) else default
    return values


@dataclass
class PageCounts:
    """What one page held: items scanned, audited items, locks of audited namespaces."""

    scanned: int = 0
    accounts: int = 0
    locks: int = 0


def holds(item, model, constraint, key):
    """Whether ``item`` (an :class:`ItemRead`) holds lock ``key`` of ``model``'s ``constraint``."""
    if item.model is not model:
        return False
    try:
        return key in constraint.lock_keys(item.values)
    except InvalidUniqueValue:
        return False


def check_item_values(pk, item, constraints):
    """``(held, findings)`` of one audited item (an :class:`ItemRead`): the ``(constraint,
    lock key)`` of each value it holds (each element of a set-valued one), and an ``invalid`` finding for each value that
    cannot be a lock key."""
    held, findings = [], []
    for constraint in constraints:
        try:
            keys = constraint.lock_keys(item.values)
        except InvalidUniqueValue as error:
            # A look-alike lock is keyed on the same value: it is reported once, on the value.
            if not constraint.lookalike:
                findings.append(
                    Finding(
                        INVALID,
                        constraint,
                        holders=(pk,),
                        detail=error.message,
                        model=item.model,
                        items={pk: item.instance()},
                    )
                )
            continue
        held.extend((constraint, key) for key in keys)
    return held, findings


def check_held_value(model, constraint, key, holder, item, lock_owner, lock_exists, owner_item, now):
    """The finding for ``holder`` (``item``) holding ``key``, given the lock as read
    (``lock_exists``, ``lock_owner``: a :class:`~.findings.DamagedLock` when damaged) and
    the lock's owner item as read (``None``: gone), or ``None`` when the lock names this
    holder. Items are :class:`ItemRead`."""
    if lock_exists and lock_owner == holder:
        return None
    owner = owner_named(lock_owner)
    holders, items = {holder}, {holder: item.instance()}
    if owner_item is not None:
        items[owner] = owner_item.instance()
        if holds(owner_item, model, constraint, key):
            holders.add(owner)
    finding = _examine(constraint, key, lock_exists, lock_owner, holders, items, model, now)
    return None if finding is None else replace(finding, items=items)


def check_lock(model, constraint, key, lock_owner, owner_item, now):
    """The finding for lock ``key`` naming ``lock_owner`` (a :class:`~.findings.DamagedLock`
    when damaged; ``owner_item`` its :class:`ItemRead`, ``None``: gone), or ``None`` when
    the owner holds the lock's value. Holders other than the owner are found from their own
    side (:func:`check_held_value`)."""
    owner = owner_named(lock_owner)
    holders = (owner,) if owner_item is not None and holds(owner_item, model, constraint, key) else ()
    if holders and owner == lock_owner:
        return None
    damaged_owner = owner_item is not None and owner_item.model is model and unreadable(owner_item, constraint)
    if owner == lock_owner and damaged_owner:
        # The owner's values of this constraint are damaged: its own finding says so, and
        # its repair rebuilds them; releasing the lock now would lose the value for good.
        return None
    items = {owner: owner_item.instance()} if owner_item is not None else {}
    finding = _examine(constraint, key, True, lock_owner, holders, items, model, now)
    return replace(finding, items=items)


def records(item, constraint, key):
    """Whether ``item`` (an :class:`ItemRead`, which holds lock ``key``) records that key in
    its ``lock_keys`` as it should (:func:`.findings.records_lock`), read from the raw item
    without building the model instance."""
    recorded = item.raw.get(LOCK_KEYS, {}).get("M", {}).get(constraint.namespace, {})
    return records_lock(item.model, constraint, recorded.get("S"), key)


def unreadable(item, constraint):
    """Whether ``item`` (an :class:`ItemRead`) was read with a value of ``constraint`` of the
    wrong type."""
    return any(name in item.malformed for name in constraint.fields)


def check_item(pk, item, constraints):
    """The ``malformed`` findings of an item read with attributes of the wrong type: one per
    namespace, each attribute in that of the constraint it is a value of (the others, such
    as ``expires``, in the first constraint's). A second factor's attribute is left to
    :mod:`.factors`, which reports it ``damaged`` (no repair writes it again as read)."""
    stored = {name: value for name, value in item.malformed.items() if name not in UNREBUILDABLE}
    if not stored or not constraints:
        return []
    groups = {}
    for name in sorted(stored):
        constraint = next((each for each in constraints if name in each.fields), constraints[0])
        groups.setdefault(constraint.namespace, (constraint, {}))[1][name] = stored[name]
    return [
        Finding(
            MALFORMED,
            constraint,
            pk,
            True,
            holders=(pk,),
            model=item.model,
            malformed=tuple(sorted(names)),
            stored=names,
            items={pk: item.instance()},
        )
        for constraint, names in groups.values()
    ]


def check_page(raw_items, scope, read, now):
    """Every finding on one Scan page, and its :class:`PageCounts`.

    ``read(keys)`` returns the live raw items at ``keys`` (consistent reads); it is called
    at most three times: the locks the page's items hold and the owners of its locks, then
    the owners of locks found naming another item, then what the second factors' rules
    need (:func:`.factors.check_factors`: only for accounts with passkeys and credential
    items).
    """
    counts = PageCounts(scanned=len(raw_items))
    items, locks, undeclared, findings = {}, {}, {}, []
    for raw in raw_items:
        if not is_live(raw, now):
            continue
        pk, sort_key = raw["PK"]["S"], raw.get("SK", {}).get("S")
        model = scope.item_model(pk, sort_key)
        if model is not None:
            items[pk] = scope.item(model, raw)
        elif sort_key == LOCK_SORT_KEY and pk.startswith(LOCK_PREFIX):
            declared = scope.declared(pk)
            if declared is None and namespace_of(pk) in scope.skipped:
                continue
            if declared is None:
                namespace = namespace_of(pk)
                count, example = undeclared.get(namespace, (0, pk))
                undeclared[namespace] = (count + 1, example)
            else:
                locks[pk] = (*declared, lock_as_read(raw))
    counts.accounts, counts.locks = len(items), len(locks)
    held = []
    for pk, item in items.items():
        values, invalid = check_item_values(pk, item, scope.constraints[item.model])
        findings.extend(invalid)
        findings.extend(check_item(pk, item, scope.constraints[item.model]))
        held.extend((item.model, constraint, key, pk, item) for constraint, key in values)

    # First read: the lock of every value held here, the owner of every lock read here.
    read_items = _Items(scope, items)
    lock_keys = {key for _, _, key, _, _ in held if key not in locks}
    owners = {owner_named(owner) for _, _, owner in locks.values()} - {None}
    read_items.read(read, lock_keys, owners)

    def lock_seen(key):
        if key in locks:
            return True, locks[key][2]
        return read_items.lock(key)

    # Second read: the items named by locks that another item's value maps to.
    named = set()
    for _, _, key, holder, _ in held:
        owner = owner_named(lock_seen(key)[1])
        if owner and owner != holder:
            named.add(owner)
    read_items.read(read, (), named)
    unrecorded = {}
    for model, constraint, key, holder, item in held:
        exists, owner = lock_seen(key)
        owner_item = read_items.item(owner_named(owner))
        finding = check_held_value(model, constraint, key, holder, item, owner, exists, owner_item, now)
        if finding is not None:
            findings.append(finding)
        elif not records(item, constraint, key):
            unrecorded.setdefault(holder, {})[constraint.namespace] = key
    for holder, keys in unrecorded.items():
        item = items[holder]
        finding = unrecorded_finding(holder, keys, scope.constraints[item.model], item.model)
        findings.append(replace(finding, items={holder: item.instance()}))
    for key, (model, constraint, owner) in locks.items():
        finding = check_lock(model, constraint, key, owner, read_items.item(owner_named(owner)), now)
        if finding is not None:
            findings.append(finding)
    for namespace, (count, example) in undeclared.items():
        findings.append(Finding(UNDECLARED, UndeclaredNamespace(namespace), key=example, lock_exists=True, count=count))
    findings.extend(_factor_findings(raw_items, scope, items, read, now))
    return findings, counts


def _factor_findings(raw_items, scope, items, read, now):
    """The second factors' findings of the page (:func:`.factors.check_factors`), when an
    audited model declares the passkeys' namespace."""
    declared = scope.constraint_of(WEBAUTHN)
    if declared is None:
        return []
    model, constraint = declared
    accounts = {pk: item.raw for pk, item in items.items() if item.model is model}
    found = check_factors(raw_items, accounts, constraint, read, now)
    return [replace(finding, model=model) for finding in found]


class _Items:
    """The items and locks a page read besides its own: raw lock items by key, audited
    items by PK (``None``: read and absent)."""

    def __init__(self, scope, page_items):
        self.scope = scope
        self.items = dict(page_items)
        self.locks = {}

    def read(self, read, lock_keys, owners):
        keys = [{"PK": {"S": key}, "SK": {"S": LOCK_SORT_KEY}} for key in lock_keys if key not in self.locks]
        wanted = {}
        for owner in owners:
            model = self.scope.model_of(owner)
            if owner not in self.items and model is not None:
                wanted[owner] = model
                keys.append(self.scope.item_key(model, owner))
        for key in lock_keys:
            self.locks.setdefault(key, None)
        for owner in wanted:
            self.items[owner] = None
        if not keys:
            return
        for raw in read(keys):
            pk = raw["PK"]["S"]
            if raw.get("SK", {}).get("S") == LOCK_SORT_KEY and pk in self.locks:
                self.locks[pk] = raw
            elif pk in wanted:
                self.items[pk] = self.scope.item(wanted[pk], raw)

    def lock(self, key):
        """``(exists, owner)`` of a lock read by :meth:`read` (``owner``: a
        :class:`~.findings.DamagedLock` when damaged)."""
        raw = self.locks.get(key)
        if raw is None:
            return False, None
        return True, lock_as_read(raw)

    def item(self, pk):
        """The audited item ``pk`` as read (an :class:`ItemRead`), or ``None`` (absent, or
        not an audited item)."""
        return self.items.get(pk) if pk else None
