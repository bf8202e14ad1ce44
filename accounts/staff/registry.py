"""The staff registry: one item per active staff account in the ``STAFF`` partition, kept
by the transactions that grant, revoke, deactivate and delete (see
:class:`accounts.tables.Registry`). The last-staff protection is a guard, not a count: a
transaction taking an account out of the registry checks another member's entry in the
same request (:func:`accounts.transactions.plan_change`), and is refused with
:class:`~accounts.exceptions.LastMember` when no other member is left.

:func:`backfill` brings a table whose staff accounts predate the registry in line, each
entry in a guarded transaction (``accounts_backfill --staff``).
"""

from dataclasses import dataclass

from .. import dynamo, transactions
from ..exceptions import StaleItem
from ..lookups import get_item
from ..tables import STAFF_REGISTRY, get_account_model


def count_active_staff():
    """How many active staff accounts there are (one ``Query`` of the registry)."""
    return dynamo.count_partition(STAFF_REGISTRY.partition)


@dataclass
class BackfillResult:
    """What :func:`backfill` did: entries put, deleted, and left for a change made meanwhile."""

    added: int = 0
    removed: int = 0
    changed: int = 0


def _registered():
    """The account PKs the registry lists."""
    registered, start = set(), None
    while True:
        items, start = dynamo.query_page(STAFF_REGISTRY.partition, limit=1000, start_key=start)
        registered.update(raw["SK"]["S"] for raw in items)
        if start is None:
            return registered


def _fix(model, pk, item, result, outcome):
    try:
        transactions.run(transactions.plan_registry_entry(model, STAFF_REGISTRY, pk, item))
    except StaleItem:
        result.changed += 1
    else:
        setattr(result, outcome, getattr(result, outcome) + 1)


def backfill():
    """Put the registry entry of every active staff account that lacks one (a Scan of the
    accounts, filtered on ``is_staff``), and delete the entries of accounts gone or no
    longer active staff; each in a transaction guarded by the account as read."""
    model = get_account_model()
    registered = _registered()
    staff = model.scan(
        filter_condition=(model.is_staff == True),  # noqa: E712
        attributes_to_get=["PK", "SK", *STAFF_REGISTRY.attributes],
        consistent_read=True,
    )
    result = BackfillResult()
    for account in staff:
        member, listed = STAFF_REGISTRY.includes(account), account.PK in registered
        if member != listed:
            _fix(model, account.PK, account, result, "added" if member else "removed")
        registered.discard(account.PK)
    # What is left was not found as staff by the Scan: look again, one at a time.
    for pk in registered:
        account = get_item(model, pk)
        if account is None or not STAFF_REGISTRY.includes(account):
            _fix(model, pk, account, result, "removed")
    return result
