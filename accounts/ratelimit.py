"""Rate limits that hold across processes: counters in the accounts table.

Limits are written in django-allauth's notation, ``ACCOUNTS_RATE_LIMITS``:
``{"login_failed": "10/m/ip,5/5m/key", ...}``: each rule is ``<amount>/<period>/<per>``,
the period ``s``, ``m``, ``h`` or ``d`` with an optional multiplier (``5m``), ``per`` one
of ``ip`` (the client address, :func:`client_ip`: an IPv6 one by its network of
``ACCOUNTS_IPV6_PREFIX_LENGTH`` bits), ``key`` (what the action is about,
e.g. the lock key of the email a reset is for) or ``user`` (the signed-in account).

Each rule counts in DynamoDB, one item per rule and value: ``PK=RATE#<action>#<per>#
<period>#<digest of the value>``, ``SK=RATE``; a counter about one account (its login
failures, see :mod:`accounts.devices`) lives in the account's partition instead,
``PK=ACCT#<id>``, ``SK=RATE#<action>#<per>#<period>#<digest>``, so that a completed
password reset clears them all with one ``Query`` (:func:`forget_account`). An item holds
the counts of the current and the previous window (attributes ``w<window number>``) and
``expires`` (the table's TTL attribute).

The limit is a sliding window, estimated as Cloudflare does: the previous window's count,
weighted by how much of it still overlaps the last period, plus the current window's. An
attempt is allowed while that estimate, the attempt included, is at most the amount.

Every attempt is counted *before* it is judged, by one conditional ``UpdateItem`` per
counter: ``ADD w<now> :1`` guarded by ``w<now> < :amount``, returning the counts. The guard
refuses an attempt that the current window alone puts over the limit, writing nothing;
when the previous window's weight puts it over, the count is taken back (one more
``UpdateItem``). As each ``ADD`` is atomic, no two attempts see the same count: under any
concurrency at most ``amount`` pass, and a refused attempt goes no further (a login's
password is not hashed). No count lives in a process (N workers allow what one allows),
and no transaction is used: a counter conflicts with nothing.

Two ways to use it:

- :func:`consume` counts one attempt and raises :class:`RateLimited` when it is over a
  limit: signup, password reset, email change, resend verification.
  :class:`RateLimitMixin` does that in a form view's ``form_valid`` and answers 429 with
  ``Retry-After``.
- :class:`Attempt` counts an attempt that counts only if it fails (``login_failed``, see
  :func:`accounts.devices.login_attempt`): counted first, taken back if it succeeds.
- :class:`Guess` is a guess the caller judges before anything is counted (a second
  factor's code, ``mfa_attempt``): a wrong one is counted as above, and a right one writes
  its success in a transaction that checks each counter is still under its limit
  (:meth:`Counter.under_limit`), so either way at most ``amount`` guesses are answered.
"""

import hashlib
import ipaddress
import logging
import math
import re
import threading
import time
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from datetime import timedelta
from typing import TYPE_CHECKING, Any

import botocore.exceptions
from django.core.exceptions import ImproperlyConfigured, ValidationError
from django.forms import BaseForm
from django.http import HttpRequest, HttpResponse
from django.utils import timezone
from django.utils.timesince import timeuntil
from django.utils.translation import gettext_lazy as _
from django.utils.translation import ngettext

from . import dynamo
from .app_settings import DEFAULT_RATE_LIMITS, app_settings
from .tables import account_pk

if TYPE_CHECKING:
    from django.views.generic import FormView

    # What RateLimitMixin completes (every view using it is a FormView), for mypy only.
    _FormView = FormView[BaseForm]
else:
    _FormView = object

logger = logging.getLogger(__name__)

