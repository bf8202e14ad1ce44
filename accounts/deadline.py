"""The request deadline: a web request waits on DynamoDB for at most
``ACCOUNTS_REQUEST_DEADLINE`` seconds in all, retries included.

Every client the app uses has botocore's own connect and read timeouts
(:func:`attempt_timeouts`, derived from the deadline) and botocore's own retries. What is
added here are event hooks on each client (:func:`watch`): ``before-call`` and
``after-call``/``after-call-error`` add up the time the request's calls took (retries and
their pauses included), and ``before-send`` lets an attempt, first or retry, botocore's or
the engine's token-keeping resend, go out only while a whole attempt (connect + read
timeout) still fits in what is left; otherwise :class:`DeadlinePassed` is raised instead of
sending it. So the request is done waiting by its deadline, and knows it sent nothing more.
Time spent elsewhere (hashing a password, rendering) does not count: the bound is on waiting.

Outside a request (commands, the shell) there is no deadline, only the timeouts.
"""

import contextlib
import contextvars
import time
from collections.abc import Iterator

from .app_settings import app_settings
from .exceptions import Unavailable

_current = contextvars.ContextVar("accounts_deadline", default=None)
"""The deadline of the web request this context runs (:func:`started`), or ``None``. Not a
flow's state: a bound on waiting that every DynamoDB call of the request shares. It cannot
travel as an argument: botocore calls the hooks that enforce it (:func:`watch`) with its
own arguments, for every call of every client, from every layer (lookups, the session
store, transactions, rate limits), so passing it would thread it through each of them."""


class DeadlinePassed(Unavailable):
    """The request's deadline left no time for this attempt: it was not sent."""


class _Deadline:
    def __init__(self, seconds):
        self.seconds = seconds
        self.spent = 0.0
        self.call_started = None
        # Whether a transaction of this request committed.
        self.saved = False

    def remaining(self):
        running = 0.0 if self.call_started is None else time.monotonic() - self.call_started
        return self.seconds - self.spent - running


def attempt_timeouts():
    """``(connect, read)`` timeouts of one attempt, in seconds: the configured
    ``ACCOUNTS_CONNECT_TIMEOUT`` and ``ACCOUNTS_READ_TIMEOUT``, cut to a quarter and a half
    of the deadline, so a stalled attempt leaves time to answer (and a failing-fast one
    time to retry)."""
    connect, read = app_settings.CONNECT_TIMEOUT, app_settings.READ_TIMEOUT
    seconds = app_settings.REQUEST_DEADLINE
    if seconds:
        connect, read = min(connect, seconds / 4), min(read, seconds / 2)
    return connect, read


@contextlib.contextmanager
def started(seconds: float | None = None) -> Iterator[None]:
    """Run the block (a web request) under a deadline of ``seconds`` (default
    ``ACCOUNTS_REQUEST_DEADLINE``; ``None`` or 0: no deadline)."""
    seconds = app_settings.REQUEST_DEADLINE if seconds is None else seconds
    token = _current.set(_Deadline(seconds) if seconds else None)
    try:
        yield
    finally:
        _current.reset(token)


def remaining() -> float | None:
    """Seconds left before the deadline, or ``None`` outside a deadline."""
    deadline = _current.get()
    return None if deadline is None else deadline.remaining()


def note_saved() -> None:
    """Record that a transaction of this request committed: from now on, a failure of
    this request cannot say that nothing was saved."""
    deadline = _current.get()
    if deadline is not None:
        deadline.saved = True


def saved_something() -> bool:
    """Whether a transaction of this request committed."""
    deadline = _current.get()
    return deadline is not None and deadline.saved


def _call_started(**kwargs):
    deadline = _current.get()
    if deadline is not None:
        _call_ended()  # a call that failed before botocore could report its end
        deadline.call_started = time.monotonic()


def _call_ended(**kwargs):
    deadline = _current.get()
    if deadline is not None and deadline.call_started is not None:
        deadline.spent += time.monotonic() - deadline.call_started
        deadline.call_started = None


def _refuse_late_attempt(**kwargs):
    deadline = _current.get()
    if deadline is None:
        return None
    if deadline.remaining() < sum(attempt_timeouts()):
        raise DeadlinePassed("The request's deadline for DynamoDB has passed; this attempt was not sent.")
    return None


def watch(client):
    """Make ``client`` (a botocore client) send an attempt only while it fits the deadline."""
    events = client.meta.events
    events.register("before-call.dynamodb", _call_started, unique_id="accounts.deadline.call")
    events.register("after-call.dynamodb", _call_ended, unique_id="accounts.deadline.done")
    events.register("after-call-error.dynamodb", _call_ended, unique_id="accounts.deadline.error")
    events.register_first("before-send.dynamodb", _refuse_late_attempt, unique_id="accounts.deadline.send")
    return client
