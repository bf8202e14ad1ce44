"""Logging in as a sequence of stages: the password (the login form), then each stage the
adapter lists (:meth:`~accounts.adapter.DefaultAccountAdapter.get_login_stages`, dotted
paths, as django-allauth's ``get_login_stages``), then done.

The core never imports a second factor: the second-factor stage is
``accounts.mfa.stages.SecondFactorStage``, named by its path. A stage that the account
needs stages the login (:class:`PendingLogin`, kept in the server-side session) instead of
logging in; no session is logged in before every needed stage is done.
"""

from __future__ import annotations

import time
from dataclasses import dataclass
from typing import Protocol

from django.contrib.auth import login as django_login
from django.http import HttpRequest
from django.utils.http import url_has_allowed_host_and_scheme
from django.utils.module_loading import import_string

from ...adapter import get_adapter
from ...backends import AccountBackend
from ...models import User

BACKEND = f"{AccountBackend.__module__}.{AccountBackend.__qualname__}"
# How the session was authenticated, as django-allauth's headless API reports it
# (``data.methods``): ``[{"method": "password", "at": epoch seconds, ...}, ...]``.
METHODS_SESSION_KEY = "accounts_authentication_methods"


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
    """A stage of a login after the password (see :func:`stages`)."""

    key: str
    url_name: str

    def is_needed(self, user: User) -> bool:
        """Whether the login of ``user`` must pass this stage."""

    def stage(self, request: HttpRequest, user: User, redirect_to: str) -> None:
        """Keep the login of ``user`` pending this stage in the session."""

    def pending(self, request: HttpRequest) -> PendingLogin | None:
        """The login this session keeps pending this stage (not expired), or ``None``."""

    def abandon(self, request: HttpRequest) -> None:
        """Forget the login this session keeps pending this stage."""


def stages(request: HttpRequest | None = None) -> list[LoginStage]:
    """The stages after the password, in order, as the adapter names them."""
    return [import_string(path)() for path in get_adapter(request).get_login_stages()]


def continue_login(
    request: HttpRequest, user: User, *, redirect_to: str, method: dict | None = None
) -> PendingLogin | None:
    """The password of ``user`` was right (``method``: how, for :func:`methods`): stage the
    login for the first stage it needs and return it pending, or log the session in and
    return ``None``."""
    record_method(request, method or {"method": "password"})
    for login_stage in stages(request):
        if login_stage.is_needed(user):
            login_stage.stage(request, user, redirect_to)
            return login_stage.pending(request)
    django_login(request, user, backend=BACKEND)
    return None


def redirect_url(request: HttpRequest, next_url: str | None) -> str:
    """Where a finished login lands, whichever stage finished it (the password, a second
    factor, a passkey): ``next_url`` when it stays on this site, else the adapter's
    :meth:`~accounts.adapter.DefaultAccountAdapter.get_login_redirect_url`."""
    if next_url and url_has_allowed_host_and_scheme(next_url, {request.get_host()}, require_https=request.is_secure()):
        return next_url
    return str(get_adapter(request).get_login_redirect_url(request))


def log_in(request: HttpRequest, user: User, *, method: dict) -> None:
    """Log the session in as ``user`` (Django's ``login``: a new session key), noting how."""
    django_login(request, user, backend=BACKEND)
    record_method(request, method)


def record_method(request: HttpRequest, method: dict) -> None:
    """Note in the session that its person just proved who they are by ``method``."""
    request.session[METHODS_SESSION_KEY] = [
        *request.session.get(METHODS_SESSION_KEY, []),
        {**method, "at": int(time.time())},
    ]


def methods(request: HttpRequest) -> list[dict]:
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
