"""The profile's pages of second factors: the authenticator app, passkeys, recovery codes.

Each needs a signed-in person with a verified address who proved who they are within
``ACCOUNTS_REAUTHENTICATION_TIMEOUT`` (adding or removing an authenticator is sensitive).
Views call one flow each (:mod:`.flows.authenticators`); refusals become form errors.
"""

from django.contrib import messages
from django.http import Http404
from django.shortcuts import redirect, render
from django.utils.decorators import method_decorator
from django.utils.translation import gettext_lazy as _
from django.views import View
from django.views.decorators.cache import never_cache
from django.views.generic import FormView, TemplateView

from ..adapter import get_adapter
from ..exceptions import Busy, StaleItem, UniqueViolation
from ..views import AccountLoginRequiredMixin
from . import passkeys, store
from .flows import authenticators
from .flows.reauthentication import ReauthenticationRequiredMixin
from .forms import PasskeyAddForm, TotpActivateForm

MESSAGES = {
    "unverified": _("Confirm your email address first: only an address that is yours can protect your account."),
    "totp_on": _("The authenticator app is on: logging in now asks for one of its codes."),
    "totp_off": _("The authenticator app is off."),
    "passkey_added": _("Your passkey “%(name)s” is added."),
    "passkey_removed": _("Your passkey “%(name)s” is removed."),
    "last_way_in": _("It is the only way into your account: set a password first, then remove it."),
}
# What the engine can refuse when a factor is set up or removed.
REFUSALS = (StaleItem, Busy)


@method_decorator(never_cache, name="dispatch")
class SecondFactorView(AccountLoginRequiredMixin, ReauthenticationRequiredMixin):
    """A page that sets up or removes a second factor of the signed-in account."""

    def dispatch(self, request, *args, **kwargs):
        if request.user.is_authenticated and not authenticators.may_set_up(request.user.account):
            messages.warning(request, MESSAGES["unverified"])
            return redirect("accounts:profile")
        return super().dispatch(request, *args, **kwargs)

    @property
    def account(self):
        return self.request.user.account

    def refused(self, form):
        form.add_error(None, get_adapter(self.request).validation_error("stale"))
        return self.form_invalid(form)


class TotpView(SecondFactorView, FormView):
    """The authenticator app: while it is off, its set-up (the secret as text, its
    ``otpauth://`` URI and QR code, and a form whose one text input is a code); while it is
    on, since when, and a button to turn it off."""

    template_name = "accounts/mfa/totp.html"
    form_class = TotpActivateForm

    def get_context_data(self, **kwargs):
        context = super().get_context_data(**kwargs)
        if self.account.totp_secret:
            context["active"] = True
        else:
            context.update(authenticators.totp_setup(self.request, self.account))
        return context

    def form_valid(self, form):
        if self.account.totp_secret:
            return redirect("accounts:mfa:totp")
        try:
            codes = authenticators.activate_totp(self.request, self.account, form.cleaned_data["code"])
        except REFUSALS:
            return self.refused(form)
        if codes is None:
            form.add_error("code", form.error_messages["wrong_code"])
            return self.form_invalid(form)
        messages.success(self.request, MESSAGES["totp_on"])
        if codes:
            return render(self.request, "accounts/mfa/recovery_codes.html", {"codes": codes, "left": len(codes)})
        return redirect("accounts:mfa:totp")


class TotpDeactivateView(SecondFactorView, View):
    """Turn the authenticator app off (POST)."""

    http_method_names = ["post"]

    def post(self, request):
        if self.account.totp_secret:
            try:
                authenticators.deactivate_totp(request, self.account)
            except REFUSALS:
                messages.error(request, get_adapter(request).error_messages["stale"])
                return redirect("accounts:mfa:totp")
            messages.success(request, MESSAGES["totp_off"])
        return redirect("accounts:mfa:totp")


class PasskeysView(SecondFactorView, FormView):
    """The account's passkeys (name, added, last used, a button to remove each), and adding
    one: a name, then the browser creates it (``webauthn.js``)."""

    template_name = "accounts/mfa/passkeys.html"
    form_class = PasskeyAddForm

    def get_context_data(self, **kwargs):
        return super().get_context_data(
            passkeys=store.passkeys_of(self.account), max_passkeys=passkeys.MAX_PASSKEYS, **kwargs
        )

    def form_valid(self, form):
        name = form.cleaned_data["name"]
        try:
            authenticators.add_passkey(self.request, self.account, name, form.cleaned_data["credential"])
        except passkeys.PasskeyRefused as refusal:
            form.add_error(None, refusal.message)
            return self.form_invalid(form)
        except UniqueViolation:
            form.add_error(None, form.error_messages["passkey_taken"])
            return self.form_invalid(form)
        except store.TooManyPasskeys:
            form.add_error(None, form.error_messages["too_many"])
            return self.form_invalid(form)
        except REFUSALS:
            return self.refused(form)
        messages.success(self.request, MESSAGES["passkey_added"] % {"name": name})
        return redirect("accounts:mfa:passkeys")


class PasskeyRemoveView(SecondFactorView, TemplateView):
    """Confirm (GET), then remove (POST) one passkey."""

    template_name = "accounts/mfa/passkey_remove.html"

    def get_passkey(self):
        for passkey in store.passkeys_of(self.account):
            if passkey.credential_id == self.kwargs["credential_id"]:
                return passkey
        raise Http404("No such passkey.")

    def get_context_data(self, **kwargs):
        return super().get_context_data(passkey=self.get_passkey(), **kwargs)

    def post(self, request, credential_id):
        passkey = self.get_passkey()
        try:
            authenticators.remove_passkey(request, self.account, passkey)
        except store.LastWayIn:
            messages.error(request, MESSAGES["last_way_in"])
        except REFUSALS:
            messages.error(request, get_adapter(request).error_messages["stale"])
        else:
            messages.success(request, MESSAGES["passkey_removed"] % {"name": passkey.name})
        return redirect("accounts:mfa:passkeys")


class RecoveryCodesView(SecondFactorView, TemplateView):
    """How many recovery codes are left, and (POST) new ones, shown once as a list."""

    template_name = "accounts/mfa/recovery_codes.html"

    def get_context_data(self, **kwargs):
        return super().get_context_data(left=len(self.account.recovery_codes or ()), **kwargs)

    def post(self, request):
        if not store.has_second_factor(self.account):
            return redirect("accounts:mfa:recovery_codes")
        try:
            codes = authenticators.regenerate_recovery_codes(request, self.account)
        except REFUSALS:
            messages.error(request, get_adapter(request).error_messages["stale"])
            return redirect("accounts:mfa:recovery_codes")
        return render(request, self.template_name, {"codes": codes, "left": len(codes)})
