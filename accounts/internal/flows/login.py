"""Logging in as a sequence of stages: the password (:func:`authenticate_password`), then
each stage the adapter lists (:meth:`~accounts.adapter.DefaultAccountAdapter.get_login_stages`,
dotted paths, as django-allauth's ``get_login_stages``), then done.

The core never imports a second factor: the second-factor stage is
``accounts.mfa.stages.SecondFactorStage``, named by its path. A stage that the account
needs stages the login (:class:`PendingLogin`, kept in the server-side session) instead of
logging in; no session is logged in before every needed stage is done.

Each step returns a :class:`LoginOutcome` that the front end renders (the login form, the
API): nothing of a login travels in request attributes or context variables.
"""

from __future__ import annotations

import time
from dataclasses import dataclass
from typing import Any, Protocol, cast

from django.contrib.auth import login as django_login
from django.contrib.auth.signals import user_login_failed
from django.http import HttpRequest
from django.utils.http import url_has_allowed_host_and_scheme
from django.utils.module_loading import import_string
from django.views.decorators.debug import sensitive_variables

from ... import devices, ratelimit, sessions, store
from ...adapter import get_adapter
from ...exceptions import InvalidUniqueValue
from ...models import User
from ...pending import pending_account_id

# The backend a login is made with (accounts.backends.AccountBackend, which logs in through
# this module: named, not imported).
BACKEND = "accounts.backends.AccountBackend"
# How the session was authenticated, as django-allauth's headless API reports it
# (``data.methods``): ``[{"method": "password", "at": epoch seconds, ...}, ...]``.
METHODS_SESSION_KEY = "accounts_authentication_methods"

# What a login attempt came to (LoginOutcome.status). Refusals: ``rate_limited`` (over
# ``login_failed``: the password was not checked), ``unverified`` (the right password of an
# account whose address must be verified first), ``wrong_credentials``. ``authenticated``:
# the password is right, the stages come next; ``pending``: a stage waits; ``done``: logged in.
RATE_LIMITED = "rate_limited"
UNVERIFIED = "unverified"
WRONG_CREDENTIALS = "wrong_credentials"
AUTHENTICATED = "authenticated"
PENDING = "pending"
DONE = "done"
REFUSALS = frozenset({RATE_LIMITED, UNVERIFIED, WRONG_CREDENTIALS})


def may_log_in(account: Any) -> bool:
    """Whether the account may log in as far as verification goes: in mode "mandatory" (or
    with ``ACCOUNTS_PREVENT_ENUMERATION``) only once its address is verified."""
    return not store.verification_required() or store.is_verified(account)


@dataclass(frozen=True)
class PendingLogin:
    """A login whose password was right and that waits for its stage ``stage`` (its flow id,
    e.g. ``mfa_authenticate``): for account ``account_id``, until ``expires`` (epoch
    seconds); ``types``: the authenticator types that can answer it; ``url_name``: the page
    of the HTML front end that asks for it."""

    stage: str
    account_id: str
    expires: int
    types: tuple[str, ...] = ()
    url_name: str = ""


class LoginStage(Protocol):
    """A stage of a login after the password (see :func:`stages`). A stage a new account
    passes before its sign-up completes (the phone number's verification) is a
    :class:`SignupStage` too (see :func:`stage_signup`)."""

    key: str
    url_name: str

    def is_needed(self, user: User, request: HttpRequest | None = None) -> bool:
        """Whether the login of ``user`` (from the browser of ``request``) must pass this stage."""

    def stage(self, request: HttpRequest, user: User, redirect_to: str) -> None:
        """Keep the login of ``user`` pending this stage in the session."""

    def pending(self, request: HttpRequest) -> PendingLogin | None:
        """The login this session keeps pending this stage (not expired), or ``None``."""

    def abandon(self, request: HttpRequest) -> None:
        """Forget the login this session keeps pending this stage."""


class SignupStage(LoginStage, Protocol):
    """A stage a new account passes before its sign-up completes (``at_signup``)."""

    at_signup: bool

    def stage_signup(self, request: HttpRequest, user: User, method: dict[str, Any]) -> None:
        """Keep the sign-up of ``user`` (proved by ``method``) pending this stage in the session."""