SCOPES = ("ip", "key", "user")
PERIOD_UNITS = {"s": 1, "m": 60, "h": 3600, "d": 86400}
RULE = re.compile(r"^\s*(?P<amount>\d+)\s*/\s*(?P<count>\d*)(?P<unit>[smhd])\s*/\s*(?P<per>ip|key|user)\s*$")
COUNTER_PREFIX = "RATE#"
COUNTER_SORT_KEY = "RATE"
WINDOW_ATTRIBUTE = re.compile(r"w(-?\d+)")
RATE_LIMITED_MESSAGE = _("Too many attempts. Please wait %(wait)s before trying again.")

_warned_of_forwarding = False
_warning_lock = threading.Lock()


def wait_in_words(seconds: float) -> str:
    """How long to wait, translated: seconds under a minute (``27 seconds``), else whole
    minutes rounded up (``2 minutes``, ``1 hour, 5 minutes``); never "0 minutes"."""
    if seconds < 60:
        return ngettext("%(count)d second", "%(count)d seconds", seconds) % {"count": seconds}
    now = timezone.now()
    return timeuntil(now + timedelta(minutes=math.ceil(seconds / 60)), now=now)


class RateLimited(Exception):
    """An attempt over a limit; ``retry_after`` is whole seconds until one is allowed."""

    def __init__(self, action: str, retry_after: int) -> None:
        self.action = action
        self.retry_after = retry_after
        super().__init__(f"Rate limit of {action!r} exceeded; retry after {retry_after} s.")

    def validation_error(self) -> ValidationError:
        """The non-field form error to show: how long to wait, in words."""
        return ValidationError(
            RATE_LIMITED_MESSAGE, code="rate_limited", params={"wait": wait_in_words(self.retry_after)}
        )


@dataclass(frozen=True)
class Rule:
    """``amount`` attempts per ``period`` seconds, counted ``per`` ip, key or user."""

    amount: int
    period: int
    per: str


def parse_rules(text: str | None) -> list[Rule]:
    """The :class:`Rule` objects of ``"10/m/ip,5/5m/key"``; raises ``ImproperlyConfigured``."""
    rules = []
    for part in filter(str.strip, (text or "").split(",")):
        match = RULE.match(part)
        if match is None:
            raise ImproperlyConfigured(f"Bad rate limit {part!r}: expected e.g. '10/m/ip' or '5/5m/key'.")
        period = int(match["count"] or 1) * PERIOD_UNITS[match["unit"]]
        rules.append(Rule(int(match["amount"]), period, match["per"]))
    return rules


def limits() -> dict[str, list[Rule]]:
    """``{action: [Rule, ...]}`` from ``ACCOUNTS_RATE_LIMITS``: the defaults, each replaced
    by the setting's own value for that action (a false value turns that action off);
    ``False`` or ``{}`` turns every limit off."""
    setting = app_settings.RATE_LIMITS
    if not setting:
        return {}
    merged = {**DEFAULT_RATE_LIMITS, **setting}
    return {action: parse_rules(text) for action, text in merged.items() if text}


def client_ip(request: HttpRequest) -> str:
    """The client's address as the rate limits count it (:func:`counted_address` of
    :func:`client_address`)."""
    return counted_address(client_address(request))


def client_address(request: HttpRequest) -> str:
    """The client's address as it came: ``REMOTE_ADDR``, or with
    ``ACCOUNTS_TRUSTED_PROXY_COUNT`` = n proxies in front, the n-th address of
    ``X-Forwarded-For`` from the right (the one the outermost trusted proxy saw; what the
    client wrote further left is not trusted).

    An ``X-Forwarded-For`` arriving while no proxy is trusted is logged once per process:
    behind a proxy, every visitor would share the proxy's address."""
    trusted = app_settings.TRUSTED_PROXY_COUNT
    forwarded = request.META.get("HTTP_X_FORWARDED_FOR")
    if trusted:
        hops = [part.strip() for part in (forwarded or "").split(",") if part.strip()]
        if len(hops) >= trusted:
            return hops[-trusted]
    elif forwarded is not None:
        _warn_of_forwarding()
    return str(request.META.get("REMOTE_ADDR", ""))


