"""The pages of phone numbers: the number in the profile (add, change, verify, remove, behind
reauthentication as the email page), and the page where a texted code is typed: at the
verification stage of a sign-up or a login, or for a signed-in account's change. Each view
parses its input, calls one flow (:mod:`.flows`) and renders what it returns."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, cast

from django.contrib import messages
from django.http import HttpRequest, HttpResponse, HttpResponseBase
from django.shortcuts import redirect, render
from django.utils.decorators import method_decorator
from django.utils.translation import gettext_lazy as _
from django.views import View
from django.views.decorators.cache import never_cache
from django.views.generic import FormView

from .. import devices, ratelimit
from ..adapter import get_adapter
from ..exceptions import Busy
from ..form_errors import STORE_REFUSALS
from ..internal.flows import login as login_flow
from ..mfa.flows.reauthentication import ReauthenticationRequiredMixin
from ..models import User
from ..tables import Account
from ..views import AccountLoginRequiredMixin
from . import codes, flows
from . import store as phone_store
from .codes import SentCode
from .forms import PhoneCodeForm, PhoneForm
from .numbers import display

if TYPE_CHECKING:
    # django-stubs makes the view generic in its form.
    _PhoneFormView = FormView[PhoneForm]
else:
    _PhoneFormView = FormView

MESSAGES = {
    "expired": _("This code has expired or was already used. Please ask for a new one."),
    "login_expired": _("The verification of your phone number has expired. Please log in again."),
}
# What each way a code can die says (the adapter's error messages, by code).
DEAD_CODES = {
    flows.EXHAUSTED: "too_many_attempts",
    flows.STALE: "phone_code_stale",
    flows.TAKEN: "phone_taken",
}


def signed_in_account(request: HttpRequest) -> Account:
    """The account of the signed-in person (the views below let nobody else in)."""
    return cast(User, request.user).stored_account()


def add_text_message(request: HttpRequest, outcome: str, phone: str) -> None:
    """Say what became of a code's text to ``phone``: ``sent``, ``too_soon`` or ``failed``."""
    adapter = get_adapter(request)
    code = {codes.SENT: "phone_code_sent", codes.TOO_SOON: "phone_code_too_soon"}.get(outcome, "phone_code_failed")
    level = messages.SUCCESS if outcome == codes.SENT else messages.WARNING
    messages.add_message(request, level, adapter.success_messages[code] % {"phone": display(phone)})


@method_decorator(never_cache, name="dispatch")
class PhoneChangeView(
    ReauthenticationRequiredMixin, ratelimit.RateLimitMixin, AccountLoginRequiredMixin, _PhoneFormView
):
    """The account's number (django-allauth's ``phone/change/``): shown with whether it is
    verified; a new one (or the unverified one again) gets a code, and becomes the account's
    once the code is typed (:func:`.flows.request_change`). Counted against ``change_phone``
    per account and ``verify_phone`` per number and client (429 past them)."""

    template_name = "accounts/phones/change.html"
    form_class = PhoneForm

    def get_context_data(self, **kwargs: Any) -> dict[str, Any]:
        account = signed_in_account(self.request)
        pending = flows.pending_change(self.request, account)
        return super().get_context_data(
            phone=display(account.phone) if account.phone else None,
            phone_verified=phone_store.is_verified(account),
            pending=display(pending.phone) if pending is not None else None,
            may_remove=flows.may_remove(account),
            **kwargs,
        )

    def form_valid(self, form: PhoneForm) -> HttpResponse:  # type: ignore[override]  # this view's form
        adapter = get_adapter(self.request)
        try:
            requested = flows.request_change(
                self.request, account=signed_in_account(self.request), phone=form.cleaned_data["phone"]
            )
        except ratelimit.RateLimited as error:
            ratelimit.refuse(form, error)
            return self.form_invalid(form)
        if requested.outcome == flows.SAME:
            form.add_error("phone", adapter.validation_error("same_as_current"))
            return self.form_invalid(form)
        if requested.outcome == flows.TAKEN:
            form.add_error("phone", adapter.validation_error("phone_taken"))
            return self.form_invalid(form)
        add_text_message(self.request, requested.outcome, requested.phone)
        return redirect("accounts:phones:verify")


@method_decorator(never_cache, name="dispatch")
class PhoneRemoveView(ReauthenticationRequiredMixin, AccountLoginRequiredMixin, View):
    """Take the number off the account (POST only): its lock is released at once. Refused
    where a number is required (``phone*``) or is the only way to log in."""

    http_method_names = ["post"]

    def post(self, request: HttpRequest) -> HttpResponse:
        adapter = get_adapter(request)
        account = signed_in_account(request)
        if not flows.may_remove(account):
            messages.error(request, adapter.error_messages["phone_required"])
            return redirect("accounts:phones:change")
        try:
            flows.remove_phone(request, account=account)
        except STORE_REFUSALS as refusal:
            messages.error(request, adapter.error_messages["busy" if isinstance(refusal, Busy) else "stale"])
            return redirect("accounts:phones:change")
        adapter.add_success_message(request, "phone_removed")
        return redirect("accounts:phones:change")


