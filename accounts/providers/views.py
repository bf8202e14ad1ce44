"""The pages of identity providers: "Sign in with <name>", the provider's callback, the one
sign-up form of a first sign-in, and the profile's list (link another, unlink).

Each view parses its input, calls one flow (:mod:`.flows`) and renders what it returns.
"""

from http import HTTPStatus

from django.contrib import messages
from django.core.exceptions import ValidationError
from django.http import Http404
from django.shortcuts import redirect, render
from django.urls import reverse
from django.utils.decorators import method_decorator
from django.utils.http import url_has_allowed_host_and_scheme
from django.utils.translation import gettext_lazy as _
from django.views import View
from django.views.decorators.cache import never_cache
from django.views.generic import FormView, TemplateView

from .. import devices, sessions, timeline
from ..adapter import get_adapter
from ..exceptions import Busy, StaleItem
from ..forms import STORE_REFUSALS
from ..mfa.flows.reauthentication import ReauthenticationRequiredMixin
from ..views import AccountLoginRequiredMixin, signed_up
from . import flows, notices, oidc, store
from .forms import ProviderSignupForm

MESSAGES = {
    "refused": _("The sign-in with %(provider)s did not succeed. Please try again."),
    "unreachable": _("%(provider)s cannot be reached at the moment. Please try again later."),
    "expired": _("This sign-in has expired or was already used. Please start again."),
    "unknown_state": _(
        "This answer from %(provider)s is not for a sign-in started in this browser (or its link was altered). "
        "Please start again."
    ),
    "cancelled": _("The sign-in was cancelled at %(provider)s: it did not sign you in."),
    "provider_error": _("%(provider)s could not sign you in."),
    "missing_code": _("%(provider)s sent no sign-in code back. Please start again."),
    "invalid_code": _(
        "%(provider)s did not accept this sign-in's code (used already, or expired). Please start again."
    ),
    "not_allowed": _("This account cannot log in."),
    "linked": _("Signing in with %(provider)s now logs in to your account."),
    "unlinked": _("Signing in with %(provider)s no longer logs in to your account."),
    "taken": _("This %(provider)s sign-in is already linked to another account."),
    "last_way_in": _("This is your account's last way in: set a password or add a passkey before removing it."),
    "too_many": _("Your account has as many passkeys and sign-ins as it may have. Remove one first."),
    "stale": _("Your account changed meanwhile. Please try again."),
}


def _provider_or_404(provider_id: str) -> oidc.ProviderConfig:
    found = flows.provider(provider_id)
    if found is None:
        raise Http404("No such provider")
    return found


def _safe_next(request, value: str | None) -> str:
    if value and url_has_allowed_host_and_scheme(
        value, allowed_hosts={request.get_host()}, require_https=request.is_secure()
    ):
        return value
    return get_adapter(request).get_login_redirect_url(request)


def _to_provider(request, provider, next_url, purpose, refused_url):
    """Send the browser to ``provider`` for a new sign-in of ``purpose`` (the provider's
    discovery document unreadable: back to ``refused_url``, saying so)."""
    binding = flows.browser_binding(request.COOKIES.get(flows.BINDING_COOKIE))
    try:
        url = flows.begin(
            request.session,
            provider,
            redirect_uri=flows.callback_uri(request, provider),
            next_url=next_url,
            binding=binding,
            purpose=purpose,
        )
    except oidc.ProviderError:
        messages.error(request, MESSAGES["unreachable"] % {"provider": provider.name})
        return redirect(refused_url)
    response = redirect(url)
    response.set_cookie(**flows.binding_cookie(binding))
    return response


@method_decorator(never_cache, name="dispatch")
class ProviderLoginView(View):
    """POST: remember a new sign-in in this browser's session and go to the provider."""

    http_method_names = ["post"]

    def post(self, request, provider_id):
        provider = _provider_or_404(provider_id)
        next_url = _safe_next(request, request.POST.get("next"))
        return _to_provider(request, provider, next_url, flows.LOGIN, "accounts:login")


