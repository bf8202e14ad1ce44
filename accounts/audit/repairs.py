"""The repair of findings: a report's, or one lock key's as staff saw it.

Findings of kind ``orphaned``, ``missing``, ``wrong_owner`` and ``malformed`` are repaired
one guarded transaction each (built by :mod:`accounts.transactions`): the lock must still
be as read and every account involved must still hold what was read, so a repair never
clobbers a concurrent legitimate change. When anything moved, DynamoDB cancels the repair
and it is reported as ``changed``. A damaged lock is written again for its one holder (or
released when nobody holds its value), compared with its damaged values as stored; a
damaged item's values are written again as they are read, but a damaged ``passkeys``,
rebuilt from the partition's credential items and their locks (:mod:`.factors`). A registry's
entry (``stray_entry``, ``missing_entry``) is deleted or put, guarded by its item's
registry attributes as read, or by the item still gone.
"""

import threading
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass

from .. import dynamo, lookups, transactions
from ..exceptions import InvalidUniqueValue, StaleItem, UniquenessError
from ..tables import (
    PASSKEY_SORT_PREFIX,
    STAFF_REGISTRY,
    account_pk,
    get_account_model,
    is_gone,
    malformed_attributes,
    raw_text,
)
from ..uniqueness import LOCK_SORT_KEY, constraints_of, keys_in_namespace
from .checking import add_record
from .factors import WEBAUTHN, rebuilt_passkeys
from .findings import (
    MALFORMED,
    MISSING,
    MISSING_ENTRY,
    ORPHANED,
    REPAIRABLE,
    STRAY_ENTRY,
    UNRECORDED,
    WRONG_OWNER,
    Finding,
    RegistryName,
    _examine,
    _is_unrecorded,
    unrecorded_finding,
)
from .locks import _read_lock
from .scope import constraint_for_namespace, model_and_constraint

# How a repair ended.
REPAIRED, CHANGED, FAILED, NOT_REPAIRABLE, NOTHING_TO_DO = (
    "repaired",
    "changed",
    "failed",
    "not_repairable",
    "nothing_to_do",
)
RELEASED, CLAIMED, TRANSFERRED, REWRITTEN, RECORDED = "released", "claimed", "transferred", "rewritten", "recorded"
LISTED, UNLISTED = "listed", "unlisted"
ACTION_OF = {
    ORPHANED: RELEASED,
    MISSING: CLAIMED,
    WRONG_OWNER: TRANSFERRED,
    UNRECORDED: RECORDED,
    MISSING_ENTRY: LISTED,
    STRAY_ENTRY: UNLISTED,
}
# The registries the audit checks, by partition (a registry entry's finding names it).
REGISTRIES = {STAFF_REGISTRY.partition: STAFF_REGISTRY}

# Transactions on different locks never conflict, so repairs run side by side.
REPAIR_WORKERS = 8


@dataclass(frozen=True)
class Repair:
    """How the repair of one finding ended: ``outcome`` is ``repaired``, ``changed`` (the
    table moved since it was read; nothing written), ``failed``, ``not_repairable`` or
    ``nothing_to_do``; ``action`` is ``released``, ``claimed``, ``transferred``,
    ``rewritten`` (a damaged item's values) or ``recorded`` (the key of a lock the item
    holds, in its ``lock_keys``)."""

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


def plan_repair(finding, accounts, model_class=None):
    """The guarded transaction repairing ``finding``, given the items as read (PK -> item)."""
    model = finding.model or model_class or get_account_model()
    constraint = finding.constraint
    owner_item = accounts.get(finding.owner) if finding.owner else None
    if finding.kind in (MISSING_ENTRY, STRAY_ENTRY):
        registry = REGISTRIES[finding.namespace]
        return transactions.plan_registry_entry(model, registry, finding.key, accounts.get(finding.key))
    if finding.kind == MISSING:
        return transactions.plan_claim_lock(accounts[finding.holder], constraint, key=finding.key)
    if finding.kind == WRONG_OWNER:
        return transactions.plan_transfer_lock(
            accounts[finding.holder], constraint, finding.owner, owner_item, key=finding.key
        )
    if finding.kind == ORPHANED:
        return transactions.plan_release_lock(model, constraint, finding.key, finding.owner, owner_item)
    if finding.kind == UNRECORDED:
        return transactions.plan_record_locks(accounts[finding.holder], finding.stored)
    if finding.kind == MALFORMED and finding.on_item:
        item = accounts[finding.holder]
        names = set(finding.malformed) or set(malformed_attributes(item))
        if "passkeys" in names:
            # Never written absent (that would lose the registrations and their locks):
            # rebuilt from the partition's credential items whose lock names the account.
            item.passkeys = _rebuilt_passkeys(item) or None
        return transactions.plan_rewrite(item, names)
    if finding.kind == MALFORMED:
        # The lock as stored: its owner of the wrong type is compared raw, as read.
        owner = finding.stored.get("owner", finding.owner)
        if finding.holder is not None:
            return transactions.plan_transfer_lock(
                accounts[finding.holder], constraint, owner, owner_item, key=finding.key
            )
        return transactions.plan_release_lock(model, constraint, finding.key, owner, owner_item)
    raise ValueError(f"A {finding.kind} finding has no automatic repair.")