@method_decorator(never_cache, name="dispatch")
class PhoneVerifyView(View):
    """Type the code texted to the number (django-allauth's ``phone/verify/``): a signed-in
    account's change of number, or the verification stage of a sign-up or a login (where,
    as the settings allow, a new code or another number may be asked for:
    ``action=resend``, ``action=change``)."""

    template_name = "accounts/phones/verify.html"
    # The code the page is about (set by dispatch).
    sent: SentCode

    def dispatch(self, request: HttpRequest, *args: Any, **kwargs: Any) -> HttpResponseBase:
        if request.user.is_authenticated:
            sent = flows.pending_change(request, signed_in_account(request))
            if sent is None:
                messages.warning(request, MESSAGES["expired"])
                return redirect("accounts:phones:change")
        else:
            sent = flows.staged_code(request)
            if sent is None:
                messages.warning(request, MESSAGES["login_expired"])
                return redirect("accounts:login")
        self.sent = sent
        return super().dispatch(request, *args, **kwargs)

    @property
    def staged(self) -> bool:
        return not self.request.user.is_authenticated

    def get(self, request: HttpRequest) -> HttpResponse:
        return self.render(PhoneCodeForm(), PhoneForm())

    def post(self, request: HttpRequest) -> HttpResponse:
        action = request.POST.get("action")
        if self.staged and action == "resend" and flows.can_resend(self.sent):
            return self.resend()
        if self.staged and action == "change" and flows.can_change(self.request):
            return self.change(PhoneForm(request.POST))
        form = PhoneCodeForm(request.POST)
        if not form.is_valid():
            return self.render(form, PhoneForm(), status=400)
        if self.staged:
            return self.verified_stage(form, flows.verify_staged(request, code=form.cleaned_data["code"]))
        verification = flows.verify_change(request, code=form.cleaned_data["code"])
        if verification.outcome == flows.WRONG_CODE:
            return self.wrong_code(form)
        adapter = get_adapter(request)
        if verification.outcome == flows.VERIFIED and verification.account is not None:
            adapter.add_success_message(request, "phone_verified", phone=display(verification.account.phone or ""))
        else:
            self.dead_code(verification.outcome)
        return redirect("accounts:phones:change")

    def verified_stage(self, form: PhoneCodeForm, verification: flows.StagedVerification) -> HttpResponse:
        request = self.request
        if verification.outcome == flows.WRONG_CODE:
            return self.wrong_code(form)
        if verification.outcome != flows.VERIFIED or verification.user is None:
            self.dead_code(verification.outcome)
            return redirect("accounts:login")
        adapter = get_adapter(request)
        user = verification.user
        if verification.pending is not None:
            return redirect(verification.pending.url_name)
        if not verification.logged_in:
            return redirect("accounts:verification_sent")
        if verification.signup:
            adapter.add_success_message(request, "signed_up", username=user.display_name)
            response = redirect(adapter.get_signup_redirect_url(request))
        else:
            adapter.add_success_message(request, "logged_in", username=user.display_name)
            response = redirect(login_flow.redirect_url(request, verification.next_url))
        devices.remember(request, response, user.pk)
        return response

    def resend(self) -> HttpResponse:
        try:
            outcome = flows.resend_staged(self.request)
        except ratelimit.RateLimited as error:
            messages.error(self.request, error.validation_error().messages[0])
            return redirect("accounts:phones:verify")
        if outcome in (codes.SENT, codes.TOO_SOON, codes.FAILED):
            add_text_message(self.request, outcome, self.sent.phone)
        return redirect("accounts:phones:verify")

    def change(self, form: PhoneForm) -> HttpResponse:
        if not form.is_valid():
            return self.render(PhoneCodeForm(), form, status=400)
        adapter = get_adapter(self.request)
        try:
            requested = flows.change_staged(self.request, phone=form.cleaned_data["phone"])
        except ratelimit.RateLimited as error:
            ratelimit.refuse(form, error)
            return self.render(PhoneCodeForm(), form, status=429)
        if requested.outcome == flows.TAKEN:
            form.add_error("phone", adapter.validation_error("phone_taken"))
            return self.render(PhoneCodeForm(), form, status=400)
        if requested.outcome == flows.EXPIRED:
            messages.warning(self.request, MESSAGES["login_expired"])
            return redirect("accounts:login")
        add_text_message(self.request, requested.outcome, requested.phone)
        return redirect("accounts:phones:verify")

    def wrong_code(self, form: PhoneCodeForm) -> HttpResponse:
        form.add_error("code", get_adapter(self.request).validation_error("incorrect_code"))
        return self.render(form, PhoneForm(), status=400)

    def dead_code(self, outcome: str) -> None:
        adapter = get_adapter(self.request)
        code = DEAD_CODES.get(outcome)
        messages.error(self.request, adapter.error_messages[code] if code else MESSAGES["expired"])

    def render(self, form: PhoneCodeForm, change_form: PhoneForm, status: int = 200) -> HttpResponse:
        sent = self.sent
        context = {
            "form": form,
            "change_form": change_form,
            "phone": display(sent.phone),
            "outcome": sent.outcome,
            "staged": self.staged,
            "can_resend": self.staged and flows.can_resend(sent),
            "can_change": self.staged and flows.can_change(self.request),
        }
        return render(self.request, self.template_name, context, status=status)
