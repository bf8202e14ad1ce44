"""The planners: the :class:`~.actions.Transaction` each operation sends, built, not sent.

A create, change or delete of an item with unique constraints, and each audit repair of a
lock, is planned here as one transaction of guarded actions (:mod:`.actions`); running it
is :mod:`.running`'s business. ``accounts_explain`` shows a plan without sending it.
"""

from collections.abc import Callable, Collection, Iterable, Mapping, Sequence
from typing import Any

from pynamodb.expressions.condition import Condition
from pynamodb.expressions.update import Action as UpdateAction
from pynamodb.models import Model

from ..exceptions import InvalidTransaction, InvalidUniqueValue
from ..tables import Lock, Registry, lock_model_for
from ..tables.clocks import TTL_ATTRIBUTE
from ..uniqueness import LOCK_SORT_KEY, UniqueConstraint, as_text, constraints_of, namespace_constraints
from .actions import (
    CHANGE,
    CREATE,
    DELETE,
    HOLDER_CHECK,
    ITEM,
    LOCK_KEYS,
    NEW_LOCK,
    REPAIR,
    REPAIRED_LOCK,
    Action,
    Transaction,
    absent_condition,
    condition_check,
    expires_of,
    free_condition,
    guarded_put,
    held_by,
    item_removal,
    key_target,
    lock_action,
    lock_check,
    lock_keep,
    new_transaction,
    old_lock_action,
    owned_delete,
    owned_keep,
    owner_of,
    recorded_keys,
    recording_actions,
    registry_actions,
    registry_entry,
    still_as_read,
)


def _current_lock_key(constraint: UniqueConstraint, item: Model) -> str | None:
    # Data written before a constraint existed may lack the value: it then holds no lock.
    try:
        return constraint.lock_key(item)
    except InvalidUniqueValue:
        return None


def _current_claimed_key(constraint: UniqueConstraint, item: Model) -> str | None:
    try:
        return constraint.claimed_key(item)
    except InvalidUniqueValue:
        return None


def _held_key(constraint: UniqueConstraint, item: Model) -> str | None:
    """The lock key ``item`` holds under single-valued ``constraint``: the one it records
    (what a change or deletion releases: after a Unicode upgrade a key computed again may be
    another), or, when it records none there (written before keys were recorded), its key
    computed now."""
    return recorded_keys(item).get(constraint.namespace, _current_lock_key(constraint, item))


def held_member_keys(constraint: UniqueConstraint, item: Model) -> dict[str, str]:
    """``{element: the lock key item holds for it}`` under set-valued ``constraint``: the
    key it records for the element (a :attr:`~accounts.uniqueness.UniqueConstraint.recorded`
    constraint), else the key computed now (the normalizer depends on no Unicode data, so a
    key computed again is the key). An element that cannot be keyed (legacy data) holds none."""
    slot = recorded_keys(item).get(constraint.record_slot) if constraint.recorded else None
    recorded: dict[str, Any] = slot if isinstance(slot, dict) else {}
    held: dict[str, str] = {}
    for element in sorted(as_text(value) for value in getattr(item, constraint.fields[0], None) or ()):
        key = recorded.get(element)
        if not isinstance(key, str):
            try:
                key = constraint.key_for(element)
            except InvalidUniqueValue:
                continue
        held[element] = key
    return held


def _held_keys(constraint: UniqueConstraint, item: Model) -> tuple[str, ...]:
    """Every lock key ``item`` holds under ``constraint``: :func:`_held_key`'s, or one per
    element of a set-valued one (:func:`held_member_keys`)."""
    if constraint.many:
        return tuple(sorted(set(held_member_keys(constraint, item).values())))
    key = _held_key(constraint, item)
    return () if key is None else (key,)


def _new_member_keys(constraint: UniqueConstraint, item: Model, changed: Model) -> dict[str, str]:
    """``{element: key}`` of set-valued ``constraint`` once ``item`` (as read) is ``changed``:
    an element it keeps keeps the key it holds, an element added gets its key computed now.
    Refused before anything is sent (:class:`~accounts.exceptions.InvalidUniqueValue`): two
    elements of one key (``duplicate``), or a set grown past ``max_values`` (``too_many``)."""
    held = held_member_keys(constraint, item)
    computed = constraint.member_keys(changed)
    if len(computed) > len(held) and constraint.max_values and len(computed) > constraint.max_values:
        raise InvalidUniqueValue(
            constraint.fields, "too_many", f"At most {constraint.max_values} values are allowed here."
        )
    return {element: held.get(element, key) for element, key in computed.items()}


