"""Global tables: which region may write, and what a table's replicas allow.

AWS: in a global table "transactions are ACID only within the AWS Region where the write
is made originally", they "are not supported across Regions", and replicas converge by
"last writer wins" per item. Two regions writing would each accept a sign-up of the same
address: the locks would not hold. Multi-Region strong consistency (MRSC) tables support
neither transactions nor TTL, which the app needs. So the app writes in ONE region,
``ACCOUNTS_WRITE_REGION``; a process running elsewhere serves reads only and refuses
every write with :class:`~accounts.exceptions.ReadOnlyRegion` (the 503 page says so).
"""

from .app_settings import app_settings
from .exceptions import ReadOnlyRegion

WRITE_OPERATIONS = ("PutItem", "UpdateItem", "DeleteItem", "BatchWriteItem", "TransactWriteItems")
STRONG = "STRONG"


def reads_only():
    """Whether this process runs outside ``ACCOUNTS_WRITE_REGION`` (when set)."""
    write_region = app_settings.WRITE_REGION
    return bool(write_region) and write_region != app_settings.REGION


def _refuse_write(**kwargs):
    raise ReadOnlyRegion(
        f"This process runs in {app_settings.REGION}, which serves reads only: accounts are "
        f"written in {app_settings.WRITE_REGION} (ACCOUNTS_WRITE_REGION). Nothing was sent."
    )


def guard_writes(client):
    """Make ``client`` (a botocore client) refuse every write, before sending it, while
    this process runs outside the write region. Returns the client."""
    if reads_only():
        for operation in WRITE_OPERATIONS:
            client.meta.events.register(
                f"before-call.dynamodb.{operation}", _refuse_write, unique_id=f"accounts.regions.{operation}"
            )
    return client


def replicas(table):
    """The regions of a DescribeTable answer's replicas (empty: not a global table)."""
    return [replica.get("RegionName") for replica in table.get("Replicas") or []]


def is_strongly_consistent(table):
    """Whether the global table is multi-Region strongly consistent (MRSC)."""
    return table.get("MultiRegionConsistency") == STRONG
