"""PynamoDB's connections follow the settings: every setting a connection is built from gives
another one, and a configuration seen before gets its own back (building one loads
DynamoDB's service model again, which every test that changes a setting used to pay)."""

import pytest

from accounts.app_settings import app_settings
from accounts.tables import TableModel, get_account_model


def connection_of(model):
    """What PynamoDB's connection of ``model`` was built with."""
    table = model._get_connection()
    connection = table.connection
    return {
        "table_name": table.table_name,
        "host": connection.host,
        "region": connection.region,
        "connect_timeout": connection._connect_timeout_seconds,
        "read_timeout": connection._read_timeout_seconds,
        "access_key": connection._aws_access_key_id,
    }


@pytest.mark.parametrize(
    ("setting", "value", "built_with"),
    [
        ("ACCOUNTS_TABLE_NAME", "another-table", {"table_name": "another-table"}),
        ("ACCOUNTS_ENDPOINT_URL", "http://127.0.0.1:10", {"host": "http://127.0.0.1:10"}),
        ("ACCOUNTS_REGION", "eu-west-3", {"region": "eu-west-3"}),
        ("ACCOUNTS_CONNECT_TIMEOUT", 7, {"connect_timeout": 7}),
        ("ACCOUNTS_READ_TIMEOUT", 11, {"read_timeout": 11}),
    ],
)
def test_each_setting_a_connection_is_built_from_gives_a_connection_built_with_it(
    settings, monkeypatch, setting, value, built_with
):
    monkeypatch.delenv("AWS_ACCESS_KEY_ID", raising=False)
    settings.ACCOUNTS_ENDPOINT_URL = "http://127.0.0.1:9"
    before = TableModel._get_connection()

    setattr(settings, setting, value)

    assert TableModel._get_connection() is not before
    for model in (TableModel, get_account_model()):
        assert connection_of(model).items() >= built_with.items()


def test_a_configuration_seen_before_gets_its_connection_back(settings):
    first = {model: model._get_connection() for model in (TableModel, get_account_model())}

    read_timeout = app_settings.READ_TIMEOUT
    settings.ACCOUNTS_READ_TIMEOUT = read_timeout + 1
    changed = TableModel._get_connection()
    settings.ACCOUNTS_READ_TIMEOUT = read_timeout

    assert changed is not first[TableModel]
    assert {model: model._get_connection() for model in first} == first
    # One connection a model: each is built for its own model's schema.
    assert first[TableModel] is not first[get_account_model()]