def _touches(constraint: UniqueConstraint, changes: Iterable[str], stops_expiring: bool) -> bool:
    # A change touches a constraint when it changes what decides its key, or when the item
    # stops expiring (its locks stop expiring too).
    return stops_expiring or bool(set(changes).intersection(constraint.guarded_attributes))


def _recorded_value(constraint: UniqueConstraint, members: Mapping[str, str]) -> dict[str, str] | None:
    """What ``lock_keys`` records under a set-valued constraint's slot: each element's key,
    or ``None`` (the slot removed) for an empty set."""
    return dict(members) if members else None


def keys_after_change(item: Model, changes: Mapping[str, Any]) -> dict[str, Any]:
    """``{slot: what it records}`` of each lock ``changes`` moves: what ``item`` records it
    holds once the change committed (see :func:`plan_change`): a single value's namespace,
    its new key or ``None``; a recorded set-valued constraint's slot, the map of each element
    to its key, or ``None`` when the set is emptied."""
    changed = changed_copy(item, changes)
    stops_expiring = expires_of(item) is not None and expires_of(changed) is None
    moved: dict[str, Any] = {}
    for constraint in constraints_of(type(item)):
        if not _touches(constraint, changes, stops_expiring):
            continue
        if constraint.many:
            if constraint.recorded:
                members = _new_member_keys(constraint, item, changed)
                unrecorded = members and constraint.record_slot not in recorded_keys(item)
                if unrecorded or members != held_member_keys(constraint, item):
                    moved[constraint.record_slot] = _recorded_value(constraint, members)
            continue
        new_key = constraint.lock_key(changed)
        if new_key != _held_key(constraint, item):
            moved[constraint.namespace] = new_key
    return moved


def remember_keys(item: Model, moved: Mapping[str, Any]) -> None:
    """Set ``item``'s ``lock_keys`` as a committed transaction recording ``moved``
    (``{slot: key, map of keys, or None}``) left it in the table."""
    if LOCK_KEYS in type(item).get_attributes() and moved:
        held = {**recorded_keys(item), **moved}
        setattr(item, LOCK_KEYS, {slot: key for slot, key in held.items() if key is not None})


def plan_create(
    item: Model, *, token: str | None = None, check_unheld: bool = True, also: Sequence[Action] = ()
) -> Transaction:
    """The transaction creating ``item`` and one guarded lock per unique constraint.

    ``Put item [attribute_not_exists(PK)]``, then per constraint, in declaration order:
    ``Put lock [attribute_not_exists(PK) OR expires < :now - margin]`` (carrying the item's
    ``expires`` when it has one; one per value of a set-valued constraint), or, for a
    partial constraint that leaves the item out, ``ConditionCheck lock
    [attribute_not_exists(PK)]``. With ``check_unheld=False`` no such check is sent: the
    value may be one another item holds, which the item then can never lock (an unverified
    sign-up when whether an address is registered must not show). The item records the
    keys it takes (``lock_keys``, when its model has it). ``also``: actions on items it
    owns (its first passkey's credential item), built by :mod:`.authenticators`, sent last.
    An item that belongs in a registry of its model (a staff account) gets its entry Put
    there too.
    """
    return new_transaction(CREATE, lambda now: [*_create_actions(item, now, check_unheld), *also], token)


