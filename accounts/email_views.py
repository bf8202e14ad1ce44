"""The pages of email ownership: "check your inbox" with resend, the verification and
email-change links, and password reset by email.

Each link page shows a button on GET and applies the link on POST (a mail scanner that
follows links must not verify anything); what a link does lives in the flows
(:mod:`accounts.internal.flows.email_verification`, ``email_change`` and ``password_reset``),
which the API calls too. The verification page names the account it confirms and
has a second button for whoever did not sign up: it discards that sign-up.
"""

from django.contrib import messages
from django.contrib.auth import views as auth_views
from django.http import HttpResponseRedirect
from django.shortcuts import redirect, render
from django.urls import reverse, reverse_lazy
from django.utils.decorators import method_decorator
from django.views import View
from django.views.decorators.cache import never_cache
from django.views.generic import FormView

from . import password_reset, ratelimit, verification
from .adapter import get_adapter
from .after_response import RedirectThen
from .internal.flows import email_change, email_verification
from .internal.flows import password_reset as password_reset_flow
from .pending import PENDING_SESSION_KEY
from .ratelimit import RateLimitMixin


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
        signed_in = request.user.is_authenticated
        resent = email_verification.resend_verification(request, account=request.user.account if signed_in else None)
        if resent.outcome == email_verification.NOTHING_PENDING:
            return redirect("accounts:login")
        if resent.outcome == email_verification.GONE:
            messages.warning(request, adapter.success_messages["signup_gone"] % {"email": resent.email})
            return redirect("accounts:signup")
        if resent.outcome == email_verification.ALREADY_VERIFIED:
            adapter.add_success_message(request, "already_verified", email=resent.email)
            return redirect("accounts:profile" if signed_in else "accounts:login")
        adapter.add_verification_message(request, resent.outcome, resent.email)
        return redirect("accounts:profile" if signed_in else "accounts:verification_sent")


@method_decorator(never_cache, name="dispatch")
class LinkView(View):
    """A link from a mail: GET shows a button, POST applies the link."""

    template_name = None
    success = ()
    extra_context = {}

    def get(self, request, token):
        return render(request, self.template_name, {"token": token, "claim": self.read(token), **self.extra_context})

    def post(self, request, token):
        applied = self.apply(request, token)
        context = {"token": token, "outcome": applied.outcome, "account": applied.account, **self.extra_context}
        return render(request, self.template_name, context, status=self.status(applied.outcome))

    def status(self, outcome):
        return 200 if outcome in self.success else 400


class VerifyEmailView(LinkView):
    """The verification link: ``/accounts/verify/<token>/``. The page names the account (its
    username, when it was created) and offers to discard it instead (:class:`DiscardSignupView`)."""

    template_name = "accounts/verify_email.html"
    success = {verification.VERIFIED, verification.ALREADY_VERIFIED}

    def read(self, token):
        return email_verification.read_key(key=token)

    def apply(self, request, token):
        return email_verification.verify_email(request, key=token, end_pending=False)


class DiscardSignupView(LinkView):
    """``/accounts/verify/<token>/discard/`` (POST): "I did not sign up": the unverified
    account the link names is deleted and its username released. GET shows the link's page."""

    template_name = "accounts/verify_email.html"
    success = {verification.DISCARDED}
    extra_context = {"discarding": True}

    def get(self, request, token):
        return redirect("accounts:verify_email", token=token)

    def apply(self, request, token):
        return email_verification.discard_signup(key=token)


class EmailChangeConfirmView(LinkView):
    """The email-change link: ``/accounts/email/confirm/<token>/``."""

    template_name = "accounts/email_change_confirm.html"
    success = {verification.CHANGED}

    def read(self, token):
        return email_change.read_key(key=token)

    def apply(self, request, token):
        return email_change.confirm_email_change(request, key=token)


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
            requested = password_reset_flow.request_password_reset(self.request, email=form.cleaned_data["email"])
        except ratelimit.RateLimited as error:
            ratelimit.refuse(form, error)
            return self.form_invalid(form)
        return RedirectThen(reverse("accounts:password_reset_done"), requested.send_link)


class PasswordResetConfirmView(auth_views.PasswordResetConfirmView):
    """``/accounts/password/reset/<uidb64>/<token>/``: Django's set-password form, once."""

    template_name = "accounts/password_reset_confirm.html"
    form_class = password_reset.SetPasswordForm
    token_generator = password_reset.token_generator
    success_url = reverse_lazy("accounts:password_reset_complete")

    def get_user(self, uidb64):
        return password_reset_flow.user_of_link(uidb64)

    def form_valid(self, form):
        password = form.cleaned_data["new_password1"]
        resetting = password_reset_flow.reset_password(self.request, user=form.user, password=password)
        if resetting.refusal is not None:
            form.add_store_error(resetting.refusal)
            return self.form_invalid(form)
        # The set-password page's key, kept in the session by Django's view, is spent.
        del self.request.session[auth_views.INTERNAL_RESET_SESSION_TOKEN]
        return HttpResponseRedirect(self.get_success_url())