# "[2001:db8::1]:443" as a proxy may write it, the brackets and the port apart.
_BRACKETED = re.compile(r"^\[(?P<address>[^\]]+)\](?::\d+)?$")


def counted_address(address: str) -> str:
    """``address`` spelled canonically, so that every spelling of one address counts as
    one: an IPv4 address (an IPv4-mapped IPv6 one included, ``::ffff:192.0.2.1``) as
    itself; an IPv6 address as its network of ``ACCOUNTS_IPV6_PREFIX_LENGTH`` bits
    (``2001:db8:0:0::7`` and ``2001:DB8::8`` are both ``2001:db8::/64``), its zone
    (``%eth0``) dropped. What is no IP address is returned as it came (stripped)."""
    text = address.strip()
    if bracketed := _BRACKETED.match(text):
        text = bracketed["address"]
    try:
        parsed = ipaddress.ip_address(text.partition("%")[0])
    except ValueError:
        return text
    if isinstance(parsed, ipaddress.IPv6Address) and parsed.ipv4_mapped is not None:
        parsed = parsed.ipv4_mapped
    if isinstance(parsed, ipaddress.IPv4Address):
        return str(parsed)
    return str(ipaddress.IPv6Network((parsed, app_settings.IPV6_PREFIX_LENGTH), strict=False))


def _warn_of_forwarding() -> None:
    global _warned_of_forwarding
    with _warning_lock:
        if _warned_of_forwarding:
            return
        _warned_of_forwarding = True
    logger.warning(
        "A request came with X-Forwarded-For while ACCOUNTS_TRUSTED_PROXY_COUNT is 0: the rate limits "
        "count it by REMOTE_ADDR. Behind reverse proxies, set ACCOUNTS_TRUSTED_PROXY_COUNT to how many "
        "append to X-Forwarded-For, or every visitor shares the proxy's limits (logged once per process)."
    )


