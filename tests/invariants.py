"""The lock protocol's invariants, checked on one consistent Scan of the whole table.

- **I1** each lock key has at most one live owner;
- **I2** every value a live item holds under a declared constraint is locked by that item;
- **I3** once activity stops, no lock is left without a live owner holding its value.

"Live" means the item exists and has not expired (an ``expires`` in the past is absent, as
every guard treats it). Written apart from the audit on purpose: the property and race
tests judge the engine AND the audit's repairs by it, so it must not share their code.
:func:`holds` is the one place that says which lock key an item holds under a constraint;
a partial constraint (the email of an unverified account holds no lock) changes it there.
"""

import time

from accounts.exceptions import InvalidUniqueValue
from accounts.tables import TableModel, dynamodb_client, get_account_model
from accounts.uniqueness import LOCK_PREFIX, LOCK_SORT_KEY, constraints_of


def scan_everything():
    """Every item of the table, raw, read with consistent reads."""
    client = dynamodb_client()
    items, start = [], None
    while True:
        page = client.scan(
            TableName=TableModel.Meta.table_name,
            ConsistentRead=True,
            **({"ExclusiveStartKey": start} if start else {}),
        )
        items.extend(page["Items"])
        start = page.get("LastEvaluatedKey")
        if not start:
            return items


def is_live(raw, now=None):
    """Exists (it was scanned) and has not expired: it lives through the second its
    ``expires`` names (DynamoDB's TTL boundary). An ``expires`` that is not a number is
    ignored, as TTL ignores it."""
    expires = raw.get("expires", {}).get("N")
    return expires is None or float(expires) >= (now if now is not None else time.time())


def holds(item, constraint):
    """The lock keys ``item`` holds under ``constraint`` (none: no value, or one that can
    never be a key: the engine refuses to write those, so they hold nothing)."""
    try:
        return constraint.lock_keys(item)
    except InvalidUniqueValue:
        return ()


def _model_of(raw, models):
    pk, sort_key = raw["PK"]["S"], raw.get("SK", {}).get("S")
    for model in models:
        range_attribute = model._range_key_attribute()
        default = range_attribute.default if range_attribute is not None else None
        if pk.startswith(model.key_prefix) and sort_key == default:
            return model
    return None


def violations(models=None, *, quiescent=True, items=None):
    """Every breach of I1, I2 and (when ``quiescent``) I3, as readable strings; ``[]`` when
    the table is sound. ``models`` default to the account model; each has ``key_prefix``."""
    models = models or [get_account_model()]
    raw_items = scan_everything() if items is None else items
    now = time.time()
    live = {}
    locks = {}
    for raw in raw_items:
        if raw.get("SK", {}).get("S") == LOCK_SORT_KEY and raw["PK"]["S"].startswith(LOCK_PREFIX):
            if is_live(raw, now):
                locks[raw["PK"]["S"]] = raw.get("owner", {}).get("S")
            continue
        model = _model_of(raw, models)
        # A deleted item's tombstone holds nothing and owns nothing.
        if model is not None and is_live(raw, now) and "deleted" not in raw:
            live[raw["PK"]["S"]] = model.from_raw_data(raw)
    found = []
    constrained = [(model, constraint) for model in models for constraint in constraints_of(model)]
    # A key is one value whichever constraint of its namespace an item holds it under (an
    # account's primary address, or one of its others).
    holders = {}
    for model, constraint in constrained:
        for pk, item in live.items():
            if type(item) is model:
                for key in holds(item, constraint):
                    holders.setdefault(key, set()).add(pk)
    for key, pks in sorted(holders.items()):
        if len(pks) > 1:
            found.append(f"I1 {key} is held by {len(pks)} live items: {', '.join(sorted(pks))}")
        for pk in sorted(pks):
            if locks.get(key, "<no lock>") != pk:
                found.append(f"I2 {pk} holds {key}, whose lock is {locks.get(key, '<no lock>')}")
    if quiescent:
        for key, owner in sorted(locks.items()):
            mine = [constraint for _, constraint in constrained if constraint.owns_key(key)]
            if not mine:
                continue  # another kind of lock (not a declared constraint of these models)
            item = live.get(owner)
            if item is None or not any(key in holds(item, constraint) for constraint in mine):
                found.append(f"I3 {key} is left to {owner}, which does not hold it")
    return found
