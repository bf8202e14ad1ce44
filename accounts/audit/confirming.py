"""The confirmation of the join's candidates: consistent reads of just their keys, and the
findings they still show.

The join (``findings.sql``) saw the table as the workers read it, page after page, or as an
export froze it; a concurrent write, or a lock held on another slice, can make a candidate
that is no finding. So each candidate's lock, the items seen holding its key and the
lock's owner are read again, consistently (BatchGetItem, 100 keys a request, paced by the
run's read budget), and the rules of :mod:`.checking` say what they show: only that is
reported, and only that is repaired. A partition holding second factors is read again
whole (one consistent ``Query``) and its credential locks with it, for
:func:`.factors.partition_findings`. A registry's candidate (an entry whose item is no
member, a member with no entry) is its entry and its item read again
(:func:`registry_finding`).
"""

from collections.abc import Callable, Iterable, Iterator
from dataclasses import replace
from itertools import groupby

from ..tables import epoch_now
from ..uniqueness import LOCK_SORT_KEY
from .checking import Scope, add_record, check_key, is_live, is_member, item_findings
from .factors import WEBAUTHN, partition_findings
from .findings import (
    MISSING_ENTRY,
    STRAY_ENTRY,
    UNDECLARED,
    Finding,
    RegistryName,
    UndeclaredNamespace,
    unrecorded_finding,
)
from .joining import FACTORS, HELD, ITEM, LOCK, REGISTRY, Candidate
from .reading import Reader

# Lock keys (or damaged items) confirmed together: one BatchGetItem round of their locks,
# one of their items.
KEYS_PER_ROUND = 100


def confirmed_findings(
    candidates: Iterable[Candidate], scope: Scope, reader: Reader, *, now: Callable[[], int] = epoch_now
) -> Iterator[Finding]:
    """The findings the ``candidates`` (ordered by lock key) still show, read again."""
    unrecorded: dict[str, tuple[object, dict]] = {}
    keys, items, entries = [], [], []
    for lock_key, group in groupby(candidates, key=lambda candidate: candidate.lock_key):
        group = list(group)
        if group[0].subject == UNDECLARED:
            yield from _undeclared(group)
        elif lock_key is None:
            items.extend(candidate.pk for candidate in group if candidate.subject == ITEM)
            entries.extend((candidate.namespace, candidate.pk) for candidate in group if candidate.subject == REGISTRY)
            for candidate in group:
                if candidate.subject == FACTORS:
                    yield from _confirm_factors(candidate.pk, scope, reader, now())
        else:
            keys.append((lock_key, group))
        if len(keys) >= KEYS_PER_ROUND:
            yield from _confirm_keys(keys, scope, reader, now(), unrecorded)
            keys = []
        if len(items) >= KEYS_PER_ROUND:
            yield from _confirm_items(items, scope, reader)
            items = []
        while len(entries) >= KEYS_PER_ROUND:
            yield from _confirm_entries(entries[:KEYS_PER_ROUND], scope, reader, now())
            entries = entries[KEYS_PER_ROUND:]
    yield from _confirm_keys(keys, scope, reader, now(), unrecorded)
    yield from _confirm_items(items, scope, reader)
    yield from _confirm_entries(entries, scope, reader, now())
    for pk, (item, recorded) in unrecorded.items():
        finding = unrecorded_finding(pk, recorded, scope.constraints[item.model], item.model)
        yield replace(finding, items={pk: item.instance()})


def _undeclared(group: list[Candidate]) -> Iterator[Finding]:
    # A namespace nobody declares has nothing to read again: the count is what was read.
    for candidate in group:
        yield Finding(
            UNDECLARED,
            UndeclaredNamespace(candidate.namespace),
            key=candidate.lock_key,
            lock_exists=True,
            count=int(candidate.detail),
        )


