"""The pages of email ownership: "check your inbox" with resend, the verification and
email-change links, and password reset by email; with ``ACCOUNTS_EMAIL_VERIFICATION_BY_CODE_ENABLED``
or ``ACCOUNTS_PASSWORD_RESET_BY_CODE_ENABLED``, the forms that take a mailed code instead.

Each link page shows a button on GET and applies the link on POST (a mail scanner that
follows links must not verify anything); what a link does lives in the flows
(:mod:`accounts.internal.flows.email_verification`, ``email_change`` and ``password_reset``),
which the API calls too. The verification page names the account it confirms and
has a second button for whoever did not sign up: it discards that sign-up.
"""

from django import forms
from django.contrib import messages
from django.contrib.auth import views as auth_views
from django.contrib.auth.mixins import LoginRequiredMixin
from django.http import HttpResponseRedirect
from django.shortcuts import redirect, render
from django.urls import reverse, reverse_lazy
from django.utils.decorators import method_decorator
from django.utils.translation import gettext_lazy as _
from django.views import View
from django.views.decorators.cache import never_cache
from django.views.decorators.debug import sensitive_post_parameters
from django.views.generic import FormView

from . import email_codes, password_reset, ratelimit, verification
from .adapter import get_adapter
from .after_response import RedirectThen
from .internal.flows import email_addresses, email_change, email_verification
from .internal.flows import password_reset as password_reset_flow
from .pending import PENDING_SESSION_KEY
from .ratelimit import RateLimitMixin


class CodeForm(forms.Form):
    """A code from a mail (:mod:`accounts.email_codes`), as typed: any case, with or without
    its dash."""

    error_messages = {
        email_verification.WRONG_CODE: _("This code is not right. Check the mail and try again."),
        email_verification.NO_TRIES_LEFT: _("This code was tried too often and no longer works. Ask for a new one."),
        email_verification.NO_CODE: _("This code has expired. Ask for a new one."),
    }

    code = forms.CharField(
        label=_("Code"),
        max_length=20,
        widget=forms.TextInput(attrs={"autocomplete": "one-time-code", "autofocus": True}),
    )

    def refuse(self, outcome: str) -> None:
        """Show why the code did nothing (an outcome of :mod:`~accounts.internal.flows.email_verification`)."""
        message = self.error_messages.get(outcome, self.error_messages[email_verification.NO_CODE])
        self.add_error("code", forms.ValidationError(message, code=outcome))


CODE_MESSAGES = {
    "verified": _("Your email address %(email)s is confirmed."),
    "reset_done": _("Your password has been reset. You can log in with it now."),
    verification.TAKEN: _("This email address has already been confirmed by another account."),
    verification.BUSY: _("The site is busy and nothing was saved. Please try again."),
    verification.STALE: _("Your account changed since the code was mailed: ask for a new one."),
}


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
        context = {"email": pending["email"], "outcome": outcome, "by_code": email_verification.by_code()}
        if context["by_code"]:
            context["form"] = CodeForm()
        return render(request, self.template_name, context)

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
        if email_verification.by_code():
            # "Check your inbox" takes the new code, and says what became of its mail.
            return redirect("accounts:verification_sent")
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
        done = "accounts:password_reset_code" if password_reset_flow.by_code() else "accounts:password_reset_done"
        return RedirectThen(reverse(done), requested.send_link)


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


@method_decorator(never_cache, name="dispatch")
class VerificationCodeView(View):
    """``/accounts/verify/code/`` (POST ``code``, with ``ACCOUNTS_EMAIL_VERIFICATION_BY_CODE_ENABLED``):
    confirm the address this session waits to prove with the code mailed to it; a wrong code
    is shown on "check your inbox" again, and counted (3 tries a code)."""

    http_method_names = ["post"]

    def post(self, request):
        form = CodeForm(request.POST)
        if not form.is_valid():
            return self.again(request, form)
        verified = email_verification.verify_code(request, code=form.cleaned_data["code"])
        if not verified.confirmed:
            if verified.outcome in CODE_MESSAGES:
                messages.error(request, CODE_MESSAGES[verified.outcome])
                return redirect("accounts:verification_sent")
            form.refuse(verified.outcome)
            return self.again(request, form)
        messages.success(request, CODE_MESSAGES["verified"] % {"email": verified.account.email})
        return redirect("accounts:profile" if request.user.is_authenticated else "accounts:login")

    def again(self, request, form):
        pending = request.session.get(PENDING_SESSION_KEY) or {"email": getattr(request.user, "email", "")}
        context = {"email": pending["email"], "outcome": verification.SENT, "by_code": True, "form": form}
        return render(request, VerificationSentView.template_name, context, status=400)


