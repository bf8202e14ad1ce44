"""The verification of a phone number as a stage of a login and of a sign-up, named by path
in the adapter's ``get_login_stages`` (django-allauth's ``PhoneVerificationStage``)."""

from __future__ import annotations

from typing import Any

from django.http import HttpRequest

from ..internal.flows.login import PendingLogin
from ..models import User
from . import flows


class PhoneVerificationStage:
    """``verify_phone``: an account whose number was never verified types the code texted to
    it before its login (or its sign-up) goes on (:mod:`accounts.phones.flows`)."""

    key = flows.STAGE_KEY
    url_name = "accounts:phones:verify"
    # A new account with a number passes it before its sign-up completes.
    at_signup = True

    def is_needed(self, user: User, request: HttpRequest | None = None) -> bool:
        return flows.needs_verification(user.account)

    def stage(self, request: HttpRequest, user: User, redirect_to: str) -> None:
        flows.stage(request, user, redirect_to)

    def stage_signup(self, request: HttpRequest, user: User, method: dict[str, Any]) -> None:
        flows.stage(request, user, "", signup=True, method=method)

    def pending(self, request: HttpRequest) -> PendingLogin | None:
        found = flows.staged(request)
        if found is None:
            return None
        return PendingLogin(self.key, found["id"], found["expires"], (), self.url_name)

    def abandon(self, request: HttpRequest) -> None:
        flows.abandon(request)
