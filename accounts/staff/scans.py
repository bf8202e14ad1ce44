"""The staff pages' Scans: account pages behind an opaque cursor, and the staff count.

A Scan reads the table item by item; that is fine here (a few staff, one page at a time)
and never on a person's own pages, which find accounts through their lock items.
"""

from dataclasses import dataclass

from django.core import signing
from django.utils.translation import gettext as _
from pynamodb.expressions.operand import Path

from ..tables import ACCOUNT_PREFIX, PROFILE_SORT_KEY, TOMBSTONE_ATTRIBUTE, get_account_model

ACCOUNTS_PER_PAGE = 50
CURSOR_SALT = "accounts.staff.cursor"
# Items one Scan request may read while filtering: enough to fill a filtered page (lock
# items are skipped) in one or two requests, not the 1 MB a request reads by default.
SCAN_PAGE_SIZE = 1000


class InvalidCursor(ValueError):
    """The cursor was not made by :func:`encode_cursor` with this site's secret key."""


def encode_cursor(trail):
    """The opaque cursor for a page: the signed, compressed ids of the last account of every
    page before it. The last id is the Scan's ExclusiveStartKey; the others lead back."""
    return signing.dumps(list(trail), salt=CURSOR_SALT, compress=True)


def decode_cursor(cursor):
    """The trail of ids inside ``cursor``; raises :class:`InvalidCursor` when forged."""
    try:
        trail = signing.loads(cursor, salt=CURSOR_SALT)
    except signing.BadSignature as error:
        raise InvalidCursor(_("This page link is not valid.")) from error
    if not isinstance(trail, list) or not all(isinstance(account_id, str) for account_id in trail):
        raise InvalidCursor(_("This page link is not valid."))
    return trail


@dataclass(frozen=True)
class AccountPage:
    """One page of accounts, in Scan order, with the cursors of its neighbours.

    ``previous_cursor`` is ``""`` for the first page (no cursor) and ``None`` when there
    is no previous page; ``next_cursor`` is ``None`` on the last page.
    """

    accounts: list
    number: int
    previous_cursor: str
    next_cursor: str


def _accounts_filter(model):
    # Deleted accounts' tombstones are no accounts.
    is_account = (model.SK == PROFILE_SORT_KEY) & model.PK.startswith(ACCOUNT_PREFIX)
    return is_account & Path(TOMBSTONE_ATTRIBUTE).does_not_exist()


def account_page(cursor=None, per_page=ACCOUNTS_PER_PAGE):
    """The page of accounts ``cursor`` points at (the first page without one).

    Lock items share the table and are filtered out. One account more than a page is read,
    so the last page knows it is the last and offers no empty "next" page.
    """
    model = get_account_model()
    trail = decode_cursor(cursor) if cursor else []
    start = {"PK": {"S": ACCOUNT_PREFIX + trail[-1]}, "SK": {"S": PROFILE_SORT_KEY}} if trail else None
    accounts = list(
        model.scan(
            filter_condition=_accounts_filter(model),
            limit=per_page + 1,
            last_evaluated_key=start,
            page_size=SCAN_PAGE_SIZE,
        )
    )
    shown = accounts[:per_page]
    next_cursor = encode_cursor([*trail, shown[-1].id]) if len(accounts) > per_page else None
    if not trail:
        previous_cursor = None
    else:
        previous_cursor = encode_cursor(trail[:-1]) if len(trail) > 1 else ""
    return AccountPage(shown, len(trail) + 1, previous_cursor, next_cursor)


def count_active_staff(at_most=2):
    """How many active staff accounts there are, counting no further than ``at_most``.

    A filtered Scan, stopping as soon as ``at_most`` are found: only the staff pages ask,
    and only before removing a staff account's access.
    """
    model = get_account_model()
    condition = _accounts_filter(model) & (model.is_staff == True) & (model.is_active == True)  # noqa: E712
    found = model.scan(filter_condition=condition, limit=at_most, page_size=SCAN_PAGE_SIZE, attributes_to_get=["PK"])
    return sum(1 for _ in found)