def _create_actions(item: Model, now: int, check_unheld: bool) -> list[Action]:
    model = type(item)
    lock_model = lock_model_for(model)
    owner = owner_of(item)
    expires = expires_of(item)
    lock_actions: list[Action] = []
    taken: dict[str, Any] = {}
    held: dict[str, dict[str, UniqueConstraint]] = {}
    for constraint in constraints_of(model):
        if constraint.many:
            members = constraint.member_keys(item)
            if constraint.max_values and len(members) > constraint.max_values:
                message = f"At most {constraint.max_values} values are allowed here."
                raise InvalidUniqueValue(constraint.fields, "too_many", message)
            for element, key in members.items():
                _hold(held, constraint, key)
                lock_actions.append(
                    lock_action("Put", lock_model, key, owner, NEW_LOCK, constraint, now, expires, value=element)
                )
            if constraint.recorded and members:
                taken[constraint.record_slot] = members
            continue
        single = constraint.lock_key(item)
        if single is not None:
            _hold(held, constraint, single)
            value = getattr(item, constraint.fields[0], None) if len(constraint.attributes) == 1 else None
            lock_actions.append(
                lock_action("Put", lock_model, single, owner, NEW_LOCK, constraint, now, expires, value)
            )
            taken[constraint.namespace] = single
            continue
        claimed = None if constraint.applies_to(item) or not check_unheld else constraint.claimed_key(item)
        if claimed is not None:
            lock_actions.append(lock_check(lock_model, claimed, constraint))
    if LOCK_KEYS in model.get_attributes():
        setattr(item, LOCK_KEYS, taken)
    return [Action("Put", guarded_put(item), ITEM, key_target(item)), *lock_actions, *registry_actions(None, item)]


def _hold(held: dict[str, dict[str, UniqueConstraint]], constraint: UniqueConstraint, key: str) -> None:
    """Note that an item holds ``key`` under ``constraint`` (``held``: namespace -> {key:
    constraint}); one value held twice in one namespace (an address both primary and among
    the others) is refused before anything is sent."""
    namespace = held.setdefault(constraint.namespace, {})
    if key in namespace:
        raise InvalidUniqueValue(constraint.fields, "duplicate", "This value is already held here.")
    namespace[key] = constraint


def changed_copy(item: Model, changes: Mapping[str, Any]) -> Any:
    """A copy of ``item`` with ``changes`` applied; ``item`` itself is left as read."""
    model = type(item)
    unknown = set(changes) - set(model.get_attributes())
    if unknown:
        raise ValueError(f"{model.__name__} has no attribute(s) {', '.join(sorted(unknown))}")
    copy = model.from_raw_data(item.serialize(null_check=False))
    for name, value in changes.items():
        setattr(copy, name, value)
    return copy


def plan_change(
    item: Model,
    changes: Mapping[str, Any],
    *,
    token: str | None = None,
    keep_locks: Mapping[str, Any] | None = None,
    unheld: Iterable[tuple[UniqueConstraint, str]] = (),
    also: Sequence[Action] = (),
    others: Mapping[str, str | None] | None = None,
    as_read: Iterable[str] = (),
) -> Transaction:
    """The transaction applying ``changes`` (attribute -> new value) to ``item`` as read.

    ``Update item [(expires >= :now, if it expires) AND every changed or lock-deciding
    attribute = as read]``, then per constraint whose lock key really changes
    after normalization: ``Put new lock [attribute_not_exists(PK) OR expires < :now - margin]`` (I1;
    carrying the item's new ``expires``) and ``Delete old lock [owner = me OR
    attribute_not_exists(PK)]``, the old lock being the one the item records it holds (never
    a key computed again), and the Update records the new one. Every attribute of each
    moved key is guarded as read (scope
    included), so two concurrent changes of one item cannot orphan a lock (I2, I3).
    Constraints whose attributes ``changes`` does not touch are left alone, even when their
    stored value cannot be locked (legacy data). A value a partial constraint leaves out gets
    ``ConditionCheck lock [attribute_not_exists(PK)]`` instead of a Put. When the change
    removes ``expires`` (a verification), each lock the item keeps gets ``Update lock
    REMOVE expires [owner = me]``.

    ``keep_locks`` maps old lock keys not to release to the other item holding each
    (``None``: the lock names nobody); each gets a ConditionCheck that it still does
    (``owner = that item``), so the transaction is cancelled if the lock moved meanwhile.
    ``as_read``: attributes the change keeps but guards as read too (a factor's removal that
    drops the recovery codes only because the account has no other factor).
    ``unheld`` lists ``(constraint, key)`` pairs that must be free, each checked with
    ``ConditionCheck lock [attribute_not_exists(PK)]`` and refused by position like a Put
    (an email change request: the new address must not be held, though no lock moves yet).
    A set-valued constraint Puts the lock of each value added and releases each one removed.
    When the item stops expiring, each item it owns (``owned_sort_keys()``) gets ``Update
    REMOVE expires``. ``also``: actions on items the item owns, built by
    :mod:`.authenticators`, sent last in the same transaction.

    A change that makes the item join or leave a registry of its model (staff granted or
    revoked, a staff account deactivated) puts or deletes its entry there in the same
    transaction. (Two changes of one account cannot both commit: ``store.update_account``
    stamps ``updated``, guarded as read.) A change that takes a member out of a registry
    checks that ``others[registry.partition]``, another member, is still one (see
    :func:`~.actions.registry_actions`: the last-staff rule).
    """
    held_elsewhere = keep_locks or {}
    return new_transaction(
        CHANGE,
        lambda now: [*_change_actions(item, changes, held_elsewhere, unheld, others, now, as_read), *also],
        token,
    )