@dataclass(frozen=True)
class LoginOutcome:
    """What a step of a login came to (``status``, one of the constants above), with what
    its front end needs to render it: ``user`` (``authenticated``, ``pending``, ``done``),
    ``account`` (``unverified``: whose address to verify), ``refusal`` (``rate_limited``:
    the :class:`~accounts.ratelimit.RateLimited`, whose ``retry_after`` the answer says),
    ``pending`` (``pending``: the stage that waits)."""

    status: str
    user: User | None = None
    account: Any = None
    refusal: ratelimit.RateLimited | None = None
    pending: PendingLogin | None = None

    @property
    def refused(self) -> bool:
        """Whether the login was refused (rate limited, unverified, wrong credentials)."""
        return self.status in REFUSALS

    @property
    def retry_after(self) -> int | None:
        """Seconds to wait before another attempt (``rate_limited``), else ``None``."""
        return self.refusal.retry_after if self.refusal is not None else None


@sensitive_variables("password")
def check_password(request: HttpRequest | None, *, login: str, password: str) -> LoginOutcome:
    """The password stage: is ``password`` right for the account ``login`` (a username or
    an email address, in any case or width) names? Returns ``authenticated`` (with the
    user), ``rate_limited``, ``unverified`` or ``wrong_credentials``.

    With a request, the ``login_failed`` limit applies (:func:`accounts.devices.login_attempt`):
    the attempt is counted before the password is checked, and one over the limit is
    refused without hashing anything; an attempt that does not fail is taken back. With
    server-side sessions and ``ACCOUNTS_MAX_SESSIONS``, the account is read with its
    partition (one ``Query`` instead of one ``GetItem``) and its sessions go to the
    session store, so the new session ends the oldest beyond the limit in its own write.
    From a browser that logged in to the account before, the lock and the account are read
    in one ``BatchGetItem``.
    """
    account = _find(request, login)
    attempt = devices.login_attempt(request, login, account) if request is not None else None
    if attempt is not None:
        try:
            attempt.check()
        except ratelimit.RateLimited as error:
            return LoginOutcome(RATE_LIMITED, refusal=error)
    if account is None:
        # Run the default password hasher once to reduce the timing difference between
        # an existing and a nonexistent account (Django ticket #20760).
        User().set_password(password)
        return LoginOutcome(WRONG_CREDENTIALS)
    user = User.from_account(account)
    if not (user.check_password(password) and user.is_active):
        return LoginOutcome(WRONG_CREDENTIALS)
    if attempt is not None:
        attempt.succeed()
    if not may_log_in(account):
        return LoginOutcome(UNVERIFIED, account=account)
    return LoginOutcome(AUTHENTICATED, user=user)


@sensitive_variables("password")
def authenticate_password(request: HttpRequest | None, *, login: str, password: str) -> LoginOutcome:
    """:func:`check_password`, and a refusal sends Django's ``user_login_failed`` (as
    ``django.contrib.auth.authenticate`` does), for the host's listeners."""
    outcome = check_password(request, login=login, password=password)
    if outcome.refused:
        user_login_failed.send(sender=__name__, credentials={"username": login}, request=request)
    return outcome


def _find(request: HttpRequest | None, login: str) -> Any:
    """The account ``login`` names, or the unverified sign-up this browser made with it."""
    counting = request.session if request is not None and sessions.counts_at_login(request) else None
    try:
        if isinstance(counting, sessions.SessionStore):
            account, others = store.get_by_login_with_partition(login)
            counting.note_account_items(others)
        else:
            likely = devices.trusted_accounts(request) if request is not None else ()
            account = store.get_by_login(login, likely=likely)
    except InvalidUniqueValue:
        # Empty, or longer than any lock key can be: nobody holds it.
        return None
    if account is None and request is not None:
        account = _pending_sign_up(request, login)
    return account


def _pending_sign_up(request: HttpRequest, email: str) -> Any:
    """The unverified account this browser signed up with ``email`` (it holds no email
    lock until verified), so that logging in by email right after the sign-up says
    "confirm your address". Only this browser's session knows it: to anyone else, an
    unverified sign-up looks like no account at all."""
    account_id = pending_account_id(request)
    if account_id is None or store.login_field(email) != "email":
        return None
    account = store.get_account(account_id)
    if account is None or store.is_verified(account) or not store.is_same_address(account, email):
        return None
    return account


