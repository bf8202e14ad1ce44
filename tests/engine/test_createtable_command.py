"""``manage.py accounts_createtable`` when DynamoDB answers late (a DynamoDB Local whose JVM
has just started): the creation is tried again, and the table it made is a new table."""

import uuid

import pytest

from accounts.identifiers import KEY_VERSION
from accounts.management.commands.accounts_createtable import record_key_version_if_new
from accounts.tables import KEY_VERSION_ITEM, dynamodb_client, recorded_key_version
from tests.proxy import DELAY, CountingProxy
from tests.staff import run_command

pytestmark = pytest.mark.dynamodb_local


@pytest.fixture
def late_dynamodb(dynamodb_local, settings):
    """DynamoDB Local behind a proxy that forwards the first CreateTable only after the
    read timeout (so the command's first attempt times out, and the table is made anyway);
    a table of the test's own, deleted after it."""
    settings.ACCOUNTS_TABLE_NAME = f"late-{uuid.uuid4().hex[:12]}"
    settings.ACCOUNTS_READ_TIMEOUT = 1
    with CountingProxy(dynamodb_local.endpoint_url) as proxy:
        settings.ACCOUNTS_ENDPOINT_URL = proxy.endpoint_url
        delayed = []

        def first_creation_late(operation):
            if operation == "CreateTable" and not delayed:
                delayed.append(operation)
                return DELAY
            return None

        proxy.delay_seconds = 1.5
        proxy.fault = first_creation_late
        yield proxy
        settings.ACCOUNTS_ENDPOINT_URL = dynamodb_local.endpoint_url
    dynamodb_client().delete_table(TableName=settings.ACCOUNTS_TABLE_NAME)


def test_a_creation_that_timed_out_is_tried_again_and_the_table_records_its_key_version(late_dynamodb, settings):
    status, out, err = run_command("accounts_createtable")

    assert status == 0, err
    assert "Read timeout" in err and "trying again in 1 s" in err
    assert late_dynamodb.counts["CreateTable"] >= 1
    description = dynamodb_client().describe_table(TableName=settings.ACCOUNTS_TABLE_NAME)["Table"]
    assert description["TableStatus"] == "ACTIVE"
    # The table the timed-out attempt made is a new one: its locks' key version is this server's.
    assert recorded_key_version() == KEY_VERSION


def test_a_table_that_holds_items_keeps_what_it_records_after_a_retry(dynamodb_local, settings):
    settings.ACCOUNTS_ENDPOINT_URL = dynamodb_local.endpoint_url
    settings.ACCOUNTS_TABLE_NAME = f"older-{uuid.uuid4().hex[:12]}"
    run_command("accounts_createtable")
    client = dynamodb_client()
    client.delete_item(TableName=settings.ACCOUNTS_TABLE_NAME, Key=KEY_VERSION_ITEM)
    client.put_item(TableName=settings.ACCOUNTS_TABLE_NAME, Item={"PK": {"S": "UNIQ#HANDLE#ada"}, "SK": {"S": "LOCK"}})
    try:
        record_key_version_if_new()

        # Locks keyed before versions were recorded: the backfill, not this command, says which.
        assert recorded_key_version() is None
    finally:
        client.delete_table(TableName=settings.ACCOUNTS_TABLE_NAME)