def _change_actions(
    item: Model,
    changes: Mapping[str, Any],
    keep_locks: Mapping[str, Any],
    unheld: Iterable[tuple[UniqueConstraint, str]],
    others: Mapping[str, str | None] | None,
    now: int,
    as_read: Iterable[str] = (),
) -> list[Action]:
    model = type(item)
    changed = changed_copy(item, changes)
    lock_model = lock_model_for(model)
    owner = owner_of(item)
    expires = expires_of(changed)
    stops_expiring = expires_of(item) is not None and expires is None
    guarded = {*changes, *as_read}
    moves = _LockMoves(item, changed, changes, stops_expiring)
    lock_actions: list[Action] = []
    for constraint in moves.touched:
        if not constraint.many:
            lock_actions.extend(moves.unheld_check(constraint, guarded))
        guarded.update(moves.guards(constraint))
        for key, element in moves.added(constraint):
            lock_actions.append(
                lock_action("Put", lock_model, key, owner, NEW_LOCK, constraint, now, expires, value=element)
            )
        for key in moves.removed(constraint):
            lock_actions.append(old_lock_action(lock_model, key, owner, constraint, keep_locks, now))
        if stops_expiring:
            lock_actions.extend(lock_keep(lock_model, key, owner, constraint) for key in moves.kept(constraint))
    for constraint, key in unheld:
        lock_actions.append(lock_check(lock_model, key, constraint))
    if stops_expiring:
        lock_actions.extend(owned_keep(item, sort_key) for sort_key in _owned_sort_keys(item))
    attributes = model.get_attributes()
    updates: list[UpdateAction] = [
        attributes[name].remove() if value is None else attributes[name].set(value) for name, value in changes.items()
    ]
    updates += recording_actions(item, keys_after_change(item, changes))
    update = Action(
        "Update",
        item.get_update_kwargs_from_instance(actions=updates, condition=still_as_read(item, guarded, now)),
        ITEM,
        key_target(item),
    )
    return [update, *lock_actions, *registry_actions(item, changed, others)]


