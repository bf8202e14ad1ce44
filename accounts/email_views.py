"""The pages of email ownership: "check your inbox" with resend, the verification and
email-change links, and password reset by email.

Each link page shows a button on GET and applies the link on POST (a mail scanner that
follows links must not verify anything); what a link does lives in :mod:`accounts.verification`
and :mod:`accounts.password_reset`. The verification page names the account it confirms and
has a second button for whoever did not sign up: it discards that sign-up.
"""

import re

from django.contrib import messages
from django.contrib.auth import views as auth_views
from django.shortcuts import redirect, render
from django.urls import reverse, reverse_lazy
from django.utils.decorators import method_decorator
from django.utils.http import urlsafe_base64_decode
from django.views import View
from django.views.decorators.cache import never_cache
from django.views.generic import FormView

from . import password_reset, ratelimit, store, verification
from .adapter import get_adapter
from .after_response import RedirectThen
from .forms import STORE_REFUSALS
from .models import User
from .pending import PENDING_SESSION_KEY, remember_pending
from .ratelimit import RateLimitMixin

# What an account id can look like (hex today); anything else is not looked up.
ACCOUNT_ID = re.compile(r"[\w-]{1,64}")


@method_decorator(never_cache, name="dispatch")
class VerificationSentView(View):
    """ "Check your inbox": the address the link went to (or why it was not sent), and a
    button to send it again (POST, at most once a minute per account)."""

    template_name = "accounts/verification_sent.html"

    def get(self, request):
        pending = request.session.get(PENDING_SESSION_KEY)
        if pending is None and not request.user.is_authenticated:
            return redirect("accounts:login")
        pending = pending or {"email": request.user.email}
        outcome = pending.get("outcome", verification.SENT)
        return render(request, self.template_name, {"email": pending["email"], "outcome": outcome})

    def post(self, request):
        adapter = get_adapter(request)
        pending = request.session.get(PENDING_SESSION_KEY) or {}
        if request.user.is_authenticated:
            account = request.user.account
        elif not pending:
            return redirect("accounts:login")
        else:
            account = store.get_account(pending["id"])
        if account is None:
            # Expired, or discarded from its link: nothing waits for a mail any more.
            request.session.pop(PENDING_SESSION_KEY, None)
            messages.warning(request, adapter.success_messages["signup_gone"] % {"email": pending["email"]})
            return redirect("accounts:signup")
        if store.is_verified(account):
            # Confirmed meanwhile (in another tab, say): there is no link to send.
            request.session.pop(PENDING_SESSION_KEY, None)
            adapter.add_success_message(request, "already_verified", email=account.email)
            return redirect("accounts:profile" if request.user.is_authenticated else "accounts:login")
        outcome = verification.resend_verification(request, account)
        adapter.add_verification_message(request, outcome, account.email)
        if request.user.is_authenticated:
            return redirect("accounts:profile")
        remember_pending(request, account.id, account.email, outcome)
        return redirect("accounts:verification_sent")


@method_decorator(never_cache, name="dispatch")
class LinkView(View):
    """A link from a mail: GET shows a button, POST applies the link."""

    template_name = None
    success = ()
    extra_context = {}

    def get(self, request, token):
        return render(request, self.template_name, {"token": token, "claim": self.read(token), **self.extra_context})

    def post(self, request, token):
        outcome, account = self.apply(request, token)
        context = {"token": token, "outcome": outcome, "account": account, **self.extra_context}
        return render(request, self.template_name, context, status=self.status(outcome))

    def status(self, outcome):
        return 200 if outcome in self.success else 400


class VerifyEmailView(LinkView):
    """The verification link: ``/accounts/verify/<token>/``. The page names the account (its
    username, when it was created) and offers to discard it instead (:class:`DiscardSignupView`)."""

    template_name = "accounts/verify_email.html"
    success = {verification.VERIFIED, verification.ALREADY_VERIFIED}

    def read(self, token):
        return verification.claimed_account(token)

    def apply(self, request, token):
        return verification.confirm_email(token)


class DiscardSignupView(LinkView):
    """``/accounts/verify/<token>/discard/`` (POST): "I did not sign up": the unverified
    account the link names is deleted and its username released. GET shows the link's page."""

    template_name = "accounts/verify_email.html"
    success = {verification.DISCARDED}
    extra_context = {"discarding": True}

    def get(self, request, token):
        return redirect("accounts:verify_email", token=token)

    def apply(self, request, token):
        return verification.discard_signup(token)


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
    """``/accounts/password/reset/``: the same answer whether or not the address is known,
    in the same time: the link is made and mailed once the answer is sent.

    Rate limited (``reset_password``) per client address and per address asked for (every
    spelling of one address on one counter: its lock key); the owner's own browser (its
    device cookie) counts on a budget of its own (:func:`accounts.password_reset.count_reset_request`)."""

    template_name = "accounts/password_reset.html"
    form_class = password_reset.PasswordResetRequestForm

    def form_valid(self, form):
        try:
            reset = password_reset.count_reset_request(self.request, form.cleaned_data["email"])
        except ratelimit.RateLimited as error:
            ratelimit.refuse(form, error)
            return self.form_invalid(form)
        request = self.request
        done = reverse("accounts:password_reset_done")
        return RedirectThen(done, lambda: password_reset.request_reset(request, reset))


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
        # server-side sessions on the server, else through the session auth hash. It also
        # cancelled a pending email change; the address is told.
        password_reset.send_password_changed_notice(self.request, form.user.account, reset=True)
        return response