def _rebuilt_passkeys(account):
    """The credential ids of ``account``'s credential items whose lock names it (one
    consistent ``Query`` of its partition and one ``BatchGetItem`` of the locks)."""
    credentials = [raw for raw in dynamo.query_partition(account.PK, PASSKEY_SORT_PREFIX) if not is_gone(raw)]
    ids = {raw_text(raw.get("credential_id")) for raw in credentials} - {None}
    constraint = constraint_for_namespace(WEBAUTHN, type(account))
    by_key = {constraint.key_for(credential_id): credential_id for credential_id in ids}
    found = dynamo.batch_get([dynamo.key(key, LOCK_SORT_KEY) for key in sorted(by_key)]) if by_key else []
    locks = {by_key[raw["PK"]["S"]]: raw for raw in found if raw["PK"]["S"] in by_key and not is_gone(raw)}
    return rebuilt_passkeys(account.PK, credentials, locks)


def action_of(finding):
    """What repairing ``finding`` does to its lock (or item): ``released``, ``claimed``,
    ``transferred``, ``rewritten`` or ``recorded``."""
    if finding.kind != MALFORMED:
        return ACTION_OF[finding.kind]
    if finding.on_item:
        return REWRITTEN
    return TRANSFERRED if finding.holder is not None else RELEASED


def repair(finding, accounts=None, model_class=None):
    """Repair ``finding`` with one guarded transaction; returns a :class:`Repair`.

    ``accounts`` holds the items as read (PK -> item; default: the finding's own); the
    transaction checks that the lock and those items are still as read, so a concurrent
    change wins.
    """
    if not finding.repairable:
        return Repair(finding, NOT_REPAIRABLE, detail=finding.describe())
    try:
        transactions.run(plan_repair(finding, finding.items if accounts is None else accounts, model_class))
    except StaleItem:
        return Repair(finding, CHANGED, detail="The lock or an account changed since it was read; nothing was written.")
    except UniquenessError as error:
        return Repair(finding, FAILED, detail=str(error))
    return Repair(finding, REPAIRED, action_of(finding))


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
        result = repair(finding, model_class=model_class)
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
    holders = [pk for pk, account in accounts.items() if key in keys_in_namespace(account, namespace)]
    if not lock_exists and not holders:
        return None, accounts
    return _examine(constraint, key, lock_exists, owner, holders, accounts, model), accounts


def examine_item(kind, namespace, pk, model_class=None):
    """Re-read item ``pk`` (and, for ``unrecorded``, each lock it should hold; consistent
    GetItems): ``(its finding of ``kind`` (``malformed`` or ``unrecorded``) or None, items
    read)``."""
    model, constraint = model_and_constraint(namespace, model_class)
    item = lookups.get_item(model, pk)
    if item is None:
        return None, {}
    constraints = constraints_of(model)
    if kind == UNRECORDED:
        keys = {}
        for each in constraints:
            if each.many and not each.recorded:
                continue  # its keys are not recorded (see findings._is_unrecorded)
            try:
                held = each.lock_keys(item)
            except InvalidUniqueValue:
                continue
            for key in held:
                if _read_lock(model, key) == (True, pk) and _is_unrecorded(each, key, item):
                    add_record(keys, item, each, key)
        return (unrecorded_finding(pk, keys, constraints, model) if keys else None), {pk: item}
    stored = malformed_attributes(item)
    if not stored:
        return None, {}
    finding = Finding(
        MALFORMED, constraint, pk, True, holders=(pk,), model=model, malformed=tuple(sorted(stored)), stored=stored
    )
    return finding, {pk: item}


def examine_entry(partition, pk, model_class=None):
    """Re-read item ``pk``'s entry in registry ``partition`` and the item (consistent
    GetItems): ``(its finding or None, items read)``."""
    model = model_class or get_account_model()
    registry = REGISTRIES[partition]
    if not pk.startswith(model.key_prefix):
        raise KeyError(f"{pk!r} is not the PK of a {model.__name__}.")
    listed = bool(dynamo.batch_get([registry.key(pk)]))
    item = lookups.get_item(model, pk)
    member = item is not None and registry.includes(item)
    if member == listed:
        return None, {}
    accounts = {pk: item} if item is not None else {}
    kind = MISSING_ENTRY if member else STRAY_ENTRY
    finding = Finding(kind, RegistryName(partition), pk, listed, holders=(pk,) if member else (), model=model)
    return finding, accounts


def repair_key(kind, namespace, key, holder_ids=(), model_class=None):
    """Repair lock ``key`` as staff saw it (a finding of ``kind``), after reading it again;
    for a ``malformed`` or ``unrecorded`` item, ``key`` is the item's PK.

    Nothing is written when the lock is now fine (``nothing_to_do``) or is now out of step
    in another way than ``kind`` (``changed``): staff should look again before acting. A
    registry's finding (``namespace`` a registry's partition, ``STAFF``): ``key`` is the
    member's PK, its entry and item read again.
    """
    if namespace in REGISTRIES:
        finding, accounts = examine_entry(namespace, key, model_class)
        if finding is None:
            seen = Finding(kind, RegistryName(namespace), key=key)
            return Repair(seen, NOTHING_TO_DO, detail="The registry entry is already as it should be.")
        if finding.kind != kind:
            return Repair(finding, CHANGED, detail=f"The entry changed since the audit: {finding.describe()}")
        return repair(finding, accounts, model_class)
    model, _ = model_and_constraint(namespace, model_class)
    if kind in (MALFORMED, UNRECORDED) and key.startswith(model.key_prefix):
        finding, accounts = examine_item(kind, namespace, key, model_class)
    else:
        finding, accounts = examine_key(namespace, key, holder_ids, model_class)
    if finding is None:
        seen = Finding(kind, constraint_for_namespace(namespace, model_class), key=key)
        return Repair(seen, NOTHING_TO_DO, detail="The lock is already as it should be.")
    if finding.kind != kind:
        return Repair(finding, CHANGED, detail=f"The lock changed since the audit: {finding.describe()}")
    return repair(finding, accounts, model_class)
