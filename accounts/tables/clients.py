"""The botocore clients every request reads and writes through: one per configuration,
built once under a lock and shared by every thread, each under the request deadline."""

import os
import threading
import typing
from typing import Any

import botocore.config
import botocore.handlers
import botocore.session

from .. import answers, deadline, regions
from ..app_settings import app_settings

# Enough pooled connections for every thread a busy server or the benchmark runs, so no
# request waits for (or re-opens) a connection.
MAX_POOL_CONNECTIONS = 64


def credentials():
    """Explicit credentials for a custom endpoint (DynamoDB Local needs some, any will do)."""
    if app_settings.ENDPOINT_URL and not os.environ.get("AWS_ACCESS_KEY_ID"):
        return "local", "local"
    return None, None


class SharedClient:
    """One thread-safe botocore client, built once under a lock, sending each request in at
    most ``attempts`` attempts (botocore's standard retries), under the request deadline.

    PynamoDB builds its client lazily per connection; with many threads starting at once
    each builds its own (hundreds of milliseconds each), so transactions use this one.
    A client is kept for each configuration it was built for, so settings that change and
    change back (every test, with the ``accounts_table`` fixture) find theirs again.
    """

    def __init__(self, attempts=1):
        self._attempts = attempts
        self._lock = threading.Lock()
        self._client = None
        self._built = {}

    def reset(self):
        with self._lock:
            self._client = None

    def forget(self):
        with self._lock:
            self._client = None
            self._built.clear()

    def get(self):
        client = self._client
        if client is not None:
            return client
        with self._lock:
            if self._client is None:
                configuration = ClientConfiguration.current()
                if configuration not in self._built:
                    self._built[configuration] = self._build(configuration)
                self._client = self._built[configuration]
            return self._client

    def _build(self, configuration):
        config = botocore.config.Config(
            connect_timeout=configuration.connect_timeout,
            read_timeout=configuration.read_timeout,
            max_pool_connections=MAX_POOL_CONNECTIONS,
            retries={"total_max_attempts": self._attempts, "mode": "standard"},
            parameter_validation=False,
        )
        client = _create_client(
            configuration,
            region_name=configuration.region,
            endpoint_url=configuration.endpoint_url,
            aws_access_key_id=configuration.access_key,
            aws_secret_access_key=configuration.secret_key,
            config=config,
        )
        return answers.read_items_directly(regions.guard_writes(deadline.watch(client)))


class ClientConfiguration(typing.NamedTuple):
    """Everything a client is built from: the settings, and how many handlers botocore gives
    a new session (moto's mock, or a test plugin, adds its own when imported: a client built
    before would not have it)."""

    region: str
    endpoint_url: str | None
    access_key: str | None
    secret_key: str | None
    connect_timeout: float
    read_timeout: float
    handler_count: int
    # Outside ACCOUNTS_WRITE_REGION a client refuses every write (accounts.regions).
    reads_only: bool

    @classmethod
    def current(cls):
        return cls(
            app_settings.REGION,
            app_settings.ENDPOINT_URL,
            *credentials(),
            *deadline.attempt_timeouts(),
            len(botocore.handlers.BUILTIN_HANDLERS),
            regions.reads_only(),
        )


_sessions_lock = threading.Lock()
_sessions = {}


def _create_client(configuration, **options):
    """A DynamoDB client from the botocore session of ``configuration.handler_count``: one
    session serves every client (a session of its own loads DynamoDB's service model again,
    hundreds of milliseconds), and botocore sessions are not thread-safe."""
    with _sessions_lock:
        if configuration.handler_count not in _sessions:
            _sessions[configuration.handler_count] = botocore.session.get_session()
        return _sessions[configuration.handler_count].create_client("dynamodb", **options)


def reset():
    """Build each client for the current settings when next used (``configure()``)."""
    _client.reset()
    _plain_client.reset()


def forget_clients():
    """Build every client afresh when next used (a test that registered handlers on one)."""
    _client.forget()
    _plain_client.forget()


# The engine resends itself, keeping the ClientRequestToken (see transactions): one attempt.
_client = SharedClient(attempts=1)
# Sessions and rate counters (accounts.dynamo): botocore's own retries.
_plain_client = SharedClient(attempts=3)


def dynamodb_client() -> Any:
    """The botocore DynamoDB client the transaction helper sends with."""
    return _client.get()


def plain_client() -> Any:
    """The botocore DynamoDB client of :mod:`accounts.dynamo` (sessions, rate counters),
    which retries with botocore's standard retries."""
    return _plain_client.get()