class _LockMoves:
    """Which lock keys a change of ``item`` (as read) to ``changed`` Puts, releases and
    keeps, namespace by namespace.

    A key is compared with every key the item holds in its namespace, under any of its
    constraints: an address made primary was held as one of the others and is held as the
    primary after, so its lock does not move (a Put of a lock the item holds would fail, a
    Delete would free it). The constraints a change touches are those whose attributes it
    changes (or all, when the item stops expiring, see :func:`_touches`); the others of a
    namespace it touches hold what they hold. One value held twice in a namespace after the
    change is refused (``duplicate``) before anything is sent.
    """

    def __init__(self, item: Model, changed: Model, changes: Iterable[str], stops_expiring: bool) -> None:
        self.item, self.changed = item, changed
        constraints = constraints_of(type(item))
        changes = list(changes)
        self.touched = [each for each in constraints if _touches(each, changes, stops_expiring)]
        namespaces = {each.namespace for each in self.touched}
        self.before: dict[str, dict[str, UniqueConstraint]] = {}
        self.after: dict[str, dict[str, UniqueConstraint]] = {}
        self.elements: dict[str, str | None] = {}
        self.old: dict[int, tuple[str, ...]] = {}
        self.new: dict[int, tuple[str, ...]] = {}
        # The constraints the change leaves first: a value it would hold twice is refused on
        # the field it changes.
        shared = [each for each in constraints if each.namespace in namespaces]
        for constraint in sorted(shared, key=lambda each: each in self.touched):
            old, new = self._keys(constraint, constraint in self.touched)
            self.old[id(constraint)], self.new[id(constraint)] = tuple(old), tuple(new)
            for key in old:
                self.before.setdefault(constraint.namespace, {}).setdefault(key, constraint)
            for key in new:
                _hold(self.after, constraint, key)

    def _keys(self, constraint: UniqueConstraint, touched: bool) -> tuple[list[str], list[str]]:
        if not touched:
            held = list(_held_keys(constraint, self.item))
            return held, held
        if constraint.many:
            new_members = _new_member_keys(constraint, self.item, self.changed)
            for element, key in new_members.items():
                self.elements[key] = element
            return list(dict.fromkeys(_held_keys(constraint, self.item))), list(new_members.values())
        old_key, new_key = _held_key(constraint, self.item), constraint.lock_key(self.changed)
        if new_key is not None and len(constraint.attributes) == 1:
            self.elements[new_key] = getattr(self.changed, constraint.fields[0], None)
        return [old_key] if old_key is not None else [], [new_key] if new_key is not None else []

    def guards(self, constraint: UniqueConstraint) -> tuple[str, ...]:
        """The attributes to guard as read for ``constraint``: every attribute its keys are
        built from, when its keys change (a concurrent change of the scope, the team, must
        cancel a change of the field, the number, or the lock would move inside a team the
        item has left; a change of the set from a stale read would drop another's element)."""
        moved = set(self.old[id(constraint)]) != set(self.new[id(constraint)])
        return constraint.guarded_attributes if moved else ()

    def added(self, constraint: UniqueConstraint) -> list[tuple[str, str | None]]:
        """``(key, element)`` of each lock ``constraint`` takes that the item held nowhere in
        the namespace."""
        before = self.before.get(constraint.namespace, {})
        return [(key, self.elements.get(key)) for key in self.new[id(constraint)] if key not in before]

    def removed(self, constraint: UniqueConstraint) -> list[str]:
        """Each key ``constraint`` held that the item holds nowhere in the namespace after."""
        after = self.after.get(constraint.namespace, {})
        before = self.before.get(constraint.namespace, {})
        return [key for key in self.old[id(constraint)] if key not in after and before.get(key) is constraint]

    def kept(self, constraint: UniqueConstraint) -> list[str]:
        """Each key ``constraint`` holds after the change that the item held before, in the
        namespace: kept (it stops expiring with the item)."""
        before = self.before.get(constraint.namespace, {})
        return [key for key in self.new[id(constraint)] if key in before]

    def unheld_check(self, constraint: UniqueConstraint, guarded: set[str]) -> list[Action]:
        """For a partial constraint that leaves the changed item out, the
        ``ConditionCheck lock [attribute_not_exists(PK)]`` of a new value it would take once
        it applies (an unverified account's new address another account holds is refused)."""
        if self.old[id(constraint)] or self.new[id(constraint)] or constraint.applies_to(self.changed):
            return []
        claimed = constraint.claimed_key(self.changed)
        if claimed is None or claimed == _current_claimed_key(constraint, self.item):
            return []
        guarded.update(constraint.guarded_attributes)
        return [lock_check(lock_model_for(type(self.item)), claimed, constraint)]


def _owned_sort_keys(item: Model) -> tuple[str, ...]:
    owned = getattr(item, "owned_sort_keys", None)
    return tuple(owned()) if owned is not None else ()


