"""The phone operations of the API, as django-allauth's specification has them: ``account/phone``
(``GET``, ``POST``), ``auth/phone/verify`` and ``auth/phone/verify/resend``, over the flows
of :mod:`accounts.phones.flows` (the same the pages call).

On a site without phone numbers (no ``phone`` in ``ACCOUNTS_SIGNUP_FIELDS`` nor
``ACCOUNTS_LOGIN_METHODS``) each answers as allauth answers while the feature is off: ``GET
account/phone`` lists none (401 with the flows to log in to nobody), and a number can be
neither added, verified nor sent a new code (409: no phone verification is pending).
"""

from __future__ import annotations

from http import HTTPStatus

from django.http import HttpRequest

from .. import signup_fields
from ..adapter import get_adapter
from ..mfa.flows import reauthentication
from ..phones import codes, flows
from ..phones import store as phone_store
from ..phones.forms import PhoneForm
from ..phones.numbers import MAX_INPUT_LENGTH
from ..tables import Account
from . import code_views, responses
from .base import APIView
from .responses import Answer


def conflict() -> Answer:
    """409: no phone verification is pending (allauth's ``ConflictResponse``)."""
    return Answer(status=HTTPStatus.CONFLICT)


def phone_numbers(account: Account | None) -> list[dict]:
    """allauth's ``PhoneNumber`` list of ``account``: its number, if any (at most one)."""
    if account is None or not account.phone:
        return []
    return [{"phone": account.phone, "verified": phone_store.is_verified(account)}]


class PhoneView(APIView):
    """``account/phone``: ``GET`` lists the account's number (allauth's ``PhoneNumbers``);
    ``POST`` (``phone``) texts a code to a new number (202, the number listed unverified): for
    a signed-in session (a fresh reauthentication first, else 401 with the flows that renew
    it; ``change_phone`` per account and ``verify_phone`` per number and client, 429), the
    number becomes the account's once its code is posted to ``auth/phone/verify``; while a
    sign-up's verification is pending, it replaces the number that sign-up verifies
    (``ACCOUNTS_PHONE_VERIFICATION_SUPPORTS_CHANGE``), else 409."""

    http_method_names = ["get", "post"]

    def get(self, request: HttpRequest) -> Answer:
        if not request.user.is_authenticated:
            return responses.unauthenticated(request)
        return Answer(data=phone_numbers(request.user.account))

    def post(self, request: HttpRequest) -> Answer:
        if not signup_fields.has_phone():
            return conflict()
        if not request.user.is_authenticated:
            return self.change_staged(request)
        if not reauthentication.is_fresh(request):
            return responses.reauthentication_required(request, request.user)
        form = self.phone_form()
        if not form.is_valid():
            return responses.form_errors(form)
        requested = flows.request_change(request, account=request.user.account, phone=form.cleaned_data["phone"])
        return self.requested(form, requested)

    def change_staged(self, request: HttpRequest) -> Answer:
        if not flows.can_change(request):
            return conflict()
        form = self.phone_form()
        if not form.is_valid():
            return responses.form_errors(form)
        return self.requested(form, flows.change_staged(request, phone=form.cleaned_data["phone"]))

    def phone_form(self) -> PhoneForm:
        return PhoneForm(data={"phone": self.text("phone") or ""})

    def requested(self, form: PhoneForm, requested: flows.PhoneRequest) -> Answer:
        adapter = get_adapter(self.request)
        if requested.outcome == flows.EXPIRED:
            return conflict()
        if requested.outcome in (flows.SAME, flows.TAKEN):
            code = "same_as_current" if requested.outcome == flows.SAME else "phone_taken"
            form.add_error("phone", adapter.validation_error(code))
            return responses.form_errors(form)
        return Answer(status=HTTPStatus.ACCEPTED, data=[{"phone": requested.phone, "verified": False}])


class VerifyPhoneView(APIView):
    """``POST auth/phone/verify`` (``code``): the code of the pending sign-up's or login's
    verification stage (then 200 logged in, or 401 with the next flow pending: a second
    factor, or the address's verification), or of a signed-in account's change of number
    (200). A wrong code is 400 ``incorrect_code`` (counted: the last try ends the flow), a
    number another account verified first 400 ``phone_taken``; 409 when nothing is pending
    (none, expired, used, or the account changed since the code was sent)."""

    http_method_names = ["post"]

    def post(self, request: HttpRequest) -> Answer:
        if not signup_fields.has_phone():
            return conflict()
        staged = flows.staged_code(request) is not None
        if not staged and not (request.user.is_authenticated and flows.pending_change(request, request.user.account)):
            return conflict()
        code = self.text("code") or ""
        if not code or len(code) > MAX_INPUT_LENGTH:
            return responses.error(code_views.MESSAGES["code_required"], "required" if not code else "invalid", "code")
        if staged:
            return self.verified_stage(request, flows.verify_staged(request, code=code))
        verification = flows.verify_change(request, code=code)
        if verification.outcome != flows.VERIFIED:
            return self.refused(verification.outcome)
        return responses.authenticated(request, request.user)

    def verified_stage(self, request: HttpRequest, verification: flows.StagedVerification) -> Answer:
        if verification.outcome != flows.VERIFIED or verification.user is None:
            return self.refused(verification.outcome)
        if not verification.logged_in:
            return responses.unauthenticated(request)
        answer = responses.authenticated(request, verification.user)
        answer.trusted_account = verification.user.pk
        return answer

    def refused(self, outcome: str) -> Answer:
        adapter = get_adapter(self.request)
        if outcome in (flows.WRONG_CODE, flows.EXHAUSTED):
            return responses.error(adapter.error_messages["incorrect_code"], "incorrect_code", "code")
        if outcome == flows.TAKEN:
            return responses.error(adapter.error_messages["phone_taken"], "phone_taken", "code")
        return conflict()


class ResendPhoneVerificationView(APIView):
    """``POST auth/phone/verify/resend``: a new code for the pending verification stage
    (``ACCOUNTS_PHONE_VERIFICATION_SUPPORTS_RESEND``; the old code dies): 200, 429 past
    ``verify_phone`` or ``sms``, 409 when none is pending or no more new codes are allowed."""

    http_method_names = ["post"]

    def post(self, request: HttpRequest) -> Answer:
        if not signup_fields.has_phone():
            return conflict()
        outcome = flows.resend_staged(request)
        if outcome == codes.TOO_SOON:
            return Answer(status=HTTPStatus.TOO_MANY_REQUESTS)
        if outcome not in (codes.SENT, codes.FAILED):
            return conflict()
        return Answer()
