"""The reauthentication page's ways beside the password and the passkey: a code of the
authenticator app, and a code mailed to the account's address ("Email me a code"). Each view
parses its input, calls one function of :mod:`.flows.reauthentication` and renders."""

from urllib.parse import urlencode

from django.contrib import messages
from django.core.exceptions import ValidationError
from django.shortcuts import redirect, resolve_url
from django.utils.decorators import method_decorator
from django.utils.translation import gettext_lazy as _
from django.views import View
from django.views.decorators.cache import never_cache
from django.views.generic import FormView

from .. import ratelimit
from ..login_codes.forms import CodeConfirmForm
from ..ratelimit import RateLimitMixin
from ..views import AccountLoginRequiredMixin
from .flows import reauthentication
from .forms import ReauthenticateTotpForm
from .login_views import ReauthenticateView, _safe_next

MESSAGES = {
    "sent": _("We mailed a code to your address. It works for 10 minutes."),
    "not_sent": _("We could not mail a code now. Please wait a minute and try again."),
    "expired": _("This code has expired or was already used. Please ask for a new one."),
}


def _with_next(request, url_name: str) -> str:
    """The page ``url_name``, keeping the reauthentication's ``next``."""
    back_to = request.GET.get("next") or request.POST.get("next") or ""
    return f"{resolve_url(url_name)}?{urlencode({'next': back_to})}"


def _done(request):
    return redirect(_safe_next(request, request.GET.get("next"), "accounts:profile"))


def _refused(form, outcome: str):
    form.add_error("code", ValidationError(form.error_messages[outcome], code=outcome))


@method_decorator(never_cache, name="dispatch")
class ReauthenticateTotpView(ReauthenticateView):
    """Confirm who you are with a code of the account's authenticator app (POST ``code``);
    wrong, used or over the ``mfa_attempt`` limit (429), the page again with the error."""

    http_method_names = ["post"]
    form_class = ReauthenticateTotpForm
    form_name = "totp_form"

    def form_valid(self, form):
        try:
            outcome = reauthentication.with_totp(self.request, form.cleaned_data["code"])
        except ratelimit.RateLimited as error:
            ratelimit.refuse(form, error)
            return self.form_invalid(form)
        if outcome != reauthentication.REAUTHENTICATED:
            _refused(form, outcome)
            return self.form_invalid(form)
        return _done(self.request)


@method_decorator(never_cache, name="dispatch")
class ReauthenticateCodeSendView(AccountLoginRequiredMixin, View):
    """ "Email me a code" (POST): a code to the account's verified address, then its page."""

    http_method_names = ["post"]

    def post(self, request):
        if reauthentication.mail_code(request):
            messages.info(request, MESSAGES["sent"])
            return redirect(_with_next(request, "accounts:mfa:reauthenticate_code"))
        messages.error(request, MESSAGES["not_sent"])
        return redirect(_with_next(request, "accounts:mfa:reauthenticate"))


@method_decorator(never_cache, name="dispatch")
class ReauthenticateCodeView(AccountLoginRequiredMixin, RateLimitMixin, FormView):
    """Type the mailed code. Each try counts against ``reauthenticate`` and the code's own
    tries; past either, 429."""

    template_name = "accounts/mfa/reauthenticate_code.html"
    form_class = CodeConfirmForm

    def dispatch(self, request, *args, **kwargs):
        if request.user.is_authenticated and not reauthentication.code_pending(request):
            messages.warning(request, MESSAGES["expired"])
            return redirect(_with_next(request, "accounts:mfa:reauthenticate"))
        return super().dispatch(request, *args, **kwargs)

    def get_context_data(self, **kwargs):
        return super().get_context_data(next=self.request.GET.get("next", ""), **kwargs)

    def form_valid(self, form):
        try:
            outcome = reauthentication.with_code(self.request, form.cleaned_data["code"])
        except ratelimit.RateLimited as error:
            ratelimit.refuse(form, error)
            return self.form_invalid(form)
        if outcome == reauthentication.WRONG_CODE:
            _refused(form, outcome)
            return self.form_invalid(form)
        if outcome != reauthentication.REAUTHENTICATED:
            messages.error(self.request, MESSAGES["expired"])
            return redirect(_with_next(self.request, "accounts:mfa:reauthenticate"))
        return _done(self.request)