class EmailChangeCodeView(LoginRequiredMixin, FormView):
    """``/accounts/email/confirm/code/`` (with ``ACCOUNTS_EMAIL_VERIFICATION_BY_CODE_ENABLED``):
    type the code mailed to the new address to apply the pending email change, or to confirm
    the address this browser added (several addresses per account)."""

    template_name = "accounts/email_change_code.html"
    form_class = CodeForm

    def get_login_url(self):
        return get_adapter(self.request).get_login_url(self.request)

    def adding(self):
        """The address this browser added and waits for the code of, or ``None``."""
        found = email_codes.pending(self.request.session, email_codes.ADD_EMAIL)
        return found.email if found is not None else None

    def get_context_data(self, **kwargs):
        pending = self.request.user.account.pending_email
        return super().get_context_data(pending_email=pending, adding_email=self.adding(), **kwargs)

    def form_valid(self, form):
        adding = self.adding()
        if adding is not None:
            return self.address_code_typed(form, adding)
        changed = email_change.confirm_email_change_code(self.request, code=form.cleaned_data["code"])
        if changed.outcome != verification.CHANGED:
            form.refuse(changed.outcome)
            return self.render_to_response(self.get_context_data(form=form), status=400)
        get_adapter(self.request).add_success_message(self.request, "email_changed", email=changed.account.email)
        return redirect("accounts:profile")

    def address_code_typed(self, form, email):
        verified = email_addresses.verify_address_code(self.request, code=form.cleaned_data["code"])
        if verified.outcome != verification.VERIFIED:
            form.refuse(verified.outcome)
            return self.render_to_response(self.get_context_data(form=form), status=400)
        messages.success(self.request, CODE_MESSAGES["verified"] % {"email": email})
        return redirect("accounts:email_change")


@method_decorator(never_cache, name="dispatch")
@method_decorator(sensitive_post_parameters(), name="dispatch")
class PasswordResetCodeView(View):
    """``/accounts/password/reset/code/`` (with ``ACCOUNTS_PASSWORD_RESET_BY_CODE_ENABLED``):
    first the code mailed to this session (3 tries), then the new password; every session of
    the account ends, as with a link."""

    template_name = "accounts/password_reset_code.html"

    def get(self, request):
        user = password_reset_flow.code_user(request)
        form = password_reset.SetPasswordForm(user) if user is not None else CodeForm()
        return self.page(request, form)

    def post(self, request):
        user = password_reset_flow.code_user(request)
        if user is None:
            return self.code_typed(request, CodeForm(request.POST))
        form = password_reset.SetPasswordForm(user, request.POST)
        if not form.is_valid():
            return self.page(request, form, status=400)
        resetting = password_reset_flow.reset_password_by_code(
            request, code=None, password=form.cleaned_data["new_password1"]
        )
        if resetting.refusal is not None:
            form.add_store_error(resetting.refusal)
            return self.page(request, form, status=400)
        if resetting.outcome is not None:
            code_form = CodeForm()
            code_form.refuse(resetting.outcome)
            return self.page(request, code_form, status=400)
        messages.success(request, CODE_MESSAGES["reset_done"])
        return redirect("accounts:password_reset_complete")

    def code_typed(self, request, form):
        if not form.is_valid():
            return self.page(request, form, status=400)
        user, refusal = password_reset_flow.user_of_code(request, code=form.cleaned_data["code"])
        if user is None:
            form.refuse(refusal)
            return self.page(request, form, status=400)
        return redirect("accounts:password_reset_code")

    def page(self, request, form, status=200):
        return render(
            request, self.template_name, {"form": form, "code_form": isinstance(form, CodeForm)}, status=status
        )
