"""The audit's rules: what an audited item is, what it holds, and what is out of step.

Both halves of the audit ask these, so what a finding is lives here once:

- the workers (:mod:`.rows`), from each item alone: :func:`item_findings` (the lock keys an
  item's values map to; a value that cannot become a lock key is ``invalid``, an attribute
  of the wrong type ``malformed``) and :func:`records` (whether the item records a key in
  ``lock_keys``), and :class:`Scope` (which namespace is declared, which model an item is);
- the confirmation (:mod:`.confirming`), from the items read again: :func:`check_key` (a
  lock and the items holding its key: I1, I2, I3, a damaged lock, ``unrecorded``) and
  :func:`item_findings` again.

A rule of what is wrong with an item by itself (a new kind of damage) goes in
:func:`item_findings`: the workers flag the items it finds something in (the ``items``
rows' ``damaged``), and the confirmation reports its findings. The second factors' rule
across an account's partition (:func:`.factors.partition_findings`) runs at confirmation
on the partitions the workers flag (the ``items`` rows' ``factors``).
"""

from dataclasses import dataclass, replace
from types import SimpleNamespace
from typing import Any

from pynamodb.constants import NULL

from ..exceptions import InvalidUniqueValue
from ..tables import (
    TOMBSTONE_ATTRIBUTE,
    TTL_ATTRIBUTE,
    is_gone,
    malformed_attributes,
    raw_expires,
)
from ..transactions import LOCK_KEYS, recorded_keys
from ..uniqueness import LOCK_PREFIX, constraints_of, namespace_constraints
from .factors import SCANNED_ATTRIBUTES, UNREBUILDABLE, WEBAUTHN, account_damage
from .findings import (
    INVALID,
    MALFORMED,
    Finding,
    _examine,
    lock_as_read,
    owner_named,
    records_lock,
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
        # A namespace several constraints of one model share (the primary address and the
        # others) is named by its first: checking a key asks all of them (holds, records).
        self._by_namespace = {}
        for model in self.models:
            for constraint in self.constraints[model]:
                self._by_namespace.setdefault(constraint.namespace, (model, constraint))
        names = {"PK", "SK", "owner", TTL_ATTRIBUTE, TOMBSTONE_ATTRIBUTE, LOCK_KEYS}
        self._values = {}
        for model in self.models:
            declared = model.get_attributes()
            guarded = {name for constraint in self.constraints[model] for name in constraint.guarded_attributes}
            self._values[model] = [(name, declared[name]) for name in sorted(guarded)]
            names.update(declared[name].attr_name for name in guarded)
        if WEBAUTHN in self._by_namespace:
            names.update(SCANNED_ATTRIBUTES)
        # The registries the audited models keep (the staff registry), by partition.
        self.registries = {
            registry.partition: (model, registry)
            for model in self.models
            for registry in getattr(model, "registries", ())
        }
        for model, registry in self.registries.values():
            declared = model.get_attributes()
            names.update(declared[name].attr_name for name in registry.attributes)
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

    def memberships(self, item):
        """The partitions of the registries audited item ``item`` (an :class:`ItemRead`)
        belongs in, as read."""
        return [
            partition
            for partition, (model, registry) in self.registries.items()
            if model is item.model and is_member(registry, item)
        ]

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

    __slots__ = ("_instance", "malformed", "model", "raw", "values")

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


def is_member(registry, item):
    """Whether ``item`` (an :class:`ItemRead`) belongs in ``registry``. The model instance is
    built only for an item whose raw attributes may make it one (few do: staff accounts)."""
    flags = [name for name in registry.attributes if name != TTL_ATTRIBUTE]
    if not all(item.raw.get(name, {}).get("BOOL", True) for name in flags):
        return False
    return bool(registry.includes(item.instance()))


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
    """Whether ``item`` (an :class:`ItemRead`) holds lock ``key`` of ``model``'s ``constraint``,
    or of another of its constraints in that namespace (an address held as one of the others)."""
    if item.model is not model:
        return False
    for each in _in_namespace(model, constraint):
        try:
            if key in each.lock_keys(item.values):
                return True
        except InvalidUniqueValue:
            continue
    return False


def _in_namespace(model, constraint):
    """``constraint`` and the other constraints ``model`` declares in its namespace."""
    return (
        constraint,
        *(each for each in namespace_constraints(model, constraint.namespace) if each is not constraint),
    )


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


def check_key(model, constraint, key, lock_raw, items, seen_holders, now):
    """The finding of lock ``key`` of ``model``'s ``constraint``, and the holders that hold
    it without recording it (``unrecorded``): ``(finding or None, [holder PK, ...])``.

    ``lock_raw`` is the lock item as read (``None``: absent), ``items`` the live audited
    items read (PK -> :class:`ItemRead`: the holders seen and the lock's owner), and
    ``seen_holders`` the PKs seen holding the key. The holders are those of them still
    holding it, and the lock's owner when it does: one holder is as it should be when the
    lock names it (I2), several are a duplicate (I1), none leave an orphan (I3).
    """
    lock_exists = lock_raw is not None
    lock_owner = lock_as_read(lock_raw) if lock_exists else None
    owner = owner_named(lock_owner)
    holders = {pk for pk in seen_holders if pk in items and holds(items[pk], model, constraint, key)}
    if owner in items and holds(items[owner], model, constraint, key):
        holders.add(owner)
    if (
        not holders
        and lock_exists
        and owner == lock_owner
        and owner in items
        and keeps_locks(items[owner], model, constraint)
    ):
        # The owner's passkeys are damaged: its own finding says so, and its repair rebuilds
        # them from these locks; releasing one now would lose the registration for good.
        return None, []
    unrecorded = sorted(
        pk for pk in holders if lock_exists and lock_owner == pk and not records(items[pk], constraint, key)
    )
    if not lock_exists and not holders:
        return None, unrecorded
    involved = holders | ({owner} if owner in items else set())
    instances = {pk: items[pk].instance() for pk in sorted(involved)}
    finding = _examine(constraint, key, lock_exists, lock_owner, holders, instances, model, now)
    return (None if finding is None else replace(finding, items=instances)), unrecorded


def records(item, constraint, key):
    """Whether ``item`` (an :class:`ItemRead`, which holds lock ``key``) records that key in
    its ``lock_keys`` as it should (:func:`.findings.records_lock`), under ``constraint``'s
    slot or another's of its namespace, read from the raw item without building the model
    instance."""
    slots = item.raw.get(LOCK_KEYS, {}).get("M", {})
    holding = [each for each in _in_namespace(item.model, constraint) if _holds_under(item, each, key)] or [constraint]
    return any(records_lock(item.model, each, recorded_slot(slots.get(each.record_slot)), key) for each in holding)


def _holds_under(item, constraint, key):
    return _holds_under_values(item.values, constraint, key)


def add_record(recorded, item, constraint, key):
    """Add to ``recorded`` (slot -> what the repair records there, :func:`~accounts.transactions.plan_record_locks`)
    the record of lock ``key``, which ``item`` (an :class:`ItemRead` or a model instance)
    holds under ``constraint`` or another constraint of its namespace: the key of a single
    value, or its set's map of elements to keys, with what it records already."""
    values = getattr(item, "values", item)
    model = getattr(item, "model", type(item))
    holding = next((each for each in _in_namespace(model, constraint) if _holds_under_values(values, each, key)), None)
    if holding is None or not holding.many:
        recorded[constraint.record_slot if holding is None else holding.record_slot] = key
        return
    if holding.record_slot not in recorded:
        raw = item.raw.get(LOCK_KEYS, {}).get("M", {}) if hasattr(item, "raw") else {}
        current = recorded_slot(raw.get(holding.record_slot)) if raw else recorded_keys(item).get(holding.record_slot)
        recorded[holding.record_slot] = dict(current) if isinstance(current, dict) else {}
    element = next(each for each, computed in holding.member_keys(values).items() if computed == key)
    recorded[holding.record_slot][element] = key


def _holds_under_values(values, constraint, key):
    try:
        return key in constraint.lock_keys(values)
    except InvalidUniqueValue:
        return False


def recorded_slot(raw):
    """What a raw ``lock_keys`` slot records: a key, a map of elements to keys, or ``None``."""
    if not isinstance(raw, dict):
        return None
    if "M" in raw:
        return {element: value.get("S") for element, value in raw["M"].items() if isinstance(value, dict)}
    return raw.get("S")


def keeps_locks(item: "ItemRead", model: type, constraint: Any) -> bool:
    """Whether the locks of ``constraint`` naming ``item`` (an :class:`ItemRead` of
    ``model``) are kept though it holds none: its ``passkeys`` is of the wrong type, and
    its repair rebuilds it from those locks (:func:`.factors.rebuilt_passkeys`). Other
    damaged values are rewritten as the model reads them, and their locks checked then."""
    return (
        constraint.namespace == WEBAUTHN
        and item.model is model
        and any(name in item.malformed for name in constraint.fields)
    )


def item_findings(pk, item, constraints):
    """``(held, findings)`` of one audited item (an :class:`ItemRead`), from the item alone:
    the ``(constraint, lock key)`` of each value it holds, and the findings of its own
    (``invalid`` values, ``malformed`` attributes, a second factor's ``damaged``
    attributes). The one place that says what is wrong with an item by itself: the
    workers flag the items it finds something in, the confirmation reports what it finds
    when the item is read again."""
    held, findings = check_item_values(pk, item, constraints)
    findings.extend(check_item(pk, item, constraints))
    if any(constraint.namespace == WEBAUTHN for constraint in constraints):
        findings.extend(account_damage(pk, item.raw, item.model))
    return held, findings


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