def plan_delete(
    item: Model,
    *,
    token: str | None = None,
    keep_locks: Mapping[str, Any] | None = None,
    others: Mapping[str, str | None] | None = None,
    also: Sequence[Action] = (),
    as_read: Iterable[str] = (),
) -> Transaction:
    """The transaction deleting ``item`` and releasing every lock it holds.

    The item's Delete (for an account, the Put of its tombstone in its place) is guarded by
    its unique values as read; each lock's Delete by
    ``owner = me OR attribute_not_exists(PK)``; each item it owns (``owned_sort_keys()``:
    an account's passkeys) is deleted too. ``keep_locks`` is as in :func:`plan_change`:
    a lock held by another item is not deleted but checked to still be held by it.
    The item's entry in each registry of its model is deleted (unconditionally), and the
    attributes that decide its membership are guarded as read; an item read as a member checks that
    ``others[registry.partition]`` still is one, as in :func:`plan_change`. ``also``:
    actions sent in the same transaction; ``as_read``: more attributes guarded as read (a
    staff member's deletion: the account's ``is_superuser``, see :mod:`.hierarchy`).
    """
    held_elsewhere = keep_locks or {}
    extra = list(also)
    names = set(as_read)
    return new_transaction(
        DELETE, lambda now: [*_delete_actions(item, held_elsewhere, others, now, names), *extra], token
    )


def _delete_actions(
    item: Model,
    keep_locks: Mapping[str, Any],
    others: Mapping[str, str | None] | None,
    now: int,
    as_read: Collection[str] = (),
) -> list[Action]:
    model = type(item)
    lock_model = lock_model_for(model)
    owner = owner_of(item)
    constraints = constraints_of(model)
    # Partial constraints' conditions too: a verification landing first takes the email lock.
    guarded = {name for constraint in constraints for name in constraint.guarded_attributes}
    # And what decides its registries as read: an account read as no staff member but made
    # one since would leave the registry unchecked (the last-staff rule), so it is cancelled.
    guarded.update(
        name for registry in getattr(model, "registries", ()) for name in registry.attributes if name != TTL_ATTRIBUTE
    )
    guarded.update(as_read)
    actions = [item_removal(item, still_as_read(item, guarded, now), now)]
    released: set[str] = set()
    for constraint in constraints:
        # A key held under two constraints of one namespace (damage) is released once.
        for key in _held_keys(constraint, item):
            if key not in released:
                released.add(key)
                actions.append(old_lock_action(lock_model, key, owner, constraint, keep_locks, now))
    actions.extend(owned_delete(item, sort_key) for sort_key in _owned_sort_keys(item))
    return [*actions, *registry_actions(item, None, others)]


def _holder_checks(
    model: type[Model],
    constraint: UniqueConstraint,
    item: Model | None,
    owner: Any,
    owner_item: Model | None,
    now: int,
    key: str | None = None,
) -> list[Action]:
    """Conditions that ``item`` (if any) still holds its value as read, and that the lock's
    current ``owner`` still does not: gone when ``owner_item`` is ``None``, else with the
    values read (which did not map to the lock). The holder's is an Update recording the
    lock it is given (``key``, one of a set-valued constraint's), when it records its keys
    already (an item written before it recorded them gets all of them at once,
    :func:`plan_record_locks`; a set-valued constraint's are recorded only when
    :attr:`~accounts.uniqueness.UniqueConstraint.recorded`); the rest are ConditionChecks."""
    checks: list[Action] = []
    guarded = _namespace_guards(model, constraint)
    if item is not None:
        condition = still_as_read(item, guarded, now)
        held = _given_record(constraint, item, key)
        recording = recording_actions(item, held, start=False)
        if recording:
            body = item.get_update_kwargs_from_instance(actions=recording, condition=condition)
            checks.append(Action("Update", body, HOLDER_CHECK, key_target(item)))
        else:
            checks.append(condition_check(model, owner_of(item), condition))
    # A lock naming nobody, or an owner no item can have as key (empty, or of the wrong type:
    # damage), needs no check; nor one naming the holder itself (a damaged lock rewritten).
    if isinstance(owner, str) and owner and (item is None or owner != owner_of(item)):
        if owner_item is None:
            checks.append(condition_check(model, owner, absent_condition(model, now)))
        else:
            checks.append(condition_check(model, owner, still_as_read(owner_item, guarded, now)))
    return checks


def _holding(item: Model, constraint: UniqueConstraint, key: str | None) -> UniqueConstraint:
    """The constraint of ``item``'s model in ``constraint``'s namespace under which it holds
    ``key`` (the audit names a namespace by its first constraint; an address may be held
    as one of the others), else ``constraint``."""
    if key is None:
        return constraint
    for each in (constraint, *namespace_constraints(type(item), constraint.namespace)):
        try:
            if key in each.lock_keys(item):
                return each
        except InvalidUniqueValue:
            continue
    return constraint


