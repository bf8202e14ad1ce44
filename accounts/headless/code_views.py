"""Login by a mailed code in the API: ``auth/code/request``, ``auth/code/resend`` and
``auth/code/confirm``, over the flows of :mod:`accounts.login_codes.flows` (the same the
pages call)."""

from __future__ import annotations

from django.core.exceptions import ValidationError
from django.http import HttpRequest
from django.utils.translation import gettext_lazy as _

from .. import ratelimit, signup_fields
from ..login_codes import flows
from ..login_codes.forms import CodeConfirmForm
from ..phones.numbers import parse_phone
from . import responses
from .account_views import conflict
from .base import APIView
from .responses import Answer

MESSAGES = {
    "email_required": _("Enter an email address."),
    "select_only_one": _("Please select only one."),
    "code_required": _("Enter the code."),
}


class RequestCodeView(APIView):
    """``POST auth/code/request`` (``email``, or ``phone`` on a site that logs in by number):
    mail (or text) a code to the account using the address (or number), if one may log in;
    the same answer either way (401, ``login_by_code`` pending), in the same time (the mail
    or text goes once the answer is sent), so it tells nothing about the address. Counted
    against ``reset_password`` per address and per client, as on the page (429)."""

    http_method_names = ["post"]

    def post(self, request: HttpRequest) -> Answer:
        if request.user.is_authenticated:
            return conflict()
        if signup_fields.logs_in_by("phone"):
            phone_sent = self.text("phone") is not None
            if phone_sent or not signup_fields.logs_in_by("email"):
                return self.request_by_phone(request)
        email = (self.text("email") or "").strip()
        if not email or len(email) > 254:
            return responses.error(MESSAGES["email_required"], "invalid", "email")
        ratelimit.consume(request, "reset_password", key=flows.request_limit_key(email))
        mail = flows.request_code(request, email, next_url="")
        answer = responses.unauthenticated(request)
        answer.then = mail.send
        return answer

    def request_by_phone(self, request: HttpRequest) -> Answer:
        """``phone`` (on a site that logs in by number): the code is texted to the account whose
        verified number it is, counted against ``reset_password`` per number as an address is."""
        if self.text("email") is not None and signup_fields.logs_in_by("email"):
            return responses.error(MESSAGES["select_only_one"], "select_only_one")
        try:
            phone = parse_phone(self.text("phone") or "")
        except ValidationError as error:
            return responses.error(error.messages[0], error.code or "invalid", "phone")
        ratelimit.consume(request, "reset_password", key=flows.request_limit_key(phone))
        text = flows.request_code(request, phone, next_url="")
        answer = responses.unauthenticated(request)
        answer.then = text.send
        return answer


class ResendCodeView(APIView):
    """``POST auth/code/resend``: a new code for the pending ``login_by_code`` flow, mailed
    once the answer is sent; the old code stops working and the new one gets tries of its
    own (200). 409 when no code is pending (none, expired, or used) or it was resent
    :data:`~accounts.login_codes.flows.MAX_RESENDS` times; counted as a request for a code
    (429). The same answer whether or not an account uses the address. No input: a body
    is ignored, as allauth's."""

    http_method_names = ["post"]
    takes_input = False

    def post(self, request: HttpRequest) -> Answer:
        if request.user.is_authenticated or not flows.can_resend(request):
            return conflict()
        mail = flows.resend_code(request)
        if mail is None:
            return conflict()
        return Answer(then=mail.send)


class ConfirmCodeView(APIView):
    """``POST auth/code/confirm`` (``code``): sign in with the code this session asked for:
    200, or 401 with ``mfa_authenticate`` pending for an account with a second factor; a
    wrong code 400 ``incorrect_code`` (counted: past the code's tries or the login's limits,
    429); 409 when no code is pending (none asked, expired, or used)."""

    http_method_names = ["post"]

    def post(self, request: HttpRequest) -> Answer:
        if request.user.is_authenticated or flows.pending(request) is None:
            return conflict()
        code = self.text("code") or ""
        if not code or len(code) > 20:
            return responses.error(MESSAGES["code_required"], "invalid", "code")
        outcome, user = flows.confirm_code(request, code)
        if outcome == flows.WRONG_CODE:
            return responses.error(CodeConfirmForm.error_messages["wrong_code"], "incorrect_code", "code")
        if outcome == flows.SECOND_STEP:
            return responses.unauthenticated(request)
        if outcome != flows.SIGNED_IN or user is None:
            return conflict()
        answer = responses.authenticated(request, user)
        answer.trusted_account = user.pk
        return answer