@method_decorator(never_cache, name="dispatch")
class CallbackView(View):
    """The provider's answer: the state is checked against this browser before the provider
    is asked anything, then the code is exchanged and the ID token verified before the
    session is read, so that the session's read brings the identity's lock along. A refused
    answer ends on a page saying why (400; 503 when the provider cannot be reached), or, for
    a sign-in begun by the API, at the app's page with ``?error=``."""

    def get(self, request, provider_id):
        provider = _provider_or_404(provider_id)
        state = request.GET.get("state") or ""
        try:
            identity = flows.verify_answer(
                provider,
                redirect_uri=flows.callback_uri(request, provider),
                state=state,
                binding=request.COOKIES.get(flows.BINDING_COOKIE),
                code=request.GET.get("code"),
                error=request.GET.get("error"),
                error_description=request.GET.get("error_description"),
            )
        except flows.CallbackRefused as refused:
            return self.refused(request, provider, state, refused.reason, refused.description)
        flows.read_identity_lock_with_session(request.session, identity)
        login = flows.take_state(request.session, provider, state)
        if login is None:
            return self.refused(request, provider, state, flows.EXPIRED)
        if login["purpose"] == flows.LINK:
            return self.link(request, provider, identity, login)
        outcome = flows.log_in(request, provider, identity, next_url=login["next"])
        if login.get("headless"):
            return self.ended_for_app(request, login, outcome)
        if outcome.result == flows.SIGNED_IN:
            get_adapter(request).add_success_message(request, "logged_in", username=outcome.user.display_name)
            response = redirect(login["next"])
            # This browser is now trusted for the account, as after a password.
            devices.remember(request, response, outcome.user.pk)
            return response
        if outcome.result == flows.SECOND_STEP:
            return redirect("accounts:mfa:authenticate")
        if outcome.result == flows.NEEDS_SIGNUP:
            return redirect("accounts:providers:signup")
        return self.error_page(
            request, provider, flows.EXPIRED if outcome.result == flows.ALREADY_USED else "not_allowed"
        )

    def ended_for_app(self, request, login, outcome):
        """A sign-in begun by the API ends at the app's page: signed in, or with a pending
        flow the app reads from ``auth/session`` (the second step, the sign-up form), or
        with ``?error=``."""
        if outcome.result in (flows.SIGNED_IN, flows.SECOND_STEP, flows.NEEDS_SIGNUP):
            response = redirect(login["next"])
            if outcome.result == flows.SIGNED_IN:
                devices.remember(request, response, outcome.user.pk)
            return response
        return redirect(
            flows.app_error_url(login["next"], "expired" if outcome.result == flows.ALREADY_USED else "not_allowed")
        )

    def link(self, request, provider, identity, login):
        if not request.user.is_authenticated:
            # Logged out since the link began.
            if login.get("headless"):
                return redirect(flows.app_error_url(login["next"], flows.EXPIRED, "connect"))
            return self.error_page(request, provider, flows.EXPIRED)
        account = request.user.account
        error = None
        try:
            flows.link(account, identity, origin=timeline.origin_of(request))
        except store.IdentityTaken:
            error = "taken"
        except store.TooManyIdentities:
            error = "too_many"
        except (StaleItem, Busy):
            error = "stale"
        else:
            notices.identity_linked(request, account, provider.name)
        if login.get("headless"):
            return redirect(flows.app_error_url(login["next"], error, "connect") if error else login["next"])
        if error:
            messages.error(request, MESSAGES[error] % {"provider": provider.name})
        else:
            messages.success(request, MESSAGES["linked"] % {"provider": provider.name})
        return redirect("accounts:providers:list")

    def refused(self, request, provider, state, reason, description=None):
        """The answer to a refused callback: the app's page with ``?error=<reason>`` for a
        sign-in begun by the API (its state, now dropped), or the app's
        ``socialaccount_login_error`` page for a state this site does not know when it has
        one (:func:`.flows.login_error_url`); else the page saying why."""
        app_page = flows.login_error_url(request, request.session, state, reason)
        if app_page is not None:
            return redirect(app_page)
        return self.error_page(request, provider, reason, description)

    def error_page(self, request, provider, reason, description=None):
        status = HTTPStatus.SERVICE_UNAVAILABLE if reason == flows.UNREACHABLE else HTTPStatus.BAD_REQUEST
        context = {
            "provider": provider,
            "reason": reason,
            "message": MESSAGES[reason] % {"provider": provider.name},
            "description": description,
        }
        return render(request, "accounts/providers/error.html", context, status=status)


