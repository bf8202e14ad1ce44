"""Global tables: the system check reads the table's replicas (one DescribeTable, stubbed
here with AWS's answers), and a process outside ACCOUNTS_WRITE_REGION serves reads only."""

import pytest
from django.test import Client

from accounts import checks, store
from accounts.exceptions import ReadOnlyRegion
from tests.web import PASSWORD, login, signed_up_client

KEYS = {
    "KeySchema": [{"AttributeName": "PK", "KeyType": "HASH"}, {"AttributeName": "SK", "KeyType": "RANGE"}],
    "AttributeDefinitions": [
        {"AttributeName": "PK", "AttributeType": "S"},
        {"AttributeName": "SK", "AttributeType": "S"},
    ],
}
REPLICAS = [
    {"RegionName": "us-east-1", "ReplicaStatus": "ACTIVE"},
    {"RegionName": "eu-west-1", "ReplicaStatus": "ACTIVE"},
]


@pytest.fixture
def described(monkeypatch):
    """Make the check's DescribeTable answer what the test sets (one call per check)."""
    answers, calls = [], []

    def describe_table():
        calls.append(1)
        return answers[0]

    monkeypatch.setattr(checks, "describe_table", describe_table)
    return answers, calls


def check_ids(described, table):
    answers, calls = described
    answers[:] = [{"TableName": "accounts", **KEYS, **table}]
    issues = checks.check_table(None)
    assert len(calls) == 1
    return [issue.id for issue in issues]


def test_a_table_of_one_region_passes(described):
    assert check_ids(described, {}) == []


def test_an_mrsc_global_table_is_an_error(described, settings):
    settings.ACCOUNTS_WRITE_REGION = "us-east-1"

    assert check_ids(described, {"Replicas": REPLICAS, "MultiRegionConsistency": "STRONG"}) == ["accounts.E018"]


def test_an_mrec_global_table_without_a_write_region_is_an_error(described):
    ids = check_ids(described, {"Replicas": REPLICAS, "MultiRegionConsistency": "EVENTUAL"})

    assert ids == ["accounts.E019"]


def test_an_mrec_global_table_written_from_this_region_passes(described, settings):
    settings.ACCOUNTS_WRITE_REGION = "us-east-1"

    assert check_ids(described, {"Replicas": REPLICAS}) == []


def test_a_process_in_another_region_is_warned_it_serves_reads_only(described, settings):
    settings.ACCOUNTS_REGION = "eu-west-1"
    settings.ACCOUNTS_WRITE_REGION = "us-east-1"

    ids = check_ids(described, {"Replicas": REPLICAS, "MultiRegionConsistency": "EVENTUAL"})

    assert ids == ["accounts.W006"]


@pytest.fixture
def reads_only(ddb, settings):
    """An account, then this process moved to a region that serves reads only."""
    client = signed_up_client()
    settings.ACCOUNTS_WRITE_REGION = settings.ACCOUNTS_REGION
    settings.ACCOUNTS_REGION = "eu-west-1"
    settings.ACCOUNTS_SESSION_TOUCH_INTERVAL = 0
    return client


@pytest.mark.dynamodb_local
def test_outside_the_write_region_writes_are_refused_before_sending(reads_only, count_requests):
    with pytest.raises(ReadOnlyRegion, match="serves reads only"):
        store.signup("grace@example.com", "grace", "!hash")

    assert "TransactWriteItems" not in count_requests.counts
    assert store.get_by_email("ada@example.com").username == "ada"


@pytest.mark.dynamodb_local
def test_outside_the_write_region_pages_are_read_and_changes_answer_503_saying_why(reads_only, count_requests):
    page = reads_only.get("/accounts/profile/")
    login_attempt = login(Client(), "ada", PASSWORD)

    assert page.status_code == 200
    assert login_attempt.status_code == 503
    assert "changes are made in another region. Nothing was saved." in login_attempt.content.decode()
    written = {"PutItem", "UpdateItem", "DeleteItem", "BatchWriteItem", "TransactWriteItems"}
    assert written.isdisjoint(count_requests.counts)
