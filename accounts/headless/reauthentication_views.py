"""Reauthentication by a mailed code in the API: ``auth/reauthenticate/code/request``,
``.../confirm`` and ``.../resend``, as django-allauth's, over the flow the reauthentication
page's "Email me a code" calls (:mod:`accounts.mfa.flows.reauthentication`).

As allauth's: 401 with the login flows to a visitor; 403 to a logged-in session while
``ACCOUNTS_REAUTHENTICATION_BY_CODE_ENABLED`` is off; ``request`` answers 200 once the code
is mailed (the session's 401 then lists ``reauthenticate_by_code`` pending); ``confirm``
answers 200 with the session, freshly reauthenticated; 409 when no code is pending.
"""

from __future__ import annotations

from http import HTTPStatus
from typing import Any

from django.forms import Field
from django.http import HttpRequest
from django.utils.translation import gettext_lazy as _

from ..app_settings import app_settings
from ..internal.flows import login as login_flow
from ..login_codes.forms import CodeConfirmForm
from ..mfa.flows import reauthentication
from ..mfa.reauthentication_views import MESSAGES as PAGE_MESSAGES
from . import code_views, responses
from .account_views import AuthenticatedView, conflict
from .base import APIView
from .responses import Answer

MESSAGES = {
    "required": Field.default_error_messages["required"],
    "select_only_one": code_views.MESSAGES["select_only_one"],
    "unknown_email": _("The email address is not assigned to any user account."),
    "unknown_phone": _("The phone number is not assigned to any user account."),
    "code_required": code_views.MESSAGES["code_required"],
}
# Seconds a client waits before asking again when a code could not be mailed (the address's
# ``mail`` limit counts by the minute).
RETRY_AFTER_SECONDS = 60


class ReauthenticationCodeView(AuthenticatedView):
    """What the three operations share: ``POST`` only, for a logged-in session (401 with the
    login flows otherwise), 403 while ``ACCOUNTS_REAUTHENTICATION_BY_CODE_ENABLED`` is off
    (allauth's answer while ``code`` is not among its reauthentication methods)."""

    http_method_names = ["post"]

    def answer(self, request: HttpRequest, handler: Any, *args: Any, **kwargs: Any):
        if request.user.is_authenticated and not app_settings.REAUTHENTICATION_BY_CODE_ENABLED:
            return APIView.answer(self, request, lambda request, *a, **k: Answer(status=HTTPStatus.FORBIDDEN))
        return super().answer(request, handler, *args, **kwargs)


class RequestReauthenticationCodeView(ReauthenticationCodeView):
    """``POST auth/reauthenticate/code/request`` (``email``, one of the ``recipients`` of the
    ``reauthenticate_by_code`` flow): mail a code to it for this session, replacing any
    asked for before (200). An address that is not the account's verified one: 400
    ``unknown_email``; a ``phone`` (no code is texted to reauthenticate here): 400
    ``unknown_phone``; neither: 400 ``required``; both: 400 ``select_only_one``. Past the
    address's ``mail`` limit (or a mail server refusing it) nothing is mailed: 400
    ``too_many_login_attempts``, as allauth's limit per recipient."""

    def post(self, request: HttpRequest) -> Answer:
        email, phone = self.text("email"), self.text("phone")
        if email and phone:
            return responses.error(MESSAGES["select_only_one"], "select_only_one")
        if phone:
            return responses.error(MESSAGES["unknown_phone"], "unknown_phone", "phone")
        if not email:
            return responses.error(MESSAGES["required"], "required")
        recipients = [each["email"].casefold() for each in reauthentication.code_recipients(request.user)]
        if email.strip().casefold() not in recipients:
            return responses.error(MESSAGES["unknown_email"], "unknown_email", "email")
        if not reauthentication.mail_code(request):
            return responses.error(PAGE_MESSAGES["not_sent"], "too_many_login_attempts", "email")
        return Answer()


class ResendReauthenticationCodeView(ReauthenticationCodeView):
    """``POST auth/reauthenticate/code/resend``: a new code for the pending flow, mailed to
    the same address (200); the old code is wrong from then on, the new one has tries of its
    own. 409 when no code is pending or it was resent
    :data:`~accounts.login_codes.flows.MAX_RESENDS` times; 429 when it could not be mailed
    (the address's ``mail`` limit: the pending code stays the one to type). No input: a body
    is ignored, as allauth's."""

    takes_input = False

    def post(self, request: HttpRequest) -> Answer:
        if not reauthentication.can_resend(request):
            return conflict()
        if not reauthentication.resend_code(request):
            answer = responses.error(PAGE_MESSAGES["not_sent"], "rate_limited", status=HTTPStatus.TOO_MANY_REQUESTS)
            answer.headers["Retry-After"] = str(RETRY_AFTER_SECONDS)
            return answer
        return Answer()


class ConfirmReauthenticationCodeView(ReauthenticationCodeView):
    """``POST auth/reauthenticate/code/confirm`` (``code``): the session is freshly
    reauthenticated (200, its ``methods`` with ``{"method": "code", "email": ...,
    "reauthenticated": true}``). A wrong code: 400 ``incorrect_code``, counted against the
    code's tries and the account's ``reauthenticate`` limit, as on the page (past either,
    429); 409 when no code is pending (none asked, expired, or used meanwhile)."""

    def post(self, request: HttpRequest) -> Answer:
        if not reauthentication.code_pending(request):
            return conflict()
        code = self.text("code") or ""
        if not code or len(code) > 20:
            return responses.error(MESSAGES["code_required"], "required", "code")
        outcome = reauthentication.with_code(request, code)
        if outcome == reauthentication.WRONG_CODE:
            return responses.error(CodeConfirmForm.error_messages["wrong_code"], "incorrect_code", "code")
        if outcome != reauthentication.REAUTHENTICATED:
            return conflict()
        login_flow.record_method(
            request, {"method": "code", "email": request.user.account.email, "reauthenticated": True}
        )
        return responses.authenticated(request, request.user)
