"""The two clients of the API: ``browser`` (Django's session cookie, CSRF with
``X-CSRFToken``) and ``app`` (the ``X-Session-Token`` header, or under the JWT token strategy
an access token as ``Authorization: Bearer``, see :mod:`.tokens`: no cookie, no CSRF).

An app's session is a session of the project's ``SESSION_ENGINE`` like a browser's; its
key is the session token. The token is read before the view runs and the session saved
after it, so the answer carries the new token (``meta.session_token``) when a login or a
logout gave the session a new key, as django-allauth's app client expects.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from importlib import import_module

from django.conf import settings
from django.contrib import auth
from django.contrib.sessions.backends.base import SessionBase
from django.http import HttpRequest
from django.utils.functional import SimpleLazyObject

from .. import sessions
from . import tokens

BROWSER, APP = "browser", "app"
SESSION_TOKEN_HEADER = "X-Session-Token"


class SessionGone(Exception):
    """The app sent a session token whose session has ended or expired (410)."""


def session_token(request: HttpRequest) -> str | None:
    """The session token the app sent (``X-Session-Token``), else the session its access
    token speaks for (JWT strategy, ``Authorization: Bearer``), or ``None``. A token longer
    than any session key (:data:`accounts.sessions.MAX_KEY_LENGTH`) names no session: such a
    request is anonymous, as without a token, never a 500."""
    token = request.headers.get(SESSION_TOKEN_HEADER) or tokens.session_key_of_request(request)
    return token if token is not None and len(token) <= sessions.MAX_KEY_LENGTH else None


def _session_store(session_key: str | None) -> SessionBase:
    return import_module(settings.SESSION_ENGINE).SessionStore(session_key)


@contextmanager
def app_session(request: HttpRequest) -> Iterator[None]:
    """Within the block, ``request.session`` and ``request.user`` are those of the app's
    session token (a new, empty session without one); the browser's cookie session, if any,
    is untouched. Raises :class:`SessionGone` for a token whose session is gone. The caller
    saves the session (:func:`save`) before it leaves the block."""
    cookie_session, cookie_user = request.session, getattr(request, "user", None)
    token = session_token(request)
    session = _session_store(token)
    # Reading it loads it: a missing or expired session forgets its key.
    session.get(auth.SESSION_KEY)
    if token and session.session_key is None:
        raise SessionGone(token)
    request.session = session
    request.user = SimpleLazyObject(lambda: auth.get_user(request))
    try:
        yield
    finally:
        request.session, request.user = cookie_session, cookie_user
        # A login rotates the CSRF token, which would set a cookie: an app has none.
        request.META["CSRF_COOKIE_NEEDS_UPDATE"] = False


def save(request: HttpRequest) -> None:
    """Save the request's session now if it changed (a failing write is answered by the
    API, not after the response)."""
    session = request.session
    if isinstance(session, sessions.SessionStore):
        sessions.save_now(request)
    elif session.modified and not session.is_empty():
        session.save()


def new_session_token(request: HttpRequest) -> str | None:
    """The token to hand the app: its session's key when it is not the one it sent (a new
    session, a login), else ``None``. An empty session has no token."""
    key = request.session.session_key
    if key is None or request.session.is_empty():
        return None
    return key if key != session_token(request) else None
