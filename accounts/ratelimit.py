"""Rate limits that hold across processes: counters in the accounts table.

Limits are written in django-allauth's notation, ``ACCOUNTS_RATE_LIMITS``:
``{"login_failed": "10/m/ip,5/5m/key", ...}``: each rule is ``<amount>/<period>/<per>``,
the period ``s``, ``m``, ``h`` or ``d`` with an optional multiplier (``5m``), ``per`` one
of ``ip`` (the client address, :func:`client_ip`), ``key`` (what the action is about,
e.g. the normalized login name) or ``user`` (the signed-in account).

Each rule counts in DynamoDB, one item per rule and value: ``PK=RATE#<action>#<per>#
<period>#<digest of the value>``, ``SK=RATE``, holding the count of the current and the
previous window (attributes ``w<window number>``) and ``expires`` (the table's TTL
attribute). Counts only ever change by an atomic ``UpdateItem ADD`` (never read, add one,
write back), and no count lives in a process: N workers allow what one allows. The limit
is a sliding window, estimated as Cloudflare does: the previous window's count, weighted
by how much of it still overlaps the last period, plus the current window's.

Two ways to use it:

- :func:`consume` counts one attempt and raises :class:`RateLimited` when the attempt is
  over a limit (the refused attempt is taken back): signup, password reset, email change,
  resend verification. :class:`RateLimitMixin` does that in a form view's ``form_valid``
  and answers 429 with ``Retry-After``.
- :class:`Attempt` reads first and counts only failures (``login_failed``): see
  :class:`accounts.forms.LoginForm`.
"""

import hashlib
import math
import re
import time
from dataclasses import dataclass
from datetime import timedelta

from django.core.exceptions import ImproperlyConfigured, ValidationError
from django.utils import timezone
from django.utils.timesince import timeuntil
from django.utils.translation import gettext_lazy as _

from . import dynamo, transactions
from .app_settings import DEFAULT_RATE_LIMITS, app_settings

ACTIONS = tuple(DEFAULT_RATE_LIMITS)
SCOPES = ("ip", "key", "user")
PERIOD_UNITS = {"s": 1, "m": 60, "h": 3600, "d": 86400}
RULE = re.compile(r"^\s*(?P<amount>\d+)\s*/\s*(?P<count>\d*)(?P<unit>[smhd])\s*/\s*(?P<per>ip|key|user)\s*$")
COUNTER_PREFIX = "RATE#"
COUNTER_SORT_KEY = "RATE"
RATE_LIMITED_MESSAGE = _("Too many attempts. Please wait %(wait)s before trying again.")


class RateLimited(Exception):
    """An attempt over a limit; ``retry_after`` is whole seconds until one is allowed."""

    def __init__(self, action, retry_after):
        self.action = action
        self.retry_after = retry_after
        super().__init__(f"Rate limit of {action!r} exceeded; retry after {retry_after} s.")

    def validation_error(self):
        """The non-field form error to show: how long to wait, in words."""
        wait = timeuntil(timezone.now() + timedelta(seconds=self.retry_after + 1))
        return ValidationError(RATE_LIMITED_MESSAGE, code="rate_limited", params={"wait": wait})


@dataclass(frozen=True)
class Rule:
    """``amount`` attempts per ``period`` seconds, counted ``per`` ip, key or user."""

    amount: int
    period: int
    per: str


def parse_rules(text):
    """The :class:`Rule` objects of ``"10/m/ip,5/5m/key"``; raises ``ImproperlyConfigured``."""
    rules = []
    for part in filter(str.strip, (text or "").split(",")):
        match = RULE.match(part)
        if match is None:
            raise ImproperlyConfigured(f"Bad rate limit {part!r}: expected e.g. '10/m/ip' or '5/5m/key'.")
        period = int(match["count"] or 1) * PERIOD_UNITS[match["unit"]]
        rules.append(Rule(int(match["amount"]), period, match["per"]))
    return rules


