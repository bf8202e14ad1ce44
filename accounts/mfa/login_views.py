"""The pages that prove who someone is: the second step of a login, a login with a
passkey, reauthentication, signing up with a passkey, and the options of every passkey
ceremony (JSON, for ``webauthn.js``)."""

from urllib.parse import urlencode

from django.conf import settings
from django.contrib import messages
from django.contrib.sessions.exceptions import SessionInterrupted
from django.core.exceptions import ValidationError
from django.http import Http404, HttpRequest, HttpResponse, HttpResponseBadRequest, JsonResponse
from django.shortcuts import redirect, render, resolve_url
from django.utils.decorators import method_decorator
from django.utils.http import url_has_allowed_host_and_scheme
from django.utils.translation import gettext_lazy as _
from django.views import View
from django.views.decorators.cache import never_cache
from django.views.decorators.debug import sensitive_post_parameters
from django.views.generic import FormView

from .. import devices, ratelimit, sessions
from ..adapter import get_adapter
from ..app_settings import app_settings
from ..forms import STORE_REFUSALS, CurrentPasswordMixin
from ..internal.flows import login as login_flow
from ..ratelimit import RateLimitMixin
from ..views import AccountLoginRequiredMixin, signed_up
from . import passkeys, store, trust
from .flows import authenticators, login, reauthentication, signup
from .forms import (
    PasskeyAddForm,
    PasskeyForm,
    PasskeySignupForm,
    ReauthenticateForm,
    ReauthenticateTotpForm,
    SecondStepForm,
    SecondStepPasskeyForm,
)

MESSAGES = {
    "expired": _("Your login took too long. Please log in again."),
    "already_used": _("This code or passkey was already used. Please log in again."),
    "damaged": _(
        "The second factor of this account is damaged, so it cannot be checked. Nothing was "
        "changed: please ask the site's staff for help."
    ),
}


def _safe_next(request, url, default):
    if url and url_has_allowed_host_and_scheme(url, {request.get_host()}, require_https=request.is_secure()):
        return url
    return resolve_url(default)


def _logged_in(request, user, next_url, trusted=False):
    """Welcome ``user``, logged in by a second step or a passkey, and trust this browser for
    the account (its device cookie), as a login with the password alone does: guesses from
    elsewhere never lock it out. ``trusted``: the person ticked "trust this browser" at the
    second step, whose next logins skip it (:mod:`accounts.mfa.trust`)."""
    adapter = get_adapter(request)
    adapter.add_success_message(request, "logged_in", username=user.display_name)
    response = redirect(login_flow.redirect_url(request, next_url))
    devices.remember(request, response, user.pk)
    if trusted:
        trust.trust(request, response, user.account)
    return response


@method_decorator(never_cache, name="dispatch")
class SecondStepView(RateLimitMixin, FormView):
    """The second step of a login: one text field taking a code of the authenticator app or
    a recovery code, and a passkey button. Wrong codes count against ``mfa_attempt``."""

    template_name = "accounts/mfa/second_step.html"
    form_class = SecondStepForm

    def dispatch(self, request, *args, **kwargs):
        if request.user.is_authenticated:
            return redirect(get_adapter(request).get_login_redirect_url(request))
        if login.staged(request) is None:
            messages.warning(request, MESSAGES["expired"])
            return redirect("accounts:login")
        return super().dispatch(request, *args, **kwargs)

    def get_context_data(self, **kwargs):
        staged = login.staged(self.request)
        return super().get_context_data(
            has_passkeys=bool(staged and staged["passkeys"]),
            passkey_form=SecondStepPasskeyForm(auto_id="passkey_%s"),
            **kwargs,
        )

    def form_valid(self, form):
        # Where the password step said to go, read before the sign-in replaces the session.
        staged = login.staged(self.request)
        next_url = staged and staged["next"]
        try:
            outcome, user = login.authenticate_with_code(self.request, form.cleaned_data["code"])
        except ratelimit.RateLimited as error:
            ratelimit.refuse(form, error)
            return self.form_invalid(form)
        if outcome in (login.WRONG_CODE, login.USED_CODE):
            error = "wrong_code" if outcome == login.WRONG_CODE else "already_used"
            form.add_error("code", ValidationError(form.error_messages[error], code=error))
            return self.form_invalid(form)
        return _second_step_done(self.request, outcome, user, next_url, trusted=form.cleaned_data.get("trust", False))


