"""Listing and ending the sessions of the signed-in account: the profile page, its "log out
everywhere else" button and the API's ``auth/sessions`` call these, over the session store
(:mod:`accounts.sessions`; ending them: :mod:`accounts.logouts`). Without server-side
sessions there is nothing to list or end."""

from __future__ import annotations

from collections.abc import Collection
from dataclasses import dataclass
from typing import Any

from django.contrib.auth import logout
from django.http import HttpRequest

from ... import logouts, sessions
from ...sessions import SessionInfo


@dataclass(frozen=True)
class EndedSessions:
    """What :func:`end_sessions` did: ``ended``, how many sessions; ``logged_out``, whether
    the current one was among them (this request is logged out then); ``remaining``, the
    account's sessions left, as :func:`list_sessions` lists them (empty once logged out)."""

    ended: int
    logged_out: bool
    remaining: list[SessionInfo]


def read_with_session(request: HttpRequest, *, events: int = 0) -> None:
    """Have the session's load read the account's sessions with it (one ``Query`` instead
    of one ``BatchGetItem``, see :meth:`accounts.sessions.SessionStore.want_all_sessions`),
    and its ``events`` newest security events in the same ``Query``. Call it before
    anything touches the session or ``request.user``."""
    if sessions.in_use() and isinstance(request.session, sessions.SessionStore):
        request.session.want_all_sessions(events=events)


def security_events(request: HttpRequest) -> list[dict[str, Any]] | None:
    """Raw items of the newest security events of the signed-in account, newest first, as
    the session's load read them (:func:`read_with_session`), or ``None`` when it did not."""
    if not isinstance(request.session, sessions.SessionStore):
        return None
    return request.session.account_events()


def _items(request: HttpRequest) -> list[dict[str, Any]] | None:
    """The raw items of the signed-in account's live sessions, or ``None`` without
    server-side sessions."""
    if not isinstance(request.session, sessions.SessionStore):
        return None
    return request.session.account_sessions()


def _account_id(request: HttpRequest) -> str:
    return str(request.user.pk)


def _infos(request: HttpRequest, items: list[dict[str, Any]]) -> list[SessionInfo]:
    return sessions.list_sessions(_account_id(request), request.session.session_key, sessions=items)


def list_sessions(request: HttpRequest) -> list[SessionInfo] | None:
    """The live sessions of the signed-in account, most recently seen first, the current
    one marked; ``None`` without server-side sessions."""
    items = _items(request)
    return None if items is None else _infos(request, items)


def _current_id(infos: list[SessionInfo]) -> str | None:
    return next((info.id for info in infos if info.current), None)


def end_other_sessions(request: HttpRequest) -> int:
    """Log out every other session of the signed-in account, and any of them a
    reauthentication renews meanwhile (:func:`accounts.logouts.log_out_sessions`); returns
    how many ended. Costs one ``TransactWriteItems`` (per 99 sessions) after the read of the
    sessions."""
    items = _items(request)
    if items is None:
        return 0
    keep = _current_id(_infos(request, items))
    return logouts.log_out_sessions(_account_id(request), keep=keep, sessions=items)


def end_sessions(request: HttpRequest, ids: Collection[str]) -> EndedSessions:
    """End the sessions of the signed-in account whose :attr:`SessionInfo.id` is in ``ids``
    (ids of no session of the account are ignored), under the key they have when they end
    (:func:`accounts.logouts.log_out_sessions`). The current one among them logs this
    request out, after the others are ended."""
    items = _items(request)
    if items is None:
        return EndedSessions(0, False, [])
    infos = _infos(request, items)
    ending = [info for info in infos if info.id in ids]
    others = {info.id for info in ending if not info.current}
    if others:
        logouts.log_out_sessions(_account_id(request), ids=others, keep=_current_id(infos), sessions=items)
    if len(others) < len(ending):
        logout(request)
        return EndedSessions(len(ending), True, [])
    return EndedSessions(len(ending), False, [info for info in infos if info.id not in others])
