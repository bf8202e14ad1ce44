"""The second factor as a stage of a login, named by path in the adapter's
``get_login_stages`` (the core imports nothing of :mod:`accounts.mfa`)."""

from __future__ import annotations

from django.http import HttpRequest

from ..internal.flows.login import PendingLogin
from ..models import User
from .flows import login
from .store import authenticator_types

__all__ = ["SecondFactorStage", "authenticator_types"]


class SecondFactorStage:
    """``mfa_authenticate``: an account with an authenticator app or a passkey proves it
    after the password (:mod:`accounts.mfa.flows.login` keeps the staged login)."""

    key = "mfa_authenticate"
    url_name = "accounts:mfa:authenticate"

    def is_needed(self, user: User, request: HttpRequest | None = None) -> bool:
        return login.needs_second_step(user, request)

    def stage(self, request: HttpRequest, user: User, redirect_to: str) -> None:
        login.stage(request, user, redirect_to)

    def pending(self, request: HttpRequest) -> PendingLogin | None:
        staged = login.staged(request)
        if staged is None:
            return None
        return PendingLogin(self.key, staged["id"], staged["expires"], tuple(staged.get("types", ())), self.url_name)

    def abandon(self, request: HttpRequest) -> None:
        request.session.pop(login.STAGE_SESSION_KEY, None)
