"""Time as the table keeps it: whole epoch seconds in ``expires``, the one boundary at which
an item counts as gone, and the clock-skew margin before another server may take its value."""

import functools
import time
from datetime import UTC, datetime

from ..app_settings import app_settings

# The table's one TTL attribute (DynamoDB allows one per table), on every item that expires.
TTL_ATTRIBUTE = "expires"


def utcnow() -> datetime:
    return datetime.now(UTC)


def epoch_now() -> int:
    """Now by this server's clock, in the whole epoch seconds ``expires`` is written in.

    Servers' clocks differ: a value an expired item held is taken only past
    ``ACCOUNTS_CLOCK_SKEW_MARGIN`` (:func:`takeover_cutoff`).
    """
    return int(time.time())


def has_expired(expires: float | None, now: float | None = None) -> bool:
    """Whether an item whose ``expires`` is ``expires`` (``None``: it does not expire) has
    expired at ``now``: the one boundary every read and guard uses, DynamoDB's own TTL's.
    An item lives through the second ``expires`` names and is gone once ``expires < now``."""
    return expires is not None and expires < (epoch_now() if now is None else now)


def is_expired(item: object, now: float | None = None) -> bool:
    """Whether ``item``'s ``expires`` has passed: it is then absent, deleted or not."""
    return has_expired(getattr(item, TTL_ATTRIBUTE, None), now)


def takeover_cutoff(now: int) -> int:
    """The ``expires`` a claim must be older than (``expires < cutoff``) before another item
    may take its value, at ``now`` by this server's clock: ``ACCOUNTS_CLOCK_SKEW_MARGIN``
    earlier, so a holder whose clock is behind ours by less than that can no longer act on
    it (its own guards require ``expires >= now`` by its clock)."""
    return now - skew_margin_seconds()


@functools.lru_cache(maxsize=1)
def skew_margin_seconds() -> int:
    # Read once per configuration (configure() forgets it when a setting changes): a
    # create compares each of its locks with the cutoff, and reading a setting the project
    # leaves to its default costs Django an AttributeError each time (measured: 12 of the
    # 88 us a create spends before botocore).
    return int(app_settings.CLOCK_SKEW_MARGIN.total_seconds())
