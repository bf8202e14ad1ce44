"""Fixtures: a real DynamoDB Local (in memory, one per session) and moto.

Behaviour of the engine is proven on DynamoDB Local; moto serves fast single-threaded unit
tests and injected faults only (it ignores ClientRequestToken and breaks under concurrent
transactions). A test that needs DynamoDB Local fails, never skips, when it cannot start.
"""

import os
import uuid

import pytest

from project.dynamodb_local import DynamoDBLocal, DynamoDBLocalError


@pytest.fixture(scope="session")
def dynamodb_local():
    server = DynamoDBLocal()
    try:
        server.start()
    except DynamoDBLocalError as error:
        pytest.fail(f"AWS DynamoDB Local could not start: {error}", pytrace=False)
    yield server
    server.stop()


def _fresh_table(settings, endpoint_url, name):
    from accounts.tables import create_table

    settings.ACCOUNTS_ENDPOINT_URL = endpoint_url
    settings.ACCOUNTS_TABLE_NAME = name
    create_table(wait=True)


@pytest.fixture
def ddb(dynamodb_local, settings):
    """A fresh, empty accounts table on DynamoDB Local."""
    from accounts.tables import TableModel

    _fresh_table(settings, dynamodb_local.endpoint_url, f"test-{uuid.uuid4().hex[:12]}")
    yield dynamodb_local
    TableModel.delete_table()


@pytest.fixture
def moto_ddb(settings, monkeypatch):
    """A fresh accounts table in moto's in-process mock of DynamoDB."""
    from moto import mock_aws

    for name in ("AWS_ACCESS_KEY_ID", "AWS_SECRET_ACCESS_KEY", "AWS_SESSION_TOKEN"):
        monkeypatch.setenv(name, "testing")
    with mock_aws():
        _fresh_table(settings, None, "moto-accounts")
        yield


@pytest.fixture
def count_requests():
    """Counts DynamoDB requests by operation name, on every client the app uses."""
    from tests.support import RequestCounter

    with RequestCounter() as counter:
        yield counter
