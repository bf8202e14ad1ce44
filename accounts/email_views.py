"""The pages of email ownership: "check your inbox" with resend, the verification and
email-change links, and password reset by email.

Each link page shows a button on GET and applies the link on POST (a mail scanner that
follows links must not verify anything); what a link does lives in :mod:`accounts.verification`
and :mod:`accounts.password_reset`.
"""

import re

from django.contrib.auth import views as auth_views
from django.http import HttpResponseRedirect
from django.shortcuts import redirect, render
from django.urls import reverse, reverse_lazy
from django.utils.decorators import method_decorator
from django.utils.http import urlsafe_base64_decode
from django.views import View
from django.views.decorators.cache import never_cache
from django.views.generic import FormView

from . import password_reset, store, verification
from .adapter import get_adapter
from .forms import STORE_REFUSALS
from .models import User
from .pending import PENDING_SESSION_KEY
from .ratelimit import RateLimitMixin

# What an account id can look like (hex today); anything else is not looked up.
ACCOUNT_ID = re.compile(r"[\w-]{1,64}")


def remember_pending(request, account_id, email, sent):
    """Note in the session who waits for a verification mail, for the "check your inbox" page."""
    request.session[PENDING_SESSION_KEY] = {"id": account_id, "email": email, "sent": sent}


def _pending_account(request):
    """The account this visitor may resend a verification mail to, or ``None``."""
    if request.user.is_authenticated:
        return request.user.account
    pending = request.session.get(PENDING_SESSION_KEY) or {}
    return store.get_account(pending["id"]) if pending.get("id") else None


@method_decorator(never_cache, name="dispatch")
class VerificationSentView(View):
    """ "Check your inbox": the address the link went to (or that it could not be sent), and a
    button to send it again (POST, at most once a minute per account)."""

    template_name = "accounts/verification_sent.html"

    def get(self, request):
        pending = request.session.get(PENDING_SESSION_KEY)
        if pending is None and not request.user.is_authenticated:
            return redirect("accounts:login")
        return render(request, self.template_name, {"pending": pending or {"email": request.user.email, "sent": True}})

    def post(self, request):
        account = _pending_account(request)
        if account is None or store.is_verified(account):
            # Nothing to send (an enumeration-safe sign-up, or verified meanwhile): same answer.
            outcome = verification.SENT
        else:
            outcome = verification.resend_verification(request, account)
        pending = request.session.get(PENDING_SESSION_KEY) or {}
        email = account.email if account is not None else pending.get("email", "")
        get_adapter(request).add_verification_message(request, outcome, email)
        if request.user.is_authenticated:
            return redirect("accounts:profile")
        remember_pending(request, pending.get("id"), pending.get("email"), outcome != verification.FAILED)
        return redirect("accounts:verification_sent")


@method_decorator(never_cache, name="dispatch")
class LinkView(View):
    """A link from a mail: GET shows a button, POST applies the link."""

    template_name = None

    def get(self, request, token):
        return render(request, self.template_name, {"token": token, "claim": self.read(token)})

    def post(self, request, token):
        outcome, account = self.apply(request, token)
        return render(
            request, self.template_name, {"token": token, "outcome": outcome, "account": account}, status=self.status(outcome)
        )

    def status(self, outcome):
        return 200 if outcome in self.success else 400


class VerifyEmailView(LinkView):
    """The verification link: ``/accounts/verify/<token>/``."""

    template_name = "accounts/verify_email.html"
    success = {verification.VERIFIED, verification.ALREADY_VERIFIED}

    def read(self, token):
        return verification.read_verification_token(token)

    def apply(self, request, token):
        outcome, account = verification.confirm_email(token)
        if outcome in self.success:
            request.session.pop(PENDING_SESSION_KEY, None)
        return outcome, account


class EmailChangeConfirmView(LinkView):
    """The email-change link: ``/accounts/email/confirm/<token>/``."""

    template_name = "accounts/email_change_confirm.html"
    success = {verification.CHANGED}

    def read(self, token):
        return verification.read_email_change_token(token)

    def apply(self, request, token):
        return verification.apply_email_change(request, token)


@method_decorator(never_cache, name="dispatch")
class PasswordResetView(RateLimitMixin, FormView):
    """``/accounts/password/reset/``: the same answer whether or not the address is known.

    Rate limited (``reset_password``) per client address and per address asked for."""

    template_name = "accounts/password_reset.html"
    form_class = password_reset.PasswordResetRequestForm
    rate_limit_action = "reset_password"

    def rate_limit_key(self, form):
        # Every spelling of one address counts on one counter: its lock key.
        return store.login_lock_key(form.cleaned_data["email"])

    def form_valid(self, form):
        refusal = self.refuse_over_limit(form)
        if refusal is not None:
            return refusal
        password_reset.request_reset(self.request, form.cleaned_data["email"])
        return HttpResponseRedirect(reverse("accounts:password_reset_done"))


class PasswordResetConfirmView(auth_views.PasswordResetConfirmView):
    """``/accounts/password/reset/<uidb64>/<token>/``: Django's set-password form, once."""

    template_name = "accounts/password_reset_confirm.html"
    form_class = password_reset.SetPasswordForm
    token_generator = password_reset.token_generator
    success_url = reverse_lazy("accounts:password_reset_complete")

    def get_user(self, uidb64):
        try:
            account_id = urlsafe_base64_decode(uidb64).decode()
        except (TypeError, ValueError, OverflowError, UnicodeDecodeError):
            return None
        if not ACCOUNT_ID.fullmatch(account_id):
            return None
        account = store.get_account(account_id)
        return User.from_account(account) if account is not None else None

    def form_valid(self, form):
        try:
            response = super().form_valid(form)
        except STORE_REFUSALS as error:
            form.add_store_error(error)
            return self.form_invalid(form)
        # Saving the new password ended every session of the account (User.save): with
        # server-side sessions on the server, else through the session auth hash.
        return response
