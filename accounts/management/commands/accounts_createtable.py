import time

import botocore.exceptions
from django.core.management.base import BaseCommand, CommandError
from pynamodb.exceptions import PynamoDBException

from accounts.app_settings import app_settings
from accounts.tables import create_table, dynamodb_client, record_key_version, recorded_key_version

# A DynamoDB that did not answer in time (a DynamoDB Local whose JVM has just started, with
# its data to open), or answered "not now": the creation is tried again, this many times
# in all, after a pause that doubles from one second.
ATTEMPTS = 5
TIMEOUTS = (botocore.exceptions.ReadTimeoutError, botocore.exceptions.ConnectTimeoutError)
NOT_NOW_CODES = frozenset(
    {
        # A creation that timed out may still have been applied: the next CreateTable finds
        # the table being made (or describes it, ACTIVE, and goes on).
        "ResourceInUseException",
        "ThrottlingException",
        "LimitExceededException",
        "InternalServerError",
        "ServiceUnavailable",
    }
)


def is_worth_another_try(error: Exception) -> bool:
    if isinstance(error, TIMEOUTS):
        return True
    return isinstance(error, botocore.exceptions.ClientError) and error.response["Error"]["Code"] in NOT_NOW_CODES


def record_key_version_if_new() -> None:
    """After an attempt that timed out, the table found may be the one that attempt made,
    which :func:`create_table` then does not know it created: when it holds nothing, not
    even the record of its locks' key version, record this server's, as on a new table
    (an empty table has no lock keyed with any other)."""
    client = dynamodb_client()
    if recorded_key_version(client) is not None:
        return
    if not client.scan(TableName=app_settings.TABLE_NAME, Limit=1, ConsistentRead=True)["Items"]:
        record_key_version()


class Command(BaseCommand):
    help = (
        "Create the accounts table (PK/SK strings, on-demand billing) if it is missing; enable TTL on 'expires'. "
        f"A creation that times out is tried again ({ATTEMPTS} attempts in all)."
    )
    # The checks would warn that the table is missing (accounts.W001): the very thing
    # this command is about to fix.
    requires_system_checks = []

    def handle(self, *args, **options):
        name = app_settings.TABLE_NAME
        where = app_settings.ENDPOINT_URL or f"AWS {app_settings.REGION}"
        try:
            created = self._create(name, where)
        except (PynamoDBException, botocore.exceptions.BotoCoreError, botocore.exceptions.ClientError) as error:
            raise CommandError(f"Could not create table {name!r} at {where}: {error}") from error
        if created:
            self.stdout.write(self.style.SUCCESS(f"Created table {name!r} at {where}; it is ACTIVE."))
        else:
            self.stdout.write(f"Table {name!r} already exists at {where}; nothing to do.")

    def _create(self, name: str, where: str) -> bool:
        """Whether the table was created: :func:`create_table`, tried again after a timeout."""
        attempt = 1
        while True:
            try:
                created = create_table(wait=True)
                break
            except (botocore.exceptions.BotoCoreError, botocore.exceptions.ClientError) as error:
                if attempt == ATTEMPTS or not is_worth_another_try(error):
                    raise
                pause = 2 ** (attempt - 1)
                self.stderr.write(f"Creating table {name!r} at {where}: {error}; trying again in {pause} s.")
                time.sleep(pause)
                attempt += 1
        if attempt > 1 and not created:
            record_key_version_if_new()
        return created