def _second_step_done(request, outcome, user, next_url=None, trusted=False):
    if outcome == login.SIGNED_IN:
        return _logged_in(request, user, next_url, trusted)
    messages.error(
        request, MESSAGES[{login.ALREADY_USED: "already_used", login.DAMAGED: "damaged"}.get(outcome, "expired")]
    )
    return redirect("accounts:login")


class PasskeyAnswerView(View):
    """A POST of the browser's answer to a passkey ceremony (the hidden ``credential``)."""

    http_method_names = ["post"]

    def post(self, request, *args, **kwargs):
        return _without_challenge_cookie(request, self.answer(request))

    def answer(self, request):
        form = PasskeyForm(request.POST)
        if not form.is_valid():
            return HttpResponseBadRequest("No passkey answer.")
        try:
            return self.answered(request, form.cleaned_data["credential"])
        except passkeys.PasskeyRefused as refusal:
            if not _session_still_saved(request):
                # Another request signed in with this challenge meanwhile (the same answer
                # sent twice), deleting the session that held it: this one was used already.
                messages.error(request, MESSAGES["already_used"])
                return redirect("accounts:login")
            messages.error(request, refusal.message)
            return redirect(self.refused_url(request))


def _without_challenge_cookie(request: HttpRequest, response: HttpResponse) -> HttpResponse:
    """``response``, dropping the signed challenge's cookie the request came with: answered
    or refused, its challenge is of no use any more."""
    if passkeys.CHALLENGE_COOKIE in request.COOKIES:
        response.delete_cookie(passkeys.CHALLENGE_COOKIE, samesite="Lax")
    return response


def _session_still_saved(request):
    """Save the session now (its challenge taken out): ``False`` when it was ended meanwhile,
    and then this request's copy is dropped (and its cookie with it), as nothing is left to
    save."""
    try:
        sessions.save_now(request)
    except SessionInterrupted:
        request.session = type(request.session)()
        return False
    return True


@method_decorator(never_cache, name="dispatch")
class SecondStepPasskeyView(PasskeyAnswerView):
    """The second step of a login, with a passkey of the account."""

    def answered(self, request, credential):
        staged = login.staged(request)
        next_url = staged and staged["next"]
        outcome, user = login.authenticate_with_passkey(request, credential)
        form = SecondStepPasskeyForm(request.POST)
        trusted = form.is_valid() and form.cleaned_data.get("trust", False)
        return _second_step_done(request, outcome, user, next_url, trusted)

    def refused_url(self, request):
        return "accounts:mfa:authenticate"


@method_decorator(never_cache, name="dispatch")
class PasskeyLoginView(PasskeyAnswerView):
    """A login with a passkey alone (the login page's button, or its autofill)."""

    def answered(self, request, credential):
        # Before request.user: the session's read then reads the credential's lock too.
        assertion = login.read_passkey_answer(request, credential)
        if request.user.is_authenticated:
            return redirect(get_adapter(request).get_login_redirect_url(request))
        outcome, user = login.login_with_passkey(request, assertion)
        return _second_step_done(request, outcome, user, request.POST.get("next"))

    def refused_url(self, request):
        return "accounts:login"