def _read_items(pks: Iterable[str], scope: Scope, reader: Reader, now: int) -> dict:
    """The live audited items ``pks`` (PK -> :class:`~.checking.ItemRead`), read consistently."""
    wanted = {}
    for pk in pks:
        model = scope.model_of(pk) if pk else None
        if model is not None:
            wanted[pk] = model
    keys = [scope.item_key(model, pk) for pk, model in wanted.items()]
    raw_items = reader.batch_get(keys, attributes=scope.attributes)
    found = {}
    for raw in raw_items:
        pk = raw["PK"]["S"]
        model = wanted.get(pk)
        if model is not None and is_live(raw, now) and raw.get("SK", {}).get("S") == scope.sort_keys[model]:
            found[pk] = scope.item(model, raw)
    return found


def _confirm_keys(keys, scope: Scope, reader: Reader, now: int, unrecorded: dict) -> Iterator[Finding]:
    if not keys:
        return
    lock_keys = [{"PK": {"S": lock_key}, "SK": {"S": LOCK_SORT_KEY}} for lock_key, _ in keys]
    locks = {
        raw["PK"]["S"]: raw
        for raw in reader.batch_get(lock_keys, attributes=scope.attributes)
        if raw.get("SK", {}).get("S") == LOCK_SORT_KEY and is_live(raw, now)
    }
    seen = {lock_key: {c.pk for c in group if c.subject == HELD} for lock_key, group in keys}
    owners = {c.pk for _, group in keys for c in group if c.subject == LOCK}
    owners |= {raw.get("owner", {}).get("S") for raw in locks.values()}
    items = _read_items({pk for holders in seen.values() for pk in holders} | owners, scope, reader, now)
    for lock_key, group in keys:
        declared = scope.constraint_of(group[0].namespace)
        if declared is None:
            continue
        model, constraint = declared
        finding, not_recorded = check_key(model, constraint, lock_key, locks.get(lock_key), items, seen[lock_key], now)
        if finding is not None:
            yield finding
        for pk in not_recorded:
            item, recorded = unrecorded.setdefault(pk, (items[pk], {}))
            add_record(recorded, item, constraint, lock_key)


def _confirm_items(pks: list[str], scope: Scope, reader: Reader) -> Iterator[Finding]:
    if not pks:
        return
    for pk, item in _read_items(pks, scope, reader, epoch_now()).items():
        yield from item_findings(pk, item, scope.constraints[item.model])[1]


def _confirm_entries(entries: list[tuple[str, str]], scope: Scope, reader: Reader, now: int) -> Iterator[Finding]:
    """The registry findings ``entries`` (``(registry partition, member PK)``) still show:
    each entry and its item read again, consistently."""
    entries = [(partition, pk) for partition, pk in entries if partition in scope.registries and pk]
    if not entries:
        return
    keys = [scope.registries[partition][1].key(pk) for partition, pk in entries]
    listed = {(raw["PK"]["S"], raw["SK"]["S"]) for raw in reader.batch_get(keys, attributes=["PK", "SK"])}
    items = _read_items({pk for _, pk in entries}, scope, reader, now)
    for partition, pk in entries:
        finding = registry_finding(partition, pk, (partition, pk) in listed, items.get(pk), scope)
        if finding is not None:
            yield finding


def registry_finding(partition: str, pk: str, listed: bool, item, scope: Scope) -> Finding | None:
    """The finding of ``pk``'s entry in registry ``partition`` (``listed``: the entry is there)
    given its item as read (an :class:`~.checking.ItemRead`, ``None``: gone), or ``None`` when
    they agree."""
    model, registry = scope.registries[partition]
    member = item is not None and item.model is model and is_member(registry, item)
    if member == listed:
        return None
    items = {pk: item.instance()} if item is not None else {}
    kind = MISSING_ENTRY if member else STRAY_ENTRY
    holders = (pk,) if member else ()
    return Finding(kind, RegistryName(partition), pk, listed, holders=holders, model=model, items=items)


def _confirm_factors(pk: str, scope: Scope, reader: Reader, now: int) -> Iterator[Finding]:
    declared = scope.constraint_of(WEBAUTHN)
    if declared is None or scope.model_of(pk) is not declared[0]:
        return
    model, constraint = declared
    partition = reader.query_partition(pk, attributes=scope.attributes)

    def read(keys: list) -> list:
        return [raw for raw in reader.batch_get(keys, attributes=scope.attributes) if is_live(raw, now)]

    for finding in partition_findings(pk, partition, constraint, read, now):
        yield replace(finding, model=model)
