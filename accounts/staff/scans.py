"""The staff account list: pages of a filtered Scan behind an opaque cursor of constant
size (the last account's id and the page's number, signed).

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


def encode_cursor(account_id, number):
    """The opaque cursor of page ``number``, which starts after account ``account_id``
    (the Scan's ExclusiveStartKey): the same size on page 2 and page 20,000."""
    return signing.dumps([account_id, number], salt=CURSOR_SALT, compress=True)


def decode_cursor(cursor):
    """``(account id, page number)`` inside ``cursor``; raises :class:`InvalidCursor` when forged."""
    try:
        position = signing.loads(cursor, salt=CURSOR_SALT)
    except signing.BadSignature as error:
        raise InvalidCursor(_("This page link is not valid.")) from error
    if not (isinstance(position, list) and len(position) == 2 and isinstance(position[0], str)):
        raise InvalidCursor(_("This page link is not valid."))
    if not isinstance(position[1], int) or position[1] < 2:
        raise InvalidCursor(_("This page link is not valid."))
    return position[0], position[1]


@dataclass(frozen=True)
class AccountPage:
    """One page of accounts, in Scan order: its number, and the cursor of the next page
    (``None`` on the last). A Scan only goes forward: the way back is the first page."""

    accounts: list
    number: int
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
    after, number = decode_cursor(cursor) if cursor else (None, 1)
    start = {"PK": {"S": ACCOUNT_PREFIX + after}, "SK": {"S": PROFILE_SORT_KEY}} if after else None
    accounts = list(
        model.scan(
            filter_condition=_accounts_filter(model),
            limit=per_page + 1,
            last_evaluated_key=start,
            page_size=SCAN_PAGE_SIZE,
        )
    )
    shown = accounts[:per_page]
    next_cursor = encode_cursor(shown[-1].id, number + 1) if len(accounts) > per_page else None
    return AccountPage(shown, number, next_cursor)