def _window(period: int, now: float) -> int:
    return int(now // period)


class Counter:
    """The count of one rule of ``action`` for one value (an address, a key, a user), in
    its own item, or in the partition of account ``account_id`` when given."""

    def __init__(self, action: str, rule: Rule, value: object, *, account_id: str | None = None) -> None:
        self.action = action
        self.rule = rule
        digest = hashlib.sha256(str(value).encode("utf-8", "surrogatepass")).hexdigest()[:32]
        name = f"{COUNTER_PREFIX}{action}#{rule.per}#{rule.period}#{digest}"
        if account_id is None:
            self.key = dynamo.key(name, COUNTER_SORT_KEY)
        else:
            self.key = dynamo.key(account_pk(account_id), name)
        self.current = self.previous = 0

    def take(self, raw: Mapping[str, Any] | None, now: float) -> None:
        """Record the counts of the item as read (``None``: no item, nothing counted)."""
        if raw is None:
            self.current = self.previous = 0
            return
        window = _window(self.rule.period, now)
        live = int(raw.get("expires", {}).get("N", 0)) > now
        self.current = int(raw[f"w{window}"]["N"]) if live and f"w{window}" in raw else 0
        self.previous = int(raw[f"w{window - 1}"]["N"]) if live and f"w{window - 1}" in raw else 0

    def estimate(self, now: float) -> float:
        """Attempts in the last period: the current window's, plus the previous window's
        weighted by the part of it still inside the period."""
        elapsed = (now % self.rule.period) / self.rule.period
        return self.previous * (1 - elapsed) + self.current

    def retry_after(self, now: float) -> int:
        """Whole seconds until one more attempt fits, or 0 when it fits now."""
        period, limit = self.rule.period, self.rule.amount
        into_window = now % period
        room = limit - 1 - self.current
        if room >= 0:
            if self.previous <= room:
                return 0
            # The previous window's weight must fall to ``room``: later in this window.
            seconds = period * (1 - room / self.previous) - into_window
        else:
            # Not in this window: next window, once this one's weight has fallen enough.
            seconds = period - into_window + period * (1 - (limit - 1) / max(self.current, 1))
        return max(1, math.ceil(seconds))

    def fits(self, now: float) -> bool:
        """Whether one more attempt at ``now`` is within the limit, by the counts as read."""
        return self.estimate(now) + 1 <= self.rule.amount

    def under_limit(self, now: float) -> dict[str, Any]:
        """The parameters of a ``ConditionCheck`` that one more attempt at ``now`` still fits,
        for a caller's transaction (:mod:`accounts.transactions` sends it): the current
        window's count is under what the previous window's weight leaves, that weight taken
        from the counts as read (:meth:`take`), and the previous window's count has not grown
        since (a count sent just before the window changed may land after the read). Only
        meaningful when :meth:`fits`. ``ALL_OLD``: a refusal returns the counts."""
        window = _window(self.rule.period, now)
        elapsed = (now % self.rule.period) / self.rule.period
        # current + 1 + previous * (1 - elapsed) <= amount, for a whole current.
        room = math.floor(self.rule.amount - self.previous * (1 - elapsed))
        return {
            "TableName": dynamo.table_name(),
            "Key": self.key,
            "ConditionExpression": "(attribute_not_exists(#current) OR #current < :room)"
            " AND (attribute_not_exists(#previous) OR #previous <= :previous)",
            "ExpressionAttributeNames": {"#current": f"w{window}", "#previous": f"w{window - 1}"},
            "ExpressionAttributeValues": {":room": {"N": str(room)}, ":previous": {"N": str(self.previous)}},
            "ReturnValuesOnConditionCheckFailure": "ALL_OLD",
        }

    def count(self, now: float) -> bool:
        """Count one attempt at ``now`` unless it is over the limit: one conditional
        ``UpdateItem``. Returns True when it is counted and within the limit; False when it
        is over (then nothing stays counted, and :meth:`retry_after` says how long to wait)."""
        window = _window(self.rule.period, now)
        try:
            answer = dynamo.call(
                "update_item",
                TableName=dynamo.table_name(),
                Key=self.key,
                UpdateExpression="ADD #current :one SET expires = :expires REMOVE #stale",
                ConditionExpression="attribute_not_exists(#current) OR #current < :amount",
                ExpressionAttributeNames={"#current": f"w{window}", "#stale": f"w{window - 2}"},
                ExpressionAttributeValues={
                    ":one": {"N": "1"},
                    ":amount": {"N": str(self.rule.amount)},
                    # Once the next window ends, this one no longer counts at all.
                    ":expires": {"N": str((window + 2) * self.rule.period)},
                },
                ReturnValues="ALL_NEW",
                ReturnValuesOnConditionCheckFailure="ALL_OLD",
            )
        except botocore.exceptions.ClientError as error:
            if not dynamo.failed_condition(error):
                raise
            self.take(error.response.get("Item"), now)
            # The guard failed, so this window holds at least the amount.
            self.current = max(self.current, self.rule.amount)
            return False
        item = answer["Attributes"]
        self.take(item, now)
        self._sweep(item, window)
        if self.estimate(now) > self.rule.amount:
            self.take_back(now)
            self.current -= 1
            return False
        return True

    def take_back(self, now: float) -> None:
        """Uncount one attempt counted at ``now`` (in its window), unless the counter was
        deleted meanwhile (a success or a reset forgot it): a count never goes below 0."""
        try:
            dynamo.call(
                "update_item",
                TableName=dynamo.table_name(),
                Key=self.key,
                UpdateExpression="ADD #current :minus_one",
                ConditionExpression="#current > :zero",
                ExpressionAttributeNames={"#current": f"w{_window(self.rule.period, now)}"},
                ExpressionAttributeValues={":minus_one": {"N": "-1"}, ":zero": {"N": "0"}},
            )
        except botocore.exceptions.ClientError as error:
            if not dynamo.failed_condition(error):
                raise

    def _sweep(self, item: Mapping[str, Any], window: int) -> None:
        # An item that expired but that TTL had not deleted yet (it can take days) is
        # counted again with its old windows in it; remove them, or it grows for ever.
        stale = [name for name in item if (match := WINDOW_ATTRIBUTE.fullmatch(name)) and int(match[1]) < window - 1]
        if stale:
            names = {f"#s{index}": name for index, name in enumerate(stale)}
            dynamo.call(
                "update_item",
                TableName=dynamo.table_name(),
                Key=self.key,
                UpdateExpression="REMOVE " + ", ".join(names),
                ExpressionAttributeNames=names,
            )


def _values(request: HttpRequest | None, key: str | None, user: object) -> dict[str, object]:
    signed_in = getattr(request, "user", None)
    if user is None and signed_in is not None and signed_in.is_authenticated:
        user = signed_in
    # Without a request (a form built outside a view), only the rules per key and user apply.
    return {"ip": client_ip(request) if request is not None else None, "key": key, "user": getattr(user, "pk", user)}


def counters_for(
    request: HttpRequest | None, action: str, *, key: str | None = None, user: object = None
) -> list[Counter]:
    """The :class:`Counter` of each rule of ``action`` that applies (a rule per ``key``
    applies only when a key is given; per ``user``, only for a signed-in or given user)."""
    rules = limits().get(action, ())
    values = _values(request, key, user) if rules else {}
    return [Counter(action, rule, values[rule.per]) for rule in rules if values[rule.per] not in (None, "")]


def count_attempt(action: str, counters: Iterable[Counter]) -> float:
    """Count one attempt on each of ``counters``, in order; when one refuses it, take back
    what was counted and raise :class:`RateLimited`. Returns the instant it counted at."""
    now = time.time()
    counted: list[Counter] = []
    for counter in counters:
        if not counter.count(now):
            for earlier in counted:
                earlier.take_back(now)
            raise RateLimited(action, counter.retry_after(now))
        counted.append(counter)
    return now


ANONYMOUS_SESSION_ACTION = "anonymous_session"


def consume_anonymous_session(request: HttpRequest) -> None:
    """Count a new session of nobody that ``request`` is about to write, against
    ``ACCOUNTS_ANONYMOUS_SESSION_LIMIT`` (per client address); raise :class:`RateLimited`
    over it. Apart from ``ACCOUNTS_RATE_LIMITS`` because it guards the session store, not a
    flow: each anonymous write is a table item that lives until its session expires."""
    rules = [rule for rule in parse_rules(app_settings.ANONYMOUS_SESSION_LIMIT) if rule.per == "ip"]
    address = client_ip(request)
    if rules and address:
        count_attempt(ANONYMOUS_SESSION_ACTION, [Counter(ANONYMOUS_SESSION_ACTION, rule, address) for rule in rules])


def consume(request: HttpRequest | None, action: str, *, key: str | None = None, user: str | None = None) -> None:
    """Count one attempt at ``action``; raise :class:`RateLimited` if it is over a limit.

    ``key`` is what the action is about (e.g. the lock key of the email a password reset
    is for), ``user`` the account concerned (default: the signed-in user). Costs one
    conditional ``UpdateItem`` per rule that applies; a refused attempt is not counted (at
    most one more request per rule takes it back), so it does not lengthen the wait.
    Without a request (mail sent by a command), only the rules per key and user apply.
    """
    count_attempt(action, counters_for(request, action, key=key, user=user))


class Attempt:
    """An attempt that counts only if it fails (``login_failed``), counted *before* it is
    judged so that concurrent attempts cannot all pass and a refused one costs nothing more:

    - :meth:`check` counts it on every counter, or raises :class:`RateLimited`;
    - :meth:`succeed` says it did not fail: the failures counted per ``key`` are forgotten
      and this attempt is taken back from the other counters;
    - a failure needs nothing more (:meth:`fail` sends nothing).

    ``counters`` (a list of :class:`Counter`) replaces the rules of ``action`` for
    ``key``/``user``: :func:`accounts.devices.login_attempt` chooses a login's.
    """

    def __init__(
        self,
        request: HttpRequest | None,
        action: str,
        *,
        key: str | None = None,
        user: object = None,
        counters: list[Counter] | None = None,
    ) -> None:
        self.request = request
        self.action = action
        self.counters = counters_for(request, action, key=key, user=user) if counters is None else counters
        self._counted_at: float | None = None

    def check(self) -> None:
        """Count this attempt; raise :class:`RateLimited` (counting nothing) over a limit."""
        self._counted_at = count_attempt(self.action, self.counters)

    def fail(self) -> None:
        """Nothing to send: :meth:`check` counted the attempt as a failure already."""

    def succeed(self) -> None:
        """The attempt did not fail. The counters per ``key`` are deleted (a success forgets
        that key's failures) in the request that saves the new session when sessions are in
        the table (:mod:`accounts.sessions`), else with one request now; each other counter
        takes this attempt back (one ``UpdateItem`` each)."""
        if self._counted_at is None:
            return
        forgotten = [counter.key for counter in self.counters if counter.rule.per == "key"]
        for counter in self.counters:
            if counter.rule.per != "key":
                counter.take_back(self._counted_at)
        self._counted_at = None
        if not forgotten:
            return
        session: Any = getattr(self.request, "session", None)
        if hasattr(session, "delete_with_next_save"):
            for counter_key in forgotten:
                session.delete_with_next_save(counter_key)
        else:
            dynamo.batch_write(deletes=forgotten)


class Guess:
    """A guess at a secret that the caller judges itself, cheaply, before anything is
    counted (a code of a second factor: ``mfa_attempt``); only a wrong guess counts, and
    under any concurrency at most the limit of guesses get an answer other than
    :class:`RateLimited`:

    - the counters are read with what the guess is about (:attr:`keys`, then :meth:`take`:
      no request of their own), and :meth:`check` refuses a guess the read puts over;
    - a wrong guess is counted by :meth:`fail` (a guarded ``UpdateItem`` per counter, as
      :func:`consume`), which refuses it when concurrent guesses used the limit up;
    - a right guess writes its success in ONE transaction with :meth:`conditions`, a
      ``ConditionCheck`` per counter that it still fits, so wrong guesses counted since the
      read stop a lucky right one too; :meth:`refused` is then its answer.

    A right guess counts nothing and forgets nothing: the wrong guesses' counts stand.
    ``counters`` replaces the rules of ``action`` for ``key``/``user``:
    :func:`accounts.devices.second_step_guess` chooses a second step's.
    """

    def __init__(
        self,
        request: HttpRequest | None,
        action: str,
        *,
        key: str | None = None,
        user: object = None,
        counters: list[Counter] | None = None,
    ) -> None:
        self.action = action
        # ``counters``: the guess's own (a login code's tries beside the login's limits; a
        # browser's own at the second step).
        self.counters = counters if counters is not None else counters_for(request, action, key=key, user=user)
        self._read_at: float | None = None

    @property
    def keys(self) -> list[dict[str, dict[str, str]]]:
        """The raw keys of the counter items, to read with what the guess is about."""
        return [counter.key for counter in self.counters]

    def take(self, items: Iterable[Mapping[str, Any]]) -> None:
        """Record the counter items as read (raw items; a missing one counts nothing)."""
        self._read_at = read_at = time.time()
        by_key = {(raw["PK"]["S"], raw["SK"]["S"]): raw for raw in items}
        for counter in self.counters:
            counter.take(by_key.get((counter.key["PK"]["S"], counter.key["SK"]["S"])), read_at)

    def _read_time(self) -> float:
        if self._read_at is None:
            raise RuntimeError("Guess.take() the counter items before judging the guess.")
        return self._read_at

    def check(self) -> None:
        """Raise :class:`RateLimited` when the counts as read leave no room for this guess."""
        read_at = self._read_time()
        over = [counter for counter in self.counters if not counter.fits(read_at)]
        if over:
            raise RateLimited(self.action, max(counter.retry_after(read_at) for counter in over))

    def fail(self) -> None:
        """Count this wrong guess; raise :class:`RateLimited` (counting nothing) when
        concurrent guesses have used the limit up."""
        count_attempt(self.action, self.counters)

    def conditions(self) -> list[dict[str, Any]]:
        """The ``ConditionCheck`` parameters, one per counter, that a right guess's
        transaction must include (:meth:`Counter.under_limit`, as read)."""
        read_at = self._read_time()
        return [counter.under_limit(read_at) for counter in self.counters]

    def refused(self, items: Iterable[Mapping[str, Any]]) -> RateLimited:
        """The :class:`RateLimited` of a right guess whose :meth:`conditions` failed, from
        ``items``, the counter items as the failed checks found them."""
        self.take(items)
        read_at = self._read_time()
        return RateLimited(self.action, max([1, *(counter.retry_after(read_at) for counter in self.counters)]))


def forget_account(account_id: str) -> None:
    """Delete every counter kept in the account's partition (its login failures and its
    browsers'): after a completed password reset, nobody waits. One ``Query`` and, when
    there are any, one ``BatchWriteItem``."""
    items = dynamo.query_partition(account_pk(account_id), COUNTER_PREFIX, attributes=["PK", "SK"])
    if items:
        dynamo.batch_write(deletes=[dynamo.key(raw["PK"]["S"], raw["SK"]["S"]) for raw in items])


class RateLimitMixin(_FormView):
    """For a form view: count the action :attr:`rate_limit_action` in ``form_valid``
    (before the form is saved) and answer a refused attempt with the form again, a
    non-field error saying how long to wait, status 429 and ``Retry-After``.

    Override :meth:`rate_limit_key` for rules per ``key`` (e.g. the email a reset is for).
    A form may also set ``form.rate_limited`` (a :class:`RateLimited`) itself, as
    :class:`accounts.forms.LoginForm` does.
    """

    rate_limit_action: str | None = None

    def rate_limit_key(self, form: BaseForm) -> str | None:
        """The value counted by the rules per ``key``; ``None``: those rules do not apply."""
        return None

    def form_valid(self, form: BaseForm) -> HttpResponse:
        refusal = self.refuse_over_limit(form)
        return refusal if refusal is not None else super().form_valid(form)

    def refuse_over_limit(self, form: BaseForm) -> HttpResponse | None:
        """Count one attempt at :attr:`rate_limit_action`: the 429 answer when it is over a
        limit, else ``None``. A view whose own ``form_valid`` does the work calls it first."""
        if self.rate_limit_action:
            try:
                consume(self.request, self.rate_limit_action, key=self.rate_limit_key(form))
            except RateLimited as error:
                refuse(form, error)
                return self.form_invalid(form)
        return None

    def form_invalid(self, form: BaseForm) -> HttpResponse:
        response = super().form_invalid(form)
        limited = getattr(form, "rate_limited", None)
        if limited is not None:
            response.status_code = 429
            response["Retry-After"] = str(limited.retry_after)
        return response


def refuse(form: BaseForm, error: RateLimited) -> None:
    """Show ``error`` (a :class:`RateLimited`) on ``form`` as a non-field error; its view
    (:class:`RateLimitMixin`) answers 429."""
    form.rate_limited = error  # type: ignore[attr-defined]  # for its view: RateLimitMixin.form_invalid reads it
    form.add_error(None, error.validation_error())
