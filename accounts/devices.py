"""Device cookies: the owner's browser is counted apart from everyone else's (OWASP's
"Slow Down Online Guessing Attacks with Device Cookies").

A login gives the browser the signed cookie ``accounts_device``, naming the accounts
logged in from it (at most :data:`MAX_ACCOUNTS`, most recent first), each with a random
nonce of that browser's own. A login attempt, counted before its password is checked
(:class:`accounts.ratelimit.Attempt`), then counts on:

- from a browser whose cookie names the account the login resolves to: that browser's
  own counter for the account (the ``key`` rules of ``login_failed``); the ``ip`` rules do
  not apply, so failures of others behind the same address (an office's NAT) do not hold
  it back;
- from any other browser: the account's counter (the ``key`` rules, keyed by the account's
  id; for a name nobody holds, by its lock key) and the client address (the ``ip`` rules).

So guesses from elsewhere lock out only the browsers without the cookie: the owner's usual
browser logs in at once, and its own wrong passwords lock only itself. The second step of
a login counts its codes (``mfa_attempt``, :func:`second_step_guess`) the same way: someone
who knows the password cannot lock the owner's browser out of its code or a recovery code. The account's
counters live in its partition; a completed password reset deletes them
(:func:`accounts.ratelimit.forget_account`).
"""

import secrets
from datetime import timedelta

from django.conf import settings
from django.core import signing
from django.http import HttpRequest, HttpResponse

from . import ratelimit, store
from .app_settings import app_settings
from .tables import Account

COOKIE_NAME = "accounts_device"
SALT = "accounts.devices"
# A shared computer: the most recent accounts logged in from it stay trusted.
MAX_ACCOUNTS = 10
ACTION = "login_failed"
SECOND_STEP_ACTION = "mfa_attempt"


def trusted_accounts(request: HttpRequest) -> dict[str, str]:
    """``{account id: nonce}`` of the accounts this browser logged in to, from its device
    cookie when the signature holds and the cookie is younger than ``ACCOUNTS_DEVICE_COOKIE_AGE``."""
    value = request.COOKIES.get(COOKIE_NAME)
    if not value:
        return {}
    try:
        entries = signing.loads(value, salt=SALT, max_age=app_settings.DEVICE_COOKIE_AGE)
        return {str(account_id): str(nonce) for account_id, nonce in entries}
    except (signing.BadSignature, TypeError, ValueError):
        return {}


def remember(request: HttpRequest, response: HttpResponse, account_id: str) -> None:
    """Trust this browser for ``account_id``: set its device cookie on ``response`` (after a
    login), keeping the nonce it had for that account. HttpOnly, SameSite=Lax, Secure on an
    HTTPS site, for ``ACCOUNTS_DEVICE_COOKIE_AGE`` after each login."""
    known = trusted_accounts(request)
    nonce = known.pop(account_id, None) or secrets.token_urlsafe(12)
    entries = [[account_id, nonce], *([other, other_nonce] for other, other_nonce in known.items())]
    value = signing.dumps(entries[:MAX_ACCOUNTS], salt=SALT, compress=True)
    set_browser_cookie(request, response, COOKIE_NAME, value, app_settings.DEVICE_COOKIE_AGE)


def set_browser_cookie(request: HttpRequest, response: HttpResponse, name: str, value: str, age: timedelta) -> None:
    """Set cookie ``name`` of a browser's standing with the site (its device cookie, the trust
    of its second step) on ``response``: HttpOnly, SameSite=Lax, Secure on an HTTPS site, on
    the session cookie's path and domain, for ``age``."""
    response.set_cookie(
        name,
        value,
        max_age=int(age.total_seconds()),
        path=settings.SESSION_COOKIE_PATH,
        domain=settings.SESSION_COOKIE_DOMAIN,
        secure=settings.SESSION_COOKIE_SECURE or request.is_secure(),
        httponly=True,
        samesite="Lax",
    )


def own_budget(request: HttpRequest, action: str, account_id: str | None) -> tuple[str, list[ratelimit.Counter]] | None:
    """``(budget key, counters)`` of this browser's own budget for ``action`` about account
    ``account_id`` (the ``key`` rules, counted in the account's partition), when its device
    cookie names that account; ``None`` otherwise. What others send about the account (reset
    requests for its address, say) then never uses up what its owner's browser may ask."""
    nonce = trusted_accounts(request).get(account_id) if account_id else None
    if nonce is None:
        return None
    budget = f"device#{nonce}"
    rules = [rule for rule in ratelimit.limits().get(action, ()) if rule.per == "key"]
    return budget, [ratelimit.Counter(action, rule, budget, account_id=account_id) for rule in rules]


def login_attempt(request: HttpRequest, login: str, account: Account | None) -> ratelimit.Attempt:
    """The :class:`~accounts.ratelimit.Attempt` of logging in as ``login``, which resolved to
    ``account`` (``None``: nobody), with the counters this browser's attempt counts on."""
    rules = ratelimit.limits().get(ACTION, ())
    key_rules = [rule for rule in rules if rule.per == "key"]
    own = own_budget(request, ACTION, account.id) if account is not None else None
    if own is not None:
        return ratelimit.Attempt(request, ACTION, counters=own[1])
    if account is not None:
        counters = [ratelimit.Counter(ACTION, rule, account.id, account_id=account.id) for rule in key_rules]
    else:
        # Nobody holds it: counted by what every spelling of it shares (None: unusable as a key).
        lock_key = store.login_lock_key(login)
        counters = [ratelimit.Counter(ACTION, rule, lock_key) for rule in key_rules if lock_key]
    address = ratelimit.client_ip(request)
    counters += [ratelimit.Counter(ACTION, rule, address) for rule in rules if rule.per == "ip" and address]
    return ratelimit.Attempt(request, ACTION, counters=counters)


def second_step_guess(request: HttpRequest, account_id: str) -> ratelimit.Guess:
    """The :class:`~accounts.ratelimit.Guess` of a code at the second step of a login of
    ``account_id``: from a browser whose cookie names the account, on that browser's own
    counters (the ``key`` rules of ``mfa_attempt``; the ``ip`` rules do not apply), else on
    the account's and the address's, as for a password (:func:`login_attempt`).

    Unlike the password's, a browser's counters live outside the account's partition, with
    the account's: a password reset, which whoever holds the mailbox can complete, does not
    clear them (each reset would buy more guesses at the code)."""
    nonce = trusted_accounts(request).get(account_id)
    if nonce is None:
        return ratelimit.Guess(request, SECOND_STEP_ACTION, key=account_id)
    rules = ratelimit.limits().get(SECOND_STEP_ACTION, ())
    value = f"{account_id}#device#{nonce}"
    counters = [ratelimit.Counter(SECOND_STEP_ACTION, rule, value) for rule in rules if rule.per == "key"]
    return ratelimit.Guess(request, SECOND_STEP_ACTION, counters=counters)