def limits():
    """``{action: [Rule, ...]}`` from ``ACCOUNTS_RATE_LIMITS``: the defaults, each replaced
    by the setting's own value for that action (a false value turns that action off);
    ``False`` or ``{}`` turns every limit off."""
    setting = app_settings.RATE_LIMITS
    if not setting:
        return {}
    merged = {**DEFAULT_RATE_LIMITS, **setting}
    return {action: parse_rules(text) for action, text in merged.items() if text}


def client_ip(request):
    """The client's address: ``REMOTE_ADDR``, or with ``ACCOUNTS_TRUSTED_PROXY_COUNT`` = n
    proxies in front, the n-th address of ``X-Forwarded-For`` from the right (the one the
    outermost trusted proxy saw; what the client wrote further left is not trusted)."""
    trusted = app_settings.TRUSTED_PROXY_COUNT
    if trusted:
        forwarded = [part.strip() for part in request.META.get("HTTP_X_FORWARDED_FOR", "").split(",") if part.strip()]
        if len(forwarded) >= trusted:
            return forwarded[-trusted]
    return request.META.get("REMOTE_ADDR", "")


def _window(period, now):
    return int(now // period)


class Counter:
    """The count of one rule for one value (an address, a key, a user)."""

    def __init__(self, action, rule, value):
        self.action = action
        self.rule = rule
        digest = hashlib.sha256(str(value).encode()).hexdigest()[:32]
        self.key = dynamo.key(f"{COUNTER_PREFIX}{action}#{rule.per}#{rule.period}#{digest}", COUNTER_SORT_KEY)
        self.current = self.previous = 0

    def take(self, raw, now):
        """Record the counts of the item as read (``None``: no item, nothing counted)."""
        window = _window(self.rule.period, now)
        live = raw is not None and int(raw.get("expires", {}).get("N", 0)) > now
        self.current = int(raw[f"w{window}"]["N"]) if live and f"w{window}" in raw else 0
        self.previous = int(raw[f"w{window - 1}"]["N"]) if live and f"w{window - 1}" in raw else 0

    @property
    def counted(self):
        """Whether any attempt is counted (an item worth deleting)."""
        return bool(self.current or self.previous)

    def estimate(self, now):
        """Attempts in the last period: the current window's, plus the previous window's
        weighted by the part of it still inside the period."""
        elapsed = (now % self.rule.period) / self.rule.period
        return self.previous * (1 - elapsed) + self.current

    def retry_after(self, now):
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
            seconds = period - into_window + period * (1 - (limit - 1) / self.current)
        return max(1, math.ceil(seconds))

    def update(self, amount, now):
        """The UpdateItem parameters adding ``amount`` to the current window."""
        window = _window(self.rule.period, now)
        return {
            "TableName": dynamo.table_name(),
            "Key": self.key,
            "UpdateExpression": "ADD #current :amount SET expires = :expires REMOVE #stale",
            "ExpressionAttributeNames": {"#current": f"w{window}", "#stale": f"w{window - 2}"},
            "ExpressionAttributeValues": {
                ":amount": {"N": str(amount)},
                # Once the next window ends, this one no longer counts at all.
                ":expires": {"N": str((window + 2) * self.rule.period)},
            },
        }


def _values(request, key, user):
    if user is None and getattr(request, "user", None) is not None and request.user.is_authenticated:
        user = request.user
    return {"ip": client_ip(request), "key": key, "user": getattr(user, "pk", user)}


def counters(request, action, *, key=None, user=None):
    """The :class:`Counter` of each rule of ``action`` that applies (a rule per ``key``
    applies only when a key is given; per ``user``, only for a signed-in or given user)."""
    rules = limits().get(action, ())
    values = _values(request, key, user) if rules else {}
    return [Counter(action, rule, values[rule.per]) for rule in rules if values[rule.per] not in (None, "")]


def consume(request, action, *, key=None, user=None):
    """Count one attempt at ``action``; raise :class:`RateLimited` if it is over a limit.

    ``key`` is what the action is about (e.g. the normalized email of a password reset),
    ``user`` the account concerned (default: the signed-in user). Costs one ``UpdateItem``
    per rule that applies; a refused attempt is taken back (one more per rule), so it
    does not lengthen the wait.
    """
    counted = []
    now = time.time()
    refused = []
    for counter in counters(request, action, key=key, user=user):
        answer = dynamo.call("update_item", **counter.update(1, now), ReturnValues="ALL_NEW")
        counted.append(counter)
        counter.take(answer.get("Attributes"), now)
        # The estimate includes this attempt: over the limit when above it.
        if counter.estimate(now) > counter.rule.amount:
            counter.current -= 1
            refused.append(counter)
    if refused:
        for counter in counted:
            dynamo.call("update_item", **counter.update(-1, now))
        raise RateLimited(action, max(counter.retry_after(now) for counter in refused))


class Attempt:
    """An attempt whose failures alone count (``login_failed``): read the counters, check,
    and count only a failure.

    ``keys`` are read along with the login lookup (:func:`accounts.lookups.read_along`),
    so the check costs no request of its own; a failure is one write for all its counters.
    """

    def __init__(self, request, action, *, key=None, user=None):
        self.request = request
        self.action = action
        self.counters = counters(request, action, key=key, user=user)
        self._now = None

    @property
    def keys(self):
        """The raw keys of the counter items, to read."""
        return [counter.key for counter in self.counters]

    def take(self, items):
        """Record the counter items as read (raw items; the missing ones count nothing)."""
        self._now = time.time()
        by_pk = {raw["PK"]["S"]: raw for raw in items}
        for counter in self.counters:
            counter.take(by_pk.get(counter.key["PK"]["S"]), self._now)

    def check(self):
        """Raise :class:`RateLimited` when one more attempt is over a limit (read the
        counters first if the lookup did not)."""
        if not self.counters:
            return
        if self._now is None:
            self.take(dynamo.batch_get(self.keys))
        waits = [counter.retry_after(self._now) for counter in self.counters]
        if max(waits) > 0:
            raise RateLimited(self.action, max(waits))

    def fail(self):
        """Count one failure on every counter, in one request."""
        now = time.time()
        updates = [counter.update(1, now) for counter in self.counters]
        if len(updates) == 1:
            dynamo.call("update_item", **updates[0])
        elif updates:
            transactions.run(transactions.plan_updates(updates))

    def succeed(self):
        """Forget the failures counted per ``key`` (a successful login). The counter items
        are deleted in the request that saves the new session when sessions are in the
        table (:mod:`accounts.sessions`), else with one request now."""
        stale = [counter.key for counter in self.counters if counter.rule.per == "key" and counter.counted]
        if not stale:
            return
        session = getattr(self.request, "session", None)
        if hasattr(session, "delete_with_next_save"):
            for counter_key in stale:
                session.delete_with_next_save(counter_key)
        else:
            dynamo.batch_write(deletes=stale)


class RateLimitMixin:
    """For a form view: count the action :attr:`rate_limit_action` in ``form_valid``
    (before the form is saved) and answer a refused attempt with the form again, a
    non-field error saying how long to wait, status 429 and ``Retry-After``.

    Override :meth:`rate_limit_key` for rules per ``key`` (e.g. the email a reset is for).
    A form may also set ``form.rate_limited`` (a :class:`RateLimited`) itself, as
    :class:`accounts.forms.LoginForm` does.
    """

    rate_limit_action = None

    def rate_limit_key(self, form):
        """The value counted by the rules per ``key``; ``None``: those rules do not apply."""
        return None

    def form_valid(self, form):
        if self.rate_limit_action:
            try:
                consume(self.request, self.rate_limit_action, key=self.rate_limit_key(form))
            except RateLimited as error:
                refuse(form, error)
                return self.form_invalid(form)
        return super().form_valid(form)

    def form_invalid(self, form):
        response = super().form_invalid(form)
        limited = getattr(form, "rate_limited", None)
        if limited is not None:
            response.status_code = 429
            response["Retry-After"] = str(limited.retry_after)
        return response


def refuse(form, error):
    """Show ``error`` (a :class:`RateLimited`) on ``form`` as a non-field error; its view
    (:class:`RateLimitMixin`) answers 429."""
    form.rate_limited = error
    form.add_error(None, error.validation_error())