def _namespace_guards(model: type[Model], constraint: UniqueConstraint) -> tuple[str, ...]:
    """Every attribute that decides whether an item of ``model`` holds a key of
    ``constraint``'s namespace: the constraint's own, and those of the model's other
    constraints there (an address is held as the primary or as one of the others)."""
    names = dict.fromkeys(constraint.guarded_attributes)
    for each in namespace_constraints(model, constraint.namespace):
        names.update(dict.fromkeys(each.guarded_attributes))
    return tuple(names)


def _given_record(constraint: UniqueConstraint, item: Model, key: str | None) -> dict[str, Any]:
    """What ``item`` records once given lock ``key`` under ``constraint`` (``{}``: nothing
    new): the key of its single value, or its set's map with the element of ``key``."""
    if not constraint.many:
        return {constraint.namespace: constraint.lock_key(item)}
    if not constraint.recorded:
        return {}
    slot = recorded_keys(item).get(constraint.record_slot)
    recorded: dict[str, Any] = slot if isinstance(slot, dict) else {}
    element = next((each for each, computed in constraint.member_keys(item).items() if computed == key), None)
    if element is None or recorded.get(element) == key:
        return {}
    return {constraint.record_slot: {**recorded, element: key}}


def _give_lock(
    item: Model, constraint: UniqueConstraint, condition: Callable[[type[Lock]], Condition], key: str | None = None
) -> Action:
    """The Put making ``item`` the owner of its value's lock (``key``, one of a set-valued
    constraint's), if ``condition`` holds."""
    model = type(item)
    lock_model = lock_model_for(model)
    key = key if key is not None else constraint.lock_key(item)
    if key is None or key not in constraint.lock_keys(item):
        raise InvalidTransaction(f"{owner_of(item)} holds no value under {constraint!r}: no lock to give it.")
    lock = lock_model(PK=key, owner=owner_of(item), expires=expires_of(item), key_version=constraint.key_version)
    body = lock.get_save_kwargs_from_instance(condition=condition(lock_model))
    return Action("Put", body, REPAIRED_LOCK, key_target(lock), constraint, key)


def plan_claim_lock(
    item: Model, constraint: UniqueConstraint, *, key: str | None = None, token: str | None = None
) -> Transaction:
    """The transaction creating the missing lock of ``item``'s value under ``constraint``
    (``key``: which of a set-valued constraint's values).

    Guarded: the lock must not exist (or be expired), and ``item`` must still hold the value
    as read, so a concurrent signup or change of that value wins and this repair is cancelled.
    An item a partial constraint leaves out (an unverified email) holds no lock: refused.
    """

    constraint = _holding(item, constraint, key)

    def actions(now: int) -> list[Action]:
        put = _give_lock(item, constraint, lambda lock_model: free_condition(lock_model, now), key)
        return [put, *_holder_checks(type(item), constraint, item, None, None, now, put.lock_key)]

    return new_transaction(REPAIR, actions, token)


def plan_transfer_lock(
    item: Model,
    constraint: UniqueConstraint,
    owner: Any,
    owner_item: Model | None = None,
    *,
    key: str | None = None,
    token: str | None = None,
) -> Transaction:
    """The transaction giving ``item`` the lock of its value (``key``: which of a
    set-valued constraint's values), now held by the wrong ``owner``.

    ``owner`` is the lock's owner as read (``None``: the lock names nobody); ``owner_item`` is
    that owner as read, or ``None`` when it does not exist. Guarded: the lock still names
    ``owner``, ``item`` still holds the value, and the owner is still gone or unchanged.
    """
    constraint = _holding(item, constraint, key)
    put = _give_lock(item, constraint, lambda lock_model: held_by(lock_model, owner), key)
    return new_transaction(
        REPAIR,
        lambda now: [put, *_holder_checks(type(item), constraint, item, owner, owner_item, now, put.lock_key)],
        token,
    )