@method_decorator(never_cache, name="dispatch")
class PasskeyOptionsView(View):
    """The options of a passkey ceremony (POST, JSON), with a new challenge in the session:
    ``login`` (any passkey of this site), ``second_factor`` and ``reauthenticate`` (the
    account's), ``register`` (a new one for the signed-in account), ``signup``."""

    http_method_names = ["post"]

    def post(self, request, purpose):
        """The options as JSON; an anonymous ceremony's challenge travels in its signed
        cookie (:data:`~accounts.mfa.passkeys.CHALLENGE_COOKIE`), so no session is written."""
        build = {
            passkeys.LOGIN: self.for_login,
            passkeys.SECOND_FACTOR: self.for_second_factor,
            passkeys.REAUTHENTICATE: self.for_reauthenticate,
            passkeys.REGISTER: self.for_register,
            passkeys.SIGNUP: self.for_signup,
        }.get(purpose)
        if build is None:
            raise Http404("No such passkey ceremony.")
        try:
            options = build(request)
        except passkeys.PasskeyRefused as refusal:
            # No relying party is configured: passkeys cannot be used at all.
            return JsonResponse({"error": "unavailable", "message": str(refusal.message)}, status=503)
        if options is None:
            return JsonResponse({"error": "forbidden"}, status=403)
        response = HttpResponse(options.json, content_type="application/json")
        if options.challenge_cookie is not None:
            response.set_cookie(
                passkeys.CHALLENGE_COOKIE,
                options.challenge_cookie,
                max_age=passkeys.CHALLENGE_SECONDS,
                secure=settings.SESSION_COOKIE_SECURE,
                httponly=True,
                samesite="Lax",
            )
        return response

    def for_login(self, request):
        if not request.user.is_authenticated:
            return passkeys.authentication_options(request, passkeys.LOGIN)
        return None

    def for_second_factor(self, request):
        account = None if request.user.is_authenticated else login.staged_account(request)
        if account is not None and account.passkeys:
            return passkeys.authentication_options(request, passkeys.SECOND_FACTOR, allowed=account.passkeys)
        return None

    def for_reauthenticate(self, request):
        account = request.user.account if request.user.is_authenticated else None
        if account is not None and account.passkeys:
            return passkeys.authentication_options(request, passkeys.REAUTHENTICATE, allowed=account.passkeys)
        return None

    def for_register(self, request):
        user = request.user
        allowed = user.is_authenticated and reauthentication.is_fresh(request)
        if not (allowed and authenticators.may_set_up(user.account)):
            return None
        try:
            return authenticators.passkey_options(request, user.account)
        except store.TooManyPasskeys:
            return None

    def for_signup(self, request):
        if app_settings.PASSKEY_SIGNUP and signup.pending(request):
            return signup.options(request)
        return None


@method_decorator([never_cache, sensitive_post_parameters("password")], name="dispatch")
class ReauthenticateView(AccountLoginRequiredMixin, RateLimitMixin, FormView):
    """Confirm who you are before a sensitive change, in a way the account has
    (:func:`~accounts.mfa.flows.reauthentication.offered`): the password, a passkey, a code
    of the authenticator app (:mod:`.reauthentication_views`), or a mailed code."""

    template_name = "accounts/mfa/reauthenticate.html"
    form_class = ReauthenticateForm
    # The name of this view's form on the page, beside the other ways' empty forms.
    form_name = "password_form"

    def get_form_kwargs(self):
        return {**super().get_form_kwargs(), "user": self.request.user}

    def get_context_data(self, **kwargs):
        context = super().get_context_data(**kwargs)
        offered = reauthentication.offered(self.request.user)
        return {
            "password_form": ReauthenticateForm(user=self.request.user),
            "totp_form": ReauthenticateTotpForm(),
            **context,
            self.form_name: context["form"],
            "has_passkeys": reauthentication.PASSKEY in offered,
            "has_password": reauthentication.PASSWORD in offered,
            "has_totp": reauthentication.TOTP in offered,
            "offers_code": reauthentication.CODE in offered,
            "next": self.request.GET.get("next", ""),
        }

    def form_valid(self, form):
        if "password" not in form.fields:
            # No password to type: only the account's passkey confirms it (its own view).
            return self.form_invalid(form)
        try:
            right = reauthentication.with_password(self.request, form.cleaned_data["password"])
        except ratelimit.RateLimited as error:
            ratelimit.refuse(form, error)
            return self.form_invalid(form)
        if not right:
            form.add_error("password", CurrentPasswordMixin.error_messages["password_incorrect"])
            return self.form_invalid(form)
        return redirect(_safe_next(self.request, self.request.GET.get("next"), "accounts:profile"))