@sensitive_variables("password")
def log_in_with_password(
    request: HttpRequest, *, login: str, password: str, redirect_to: str, method: dict[str, Any] | None = None
) -> LoginOutcome:
    """A whole login by password: :func:`authenticate_password`, then, when the password is
    right, :func:`continue_login` (``pending`` or ``done``); a login this session kept
    pending before is forgotten."""
    outcome = authenticate_password(request, login=login, password=password)
    if outcome.status != AUTHENTICATED or outcome.user is None:
        return outcome
    abandon(request)
    return continue_login(request, outcome.user, redirect_to=redirect_to, method=method)


def stages(request: HttpRequest | None = None) -> list[LoginStage]:
    """The stages after the password, in order, as the adapter names them."""
    return [import_string(path)() for path in get_adapter(request).get_login_stages()]


def continue_login(
    request: HttpRequest, user: User, *, redirect_to: str, method: dict[str, Any] | None = None
) -> LoginOutcome:
    """The password of ``user`` was right (``method``: how, for :func:`methods`): stage the
    login for the first stage it needs (``pending``), or log the session in (``done``)."""
    record_method(request, method or {"method": "password"})
    return next_stage(request, user, redirect_to=redirect_to)


def next_stage(request: HttpRequest, user: User, *, redirect_to: str) -> LoginOutcome:
    """Stage the login of ``user`` for the first stage it still needs (``pending``), or log
    the session in (``done``): after the password, or once a stage passed (the stage that
    passed is needed no more)."""
    for login_stage in stages(request):
        if login_stage.is_needed(user, request):
            login_stage.stage(request, user, redirect_to)
            # A stage that lasts no time at all is pending and expired already (its page says so).
            pending = login_stage.pending(request) or PendingLogin(
                login_stage.key, user.pk, 0, (), login_stage.url_name
            )
            return LoginOutcome(PENDING, user=user, pending=pending)
    django_login(request, user, backend=BACKEND)
    return LoginOutcome(DONE, user=user)


def stage_signup(request: HttpRequest, user: User, *, method: dict[str, Any]) -> PendingLogin | None:
    """Stage the sign-up of ``user`` for the first stage a new account passes before its
    sign-up completes (a stage with ``at_signup``, the phone number's verification), and
    return it pending; ``None`` when it needs none. ``method``: how the person proved who they
    are, for the sign-up's completion once the stage passed."""
    for login_stage in stages(request):
        if getattr(login_stage, "at_signup", False) and login_stage.is_needed(user, request):
            cast(SignupStage, login_stage).stage_signup(request, user, method)
            return login_stage.pending(request) or PendingLogin(login_stage.key, user.pk, 0, (), login_stage.url_name)
    return None


def redirect_url(request: HttpRequest, next_url: str | None) -> str:
    """Where a finished login lands, whichever stage finished it (the password, a second
    factor, a passkey): ``next_url`` when it stays on this site, else the adapter's
    :meth:`~accounts.adapter.DefaultAccountAdapter.get_login_redirect_url`."""
    if next_url and url_has_allowed_host_and_scheme(next_url, {request.get_host()}, require_https=request.is_secure()):
        return next_url
    return str(get_adapter(request).get_login_redirect_url(request))


def log_in(request: HttpRequest, user: User, *, method: dict[str, Any]) -> None:
    """Log the session in as ``user`` (Django's ``login``: a new session key), noting how."""
    django_login(request, user, backend=BACKEND)
    record_method(request, method)


def record_method(request: HttpRequest, method: dict[str, Any]) -> None:
    """Note in the session that its person just proved who they are by ``method``."""
    request.session[METHODS_SESSION_KEY] = [
        *request.session.get(METHODS_SESSION_KEY, []),
        {**method, "at": int(time.time())},
    ]


def methods(request: HttpRequest) -> list[dict[str, Any]]:
    """How this session was authenticated, oldest first (see :data:`METHODS_SESSION_KEY`)."""
    return list(request.session.get(METHODS_SESSION_KEY, []))


def pending_login(request: HttpRequest) -> PendingLogin | None:
    """The login this session keeps pending a stage, or ``None``."""
    for login_stage in stages(request):
        found = login_stage.pending(request)
        if found is not None:
            return found
    return None


def abandon(request: HttpRequest) -> None:
    """Forget every login this session keeps pending (a logout, a new login)."""
    for login_stage in stages(request):
        login_stage.abandon(request)