def plan_release_lock(
    model_class: type[Model],
    constraint: UniqueConstraint,
    key: str,
    owner: Any,
    owner_item: Model | None = None,
    *,
    token: str | None = None,
) -> Transaction:
    """The transaction deleting orphaned lock ``key``: nobody holds its value.

    ``owner`` is the lock's owner as read (``None``: the lock names nobody); ``owner_item`` is
    that owner as read (its value no longer maps to ``key``), or ``None`` when it does not
    exist. Guarded: the lock still names ``owner``, and the owner is still gone or unchanged.
    While the lock exists no other item can take its value, so nobody else needs checking.
    """
    lock_model = lock_model_for(model_class)
    lock = lock_model(PK=key, owner=owner)
    delete = Action(
        "Delete",
        lock.get_delete_kwargs_from_instance(condition=held_by(lock_model, owner)),
        REPAIRED_LOCK,
        key_target(lock),
        constraint,
        key,
    )
    return new_transaction(
        REPAIR, lambda now: [delete, *_holder_checks(model_class, constraint, None, owner, owner_item, now)], token
    )


def plan_registry_entry(
    model_class: type[Model], registry: Registry, pk: str, item: Model | None = None, *, token: str | None = None
) -> Transaction:
    """The transaction making ``pk``'s entry in ``registry`` match its item as read
    (``item``; ``None``: gone): put for a member, deleted otherwise. Guarded by the item
    being still as read (its registry attributes), or still gone. For data written before
    the registry existed (``accounts_backfill --staff``).
    """
    entry = registry_entry(model_class, registry, pk, item is not None and registry.includes(item))

    def actions(now: int) -> list[Action]:
        if item is None:
            check = condition_check(model_class, pk, absent_condition(model_class, now))
        else:
            check = condition_check(model_class, pk, still_as_read(item, registry.attributes, now))
        return [check, entry]

    return new_transaction(REPAIR, actions, token)


def plan_rewrite(item: Model, names: Collection[str], *, token: str | None = None) -> Transaction:
    """The transaction writing ``item``'s attributes ``names`` again as they are read (a
    value of the wrong type stored as the engine reads it: damage repaired), guarded by each
    as stored. Nothing a read sees changes, so no lock moves."""
    model = type(item)
    attributes = model.get_attributes()

    def actions(now: int) -> list[Action]:
        values = {name: getattr(item, name, None) for name in sorted(names)}
        updates: list[UpdateAction] = [
            attributes[name].remove() if value is None else attributes[name].set(value)
            for name, value in values.items()
        ]
        body = item.get_update_kwargs_from_instance(actions=updates, condition=still_as_read(item, names, now))
        return [Action("Update", body, ITEM, key_target(item))]

    return new_transaction(REPAIR, actions, token)


def plan_record_locks(item: Model, keys: Mapping[str, Any], *, token: str | None = None) -> Transaction:
    """The transaction recording in ``item``'s ``lock_keys`` the locks it holds but does not
    record (``keys``: slot -> key, or for a set-valued constraint's slot the map of each
    element to its key; an item written before items recorded them), all at once:
    ``Update item SET lock_keys [its values and lock_keys as read]`` and per lock
    ``ConditionCheck lock [owner = item]``. No lock changes."""
    model = type(item)
    lock_model = lock_model_for(model)
    owner = owner_of(item)
    constraints = {constraint.record_slot: constraint for constraint in constraints_of(model)}
    guarded = {name for slot in keys for name in constraints[slot].guarded_attributes}

    def actions(now: int) -> list[Action]:
        condition = still_as_read(item, guarded | {LOCK_KEYS}, now)
        body = item.get_update_kwargs_from_instance(actions=recording_actions(item, keys), condition=condition)
        checks = [Action("Update", body, HOLDER_CHECK, key_target(item))]
        for slot, recorded in sorted(keys.items()):
            for key in sorted(recorded.values()) if isinstance(recorded, Mapping) else [recorded]:
                held = held_by(lock_model, owner)
                check = lock_model.get_operation_kwargs_from_class(key, LOCK_SORT_KEY, condition=held)
                target = (lock_model.Meta.table_name, key, LOCK_SORT_KEY)
                checks.append(Action("ConditionCheck", check, REPAIRED_LOCK, target, constraints[slot], key))
        return checks

    return new_transaction(REPAIR, actions, token)