@method_decorator(never_cache, name="dispatch")
class ReauthenticatePasskeyView(AccountLoginRequiredMixin, PasskeyAnswerView):
    """Confirm who you are with a passkey of the account."""

    def answered(self, request, credential):
        try:
            reauthentication.with_passkey(request, credential)
        except STORE_REFUSALS:
            messages.error(request, MESSAGES["already_used"])
            return redirect(self.refused_url(request))
        return redirect(_safe_next(request, request.POST.get("next"), "accounts:profile"))

    def refused_url(self, request):
        return f"{resolve_url('accounts:mfa:reauthenticate')}?{urlencode({'next': request.POST.get('next', '')})}"


class PasskeySignupMixin:
    """Signing up with a passkey: only with ``ACCOUNTS_PASSKEY_SIGNUP``, only logged out."""

    def dispatch(self, request, *args, **kwargs):
        if not app_settings.PASSKEY_SIGNUP:
            raise Http404("Signing up with a passkey is off.")
        if request.user.is_authenticated:
            return redirect(get_adapter(request).get_signup_redirect_url(request))
        return super().dispatch(request, *args, **kwargs)


@method_decorator(never_cache, name="dispatch")
class PasskeySignupView(PasskeySignupMixin, RateLimitMixin, FormView):
    """Sign up with a passkey, first page: the email address and the username (counted
    against the ``signup`` limit)."""

    template_name = "accounts/mfa/passkey_signup.html"
    form_class = PasskeySignupForm
    rate_limit_action = "signup"

    def form_valid(self, form):
        response = super().form_valid(form)  # counts the signup limit (429 past it)
        if response.status_code == 302:
            data = form.cleaned_data
            signup.start(self.request, data["email"], data["username"], data["token"])
        return response

    def get_success_url(self):
        return resolve_url("accounts:mfa:passkey_signup_create")


@method_decorator(never_cache, name="dispatch")
class PasskeySignupCreateView(PasskeySignupMixin, View):
    """Sign up with a passkey, second page: the browser creates the passkey, and the account
    is created with it in one transaction."""

    template_name = "accounts/mfa/passkey_signup_create.html"

    def dispatch(self, request, *args, **kwargs):
        if app_settings.PASSKEY_SIGNUP and signup.pending(request) is None:
            return redirect("accounts:mfa:passkey_signup")
        return super().dispatch(request, *args, **kwargs)

    def get(self, request):
        return render(request, self.template_name, {"pending": signup.pending(request), "form": PasskeyAddForm()})

    def post(self, request):
        form = PasskeyAddForm(request.POST)
        pending = signup.pending(request)
        if form.is_valid():
            try:
                account, _created = signup.complete(request, form.cleaned_data["credential"], form.cleaned_data["name"])
            except passkeys.PasskeyRefused as refusal:
                form.add_error(None, refusal.message)
            except STORE_REFUSALS as error:
                return self.first_page_again(request, pending, error)
            else:
                return _without_challenge_cookie(request, signed_up(request, account))
        return render(request, self.template_name, {"pending": pending, "form": form})

    def first_page_again(self, request, pending, error):
        """The first page with what the store refused (a taken email or username) on its fields."""
        form = PasskeySignupForm(data={**pending, "token": ""})
        form.is_valid()
        form.add_store_error(error)
        return render(request, PasskeySignupView.template_name, {"form": form})
