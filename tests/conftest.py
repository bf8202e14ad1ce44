"""Fixtures: a real DynamoDB Local (in memory, one per session) and moto.

Behaviour of the engine is proven on DynamoDB Local; moto serves fast single-threaded unit
tests and injected faults only (it ignores ClientRequestToken and breaks under concurrent
transactions). A test that needs DynamoDB Local fails, never skips, when it cannot start.

DynamoDB Local is the app's own fixture (accounts.testing, the plugin host projects get),
started from the copy `make` keeps in var/dynamodb-local (see tests/__init__.py).
"""

import re
import uuid

import pytest

# The app's pytest plugin, also when the installed package does not register it (an
# editable install made before the plugin existed).
pytest_plugins = ["accounts.testing", "tests.markers"]


@pytest.fixture(scope="session", autouse=True)
def _dynamodb_unblocked(accounts_dynamodb_blocker):
    """The app's own tests reach DynamoDB through their own fixtures (``ddb``, ``moto_ddb``,
    ``dynamodb_local``), not only ``accounts_table``: the plugin's blocker stands aside."""
    with accounts_dynamodb_blocker.unblock():
        yield


@pytest.fixture(autouse=True)
def _argon2_when_marked(request):
    """``@pytest.mark.argon2``: the test hashes with the demo site's hashers (Argon2 first),
    as production does, instead of the test settings' fast MD5."""
    if request.node.get_closest_marker("argon2") is None:
        yield
        return
    from django.conf import settings
    from django.test import override_settings

    with override_settings(PASSWORD_HASHERS=settings.DEMO_PASSWORD_HASHERS):
        yield


@pytest.fixture(autouse=True)
def _clients_of_its_own():
    """Each test gets DynamoDB clients of its own: tests that inject faults or count requests
    register handlers on them, which the next test must not inherit."""
    yield
    from accounts.tables import forget_clients

    forget_clients()


@pytest.fixture(scope="session")
def dynamodb_local(accounts_dynamodb_local):
    return accounts_dynamodb_local


@pytest.fixture(scope="session")
def accounts_endpoint_url(dynamodb_local):
    """The suite's accounts_table lives on its DynamoDB Local."""
    return dynamodb_local.endpoint_url


def _fresh_table(settings, endpoint_url, name):
    from accounts.tables import create_table

    settings.ACCOUNTS_ENDPOINT_URL = endpoint_url
    settings.ACCOUNTS_TABLE_NAME = name
    create_table(wait=True)


@pytest.fixture
def ddb(accounts_table, dynamodb_local):
    """An empty accounts table on DynamoDB Local: the session's, the items each test wrote
    deleted after it (the plugin's ``accounts_table``), so no test waits for a table to be made."""
    return dynamodb_local


@pytest.fixture
def fresh_ddb(dynamodb_local, settings):
    """A table of the test's own on DynamoDB Local, made for it and deleted after: for tests
    that change the table itself (its TTL), which the next test must not inherit."""
    from accounts.tables import TableModel

    _fresh_table(settings, dynamodb_local.endpoint_url, f"test-{uuid.uuid4().hex[:12]}")
    yield dynamodb_local
    TableModel.delete_table()


@pytest.fixture
def lagging_ttl(fresh_ddb):
    """TTL off on the test's own table, so expired items stay, as on AWS where TTL deletes
    them up to days late. (DynamoDB Local with TTL on deletes them within about 10 s.)"""
    from accounts.tables import TableModel, dynamodb_client

    dynamodb_client().update_time_to_live(
        TableName=TableModel.Meta.table_name, TimeToLiveSpecification={"Enabled": False, "AttributeName": "expires"}
    )
    return fresh_ddb


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


@pytest.fixture
def proxy(ddb, settings):
    """DynamoDB Local behind a counting proxy (tests/proxy.py), which the app now talks to:
    count its requests, or set ``proxy.fault`` to inject faults on the wire."""
    from tests.proxy import CountingProxy

    with CountingProxy(ddb.endpoint_url) as counting_proxy:
        settings.ACCOUNTS_ENDPOINT_URL = counting_proxy.endpoint_url
        yield counting_proxy
        settings.ACCOUNTS_ENDPOINT_URL = ddb.endpoint_url


@pytest.fixture
def clocks(monkeypatch):
    """App servers whose clocks differ (tests/clocks.py): ``with clocks.server(120):`` runs
    a block on a server two minutes fast."""
    from tests.clocks import Clocks

    return Clocks(monkeypatch)


# How a test fails when a guard's mutation is caught: an assertion, pytest.raises not raising,
# or a lock or item that should be there missing. Any other error (a request DynamoDB
# refuses: accounts.exceptions.InvalidTransaction) is no proof of the guard.
CAUGHT = (AssertionError, pytest.fail.Exception, LookupError)


def pytest_generate_tests(metafunc):
    """A test ``tests/guard_mutations.tsv`` names as catching a guard runs once more per such
    guard, without it, and must then fail on an assertion (tests/guard_mutations.py)."""
    from tests.guard_mutations import catching_tests

    guards = catching_tests().get(metafunc.definition.nodeid)
    if not guards:
        return
    params = [pytest.param(None, id="as_sent")]
    for guard in guards:
        reason = f"without {guard} (tests/guard_mutations.tsv) this behaviour breaks"
        mark = pytest.mark.xfail(strict=True, raises=CAUGHT, reason=reason)
        params.append(pytest.param(guard, id=f"without_{guard}", marks=mark))
    metafunc.parametrize("guard_mutation", params, indirect=True)


def pytest_collection_modifyitems(config, items):
    """Of a parametrized test, only the parameters named as catching a guard run without it."""
    from tests.guard_mutations import named_as_catching

    kept = []
    for item in items:
        callspec = getattr(item, "callspec", None)
        guard = callspec.params.get("guard_mutation") if callspec is not None else None
        if guard is not None:
            others = re.sub(rf"^without_{guard}-?|-?without_{guard}(?=-|$)", "", callspec.id)
            if not named_as_catching(item.nodeid.split("[")[0], others, guard):
                continue
        kept.append(item)
    if len(kept) != len(items):
        kept_ids = {id(item) for item in kept}
        config.hook.pytest_deselected(items=[item for item in items if id(item) not in kept_ids])
        items[:] = kept


@pytest.fixture(autouse=True)
def guard_mutation(request):
    """The guard removed from every request this test sends (``None``: all sent as the code
    builds them); see :func:`pytest_generate_tests`."""
    guard = getattr(request, "param", None)
    if guard is None:
        yield None
        return
    from tests.guard_mutations import removed

    with removed(guard) as dropped:
        yield guard
    if not dropped:
        raise RuntimeError(f"The test sent no conjunct of {guard}: its mutation removed nothing.")