@method_decorator(never_cache, name="dispatch")
class ProviderSignupView(FormView):
    """The one form of a first sign-in with a provider: the address and the username. The
    provider's address is offered; it is taken as verified only when the provider verified
    it and the site does not prevent enumeration (:func:`.flows.takes_provider_address`)."""

    template_name = "accounts/providers/signup.html"
    form_class = ProviderSignupForm

    def dispatch(self, request, *args, **kwargs):
        self.pending = flows.pending(request.session)
        if self.pending is None:
            messages.error(request, MESSAGES["expired"] % {"provider": ""})
            return redirect("accounts:login")
        self.provider = flows.provider(self.pending["provider"])
        if self.provider is None:
            raise Http404("No such provider")
        return super().dispatch(request, *args, **kwargs)

    def get_initial(self):
        email = self.pending.get("email") or ""
        username = self.pending.get("preferred_username") or email.partition("@")[0]
        return {"email": email, "username": username}

    def get_context_data(self, **kwargs):
        return super().get_context_data(provider=self.provider, **kwargs)

    def form_valid(self, form):
        try:
            account, _ = flows.sign_up(
                self.request.session,
                self.pending,
                email=form.cleaned_data["email"],
                username=form.cleaned_data["username"],
            )
        except store.IdentityTaken:
            # Another first sign-in of this identity won: sign in with the provider again.
            form.add_error(None, ValidationError(form.error_messages["identity_taken"], code="identity_taken"))
            return self.form_invalid(form)
        except STORE_REFUSALS as error:
            form.add_store_error(error)
            return self.form_invalid(form)
        response = signed_up(self.request, account)
        sessions.save_now(self.request)
        return response


@method_decorator(never_cache, name="dispatch")
class ProviderListView(AccountLoginRequiredMixin, TemplateView):
    """The profile's identity providers: those linked (each with a button to unlink) and
    the others (a button to link)."""

    template_name = "accounts/providers/list.html"

    def get_context_data(self, **kwargs):
        account = self.request.user.account
        linked, others = [], []
        held = store.identities_of(account)
        for provider in flows.providers():
            subjects = [subject for issuer, subject in held if issuer == provider.issuer]
            (linked if subjects else others).append({"provider": provider, "subjects": subjects})
        return super().get_context_data(linked=linked, others=others, **kwargs)


@method_decorator(never_cache, name="dispatch")
class ProviderLinkView(AccountLoginRequiredMixin, ReauthenticationRequiredMixin, View):
    """POST: link a sign-in with this provider to the signed-in account, after
    reauthentication: go to the provider, and the callback links what it proves."""

    http_method_names = ["post"]

    def post(self, request, provider_id):
        provider = _provider_or_404(provider_id)
        target = "accounts:providers:list"
        return _to_provider(request, provider, reverse(target), flows.LINK, target)


@method_decorator(never_cache, name="dispatch")
class ProviderUnlinkView(AccountLoginRequiredMixin, ReauthenticationRequiredMixin, View):
    """POST: unlink an identity (``subject`` of this provider), after reauthentication;
    refused when it is the account's last way in."""

    http_method_names = ["post"]

    def post(self, request, provider_id):
        provider = _provider_or_404(provider_id)
        account = request.user.account
        subject = request.POST.get("subject", "")
        try:
            flows.unlink(account, provider.issuer, subject, origin=timeline.origin_of(request))
        except flows.LastWayIn:
            messages.error(request, MESSAGES["last_way_in"])
        except (StaleItem, Busy):
            messages.error(request, MESSAGES["stale"])
        else:
            notices.identity_unlinked(request, account, provider.name)
            messages.success(request, MESSAGES["unlinked"] % {"provider": provider.name})
        return redirect("accounts:providers:list")
