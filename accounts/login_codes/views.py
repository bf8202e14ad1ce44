"""The pages of login by code: "Email me a code", then the code. Each view parses its
input, calls one flow (:mod:`.flows`) and renders what it returns."""

from django.contrib import messages
from django.core.exceptions import ValidationError
from django.shortcuts import redirect
from django.urls import reverse
from django.utils.decorators import method_decorator
from django.utils.http import url_has_allowed_host_and_scheme
from django.utils.translation import gettext_lazy as _
from django.views.decorators.cache import never_cache
from django.views.generic import FormView

from .. import devices, ratelimit
from ..adapter import get_adapter
from ..after_response import RedirectThen
from . import flows
from .forms import CodeConfirmForm, CodeRequestForm

MESSAGES = {
    "sent": _("If an account uses this name or address, we mailed it a code. It works for 10 minutes."),
    "expired": _("This code has expired or was already used. Please ask for a new one."),
}


@method_decorator(never_cache, name="dispatch")
class CodeRequestView(ratelimit.RateLimitMixin, FormView):
    """Ask for a code by mail; the same answer, in the same time, whether or not an account
    uses the name (the mail goes once the answer is sent). Each request counts against the
    ``reset_password`` limits (a mail to an address, as a reset is), per address and per
    client."""

    template_name = "accounts/login_codes/request.html"
    form_class = CodeRequestForm
    rate_limit_action = "reset_password"

    def rate_limit_key(self, form):
        # What every spelling of the address shares, as its lock and the login's limit do.
        return flows.request_limit_key(form.cleaned_data["login"])

    def dispatch(self, request, *args, **kwargs):
        if request.user.is_authenticated:
            return redirect(get_adapter(request).get_login_redirect_url(request))
        return super().dispatch(request, *args, **kwargs)

    def form_valid(self, form):
        refusal = self.refuse_over_limit(form)
        if refusal is not None:
            return refusal
        next_url = self.request.GET.get("next") or self.request.POST.get("next")
        allowed = url_has_allowed_host_and_scheme(
            next_url, {self.request.get_host()}, require_https=self.request.is_secure()
        )
        mail = flows.request_code(
            self.request,
            form.cleaned_data["login"],
            next_url=next_url
            if next_url and allowed
            else get_adapter(self.request).get_login_redirect_url(self.request),
        )
        messages.info(self.request, MESSAGES["sent"])
        # The code is made and mailed once the answer is sent: it takes no longer for a
        # name somebody holds.
        return RedirectThen(reverse("accounts:login_codes:confirm"), mail.send)


@method_decorator(never_cache, name="dispatch")
class CodeConfirmView(ratelimit.RateLimitMixin, FormView):
    """Type the code; the second step follows for an account with a second factor. Past
    the code's tries or the login's limits, 429."""

    template_name = "accounts/login_codes/confirm.html"
    form_class = CodeConfirmForm

    def dispatch(self, request, *args, **kwargs):
        if flows.pending(request) is None:
            messages.warning(request, MESSAGES["expired"])
            return redirect("accounts:login_codes:request")
        return super().dispatch(request, *args, **kwargs)

    def form_valid(self, form):
        next_url = flows.pending(self.request)["next"]
        try:
            outcome, user = flows.confirm_code(self.request, form.cleaned_data["code"])
        except ratelimit.RateLimited as error:
            ratelimit.refuse(form, error)
            return self.form_invalid(form)
        if outcome == flows.WRONG_CODE:
            form.add_error("code", ValidationError(form.error_messages["wrong_code"], code="wrong_code"))
            return self.form_invalid(form)
        if outcome == flows.SECOND_STEP:
            return redirect("accounts:mfa:authenticate")
        if outcome != flows.SIGNED_IN:
            messages.error(self.request, MESSAGES["expired"])
            return redirect("accounts:login_codes:request")
        get_adapter(self.request).add_success_message(self.request, "logged_in", username=user.display_name)
        response = redirect(next_url)
        devices.remember(self.request, response, user.pk)
        return response
