"""The account pages: signup, login, logout, profile, email/username/password change, deletion.

Views never talk to DynamoDB: forms save through :mod:`accounts.store`, and what the store
refuses comes back as form errors (a 200 that keeps what was typed).
"""

from django.contrib import messages
from django.contrib.auth import views as auth_views
from django.contrib.auth.mixins import LoginRequiredMixin
from django.http import Http404, HttpResponseRedirect
from django.shortcuts import redirect
from django.urls import reverse
from django.utils.decorators import method_decorator
from django.views import csrf
from django.views.decorators.cache import never_cache
from django.views.decorators.debug import sensitive_post_parameters
from django.views.generic import FormView, TemplateView, View

from . import (
    breached_passwords,
    devices,
    ratelimit,
    sessions,
    signup_fields,
    store,
    timeline,
    unsettled_signups,
    verification,
)
from .adapter import get_adapter
from .exceptions import Busy
from .forms import STORE_REFUSALS
from .internal.flows import delete, email_change, email_verification, password_change, username_change
from .internal.flows import login as login_flow
from .internal.flows import sessions as sessions_flow
from .internal.flows import signup as signup_flow
from .mfa.flows.reauthentication import ReauthenticationRequiredMixin
from .middleware import OUTCOME_UNKNOWN, RETRY_AFTER_SECONDS, is_unavailable, outcome_of
from .models import User
from .ratelimit import RateLimitMixin


@method_decorator(never_cache, name="dispatch")
class StoreFormView(FormView):
    """A form view whose form saves through the store; refusals become form errors.

    The form class is the adapter's for ``form_name`` (``ACCOUNTS_FORMS``). A subclass
    overrides ``apply(form)`` to call its flow and render the outcome (:meth:`refused` for
    what the store refused), or defines ``form_saved(form, saved)``: what follows the form's
    own save.
    """

    form_name = None

    def get_form_class(self):
        return get_adapter(self.request).get_form_class(self.form_name)

    def form_valid(self, form):
        try:
            response = self.apply(form)
            # A session write (a login, a new key) that fails is answered here, with the form.
            sessions.save_now(self.request)
        except STORE_REFUSALS as error:
            form.add_store_error(error)
            return self.form_invalid(form)
        except Exception as error:
            if is_unavailable(error) and outcome_of(self.request, error) == OUTCOME_UNKNOWN:
                return self.outcome_unknown(form)
            raise
        return response

    def outcome_unknown(self, form):
        """503 with the form as it was sent (what was typed, passwords aside, and the same
        one-time token): the change may or may not have been saved, and sending the form
        again is safe (the engine's ClientRequestToken makes the resend idempotent)."""
        form.data = self.request.POST.copy()
        form.add_error(None, get_adapter(self.request).validation_error("outcome_unknown"))
        response = self.render_to_response(self.get_context_data(form=form), status=503)
        response["Retry-After"] = str(RETRY_AFTER_SECONDS)
        return response

    def apply(self, form):
        """Save the valid ``form`` and answer; a view that calls a flow overrides this."""
        return self.form_saved(form, form.save(**self.get_save_kwargs()))

    def refused(self, form, refusal):
        """The form again, with what the store refused (one of ``STORE_REFUSALS``)."""
        form.add_store_error(refusal)
        return self.form_invalid(form)

    def get_save_kwargs(self):
        return {}


class AccountLoginRequiredMixin(LoginRequiredMixin):
    """Signed-in users only; everyone else goes to the adapter's login URL."""

    def get_login_url(self):
        return get_adapter(self.request).get_login_url(self.request)


class UserFormMixin(AccountLoginRequiredMixin):
    """A form about the signed-in user (the form takes the user first, and the request: its
    current-password check is counted, see :func:`accounts.forms.count_current_password`)."""

    def get_form_kwargs(self):
        return {"user": self.request.user, "request": self.request, **super().get_form_kwargs()}


@method_decorator(sensitive_post_parameters("password1", "password2"), name="dispatch")
class SignupView(RateLimitMixin, StoreFormView):
    """Create an account and log in, or (mode "mandatory", or any mode with
    ``ACCOUNTS_PREVENT_ENUMERATION``) land on "check your inbox". A second post of the same
    form lands on success too.

    With ``ACCOUNTS_PREVENT_ENUMERATION`` a registered address answers exactly as a new one:
    no error on the email field, whatever else the form gets wrong, the same unverified
    sign-up and the same page; the one difference is the mail, which only its owner reads
    (a notice instead of a link, see :func:`accounts.verification.send_verification`).

    Each valid post counts against the ``signup`` rate limit (429 past it).

    A sign-up whose outcome is unknown (503) is remembered by the browser
    (:mod:`accounts.unsettled_signups`): the next post, from the 503 form or a new page, is
    sent with its token, so a sign-up that was saved goes on (the verification mail again)
    instead of finding its own username taken."""

    template_name = "accounts/signup.html"
    form_name = "signup"
    rate_limit_action = "signup"

    def dispatch(self, request, *args, **kwargs):
        if request.user.is_authenticated:
            return redirect(get_adapter(request).get_signup_redirect_url(request))
        return super().dispatch(request, *args, **kwargs)

    def get_form_kwargs(self):
        kwargs = super().get_form_kwargs()
        token = unsettled_signups.form_token(self.request)
        if token is not None and "data" in kwargs:
            kwargs["data"] = kwargs["data"].copy()
            kwargs["data"]["token"] = token
        return kwargs

    def form_valid(self, form):
        response = super().form_valid(form)
        if response.status_code == 503:  # the outcome is unknown (StoreFormView.outcome_unknown)
            unsettled_signups.remember(self.request, response, form.cleaned_data["token"])
        elif response.status_code != 429:  # 429: over the limit, it never reached the store
            unsettled_signups.forget(self.request, response)
        return response

    def get_save_kwargs(self):
        return {"request": self.request}

    def form_saved(self, form, account):
        return signed_up(self.request, account)


def signed_up(request, account):
    """Where a new account goes: logged in (verified, or verification not required), else to
    "check your inbox"; the verification mail is sent when the address is not verified."""
    completion = signup_flow.complete_signup(request, account=account)
    if completion.pending is not None:
        # A stage first: the code texted to its phone number.
        return redirect(completion.pending.url_name)
    if not completion.logged_in:
        return redirect("accounts:verification_sent")
    response = _welcomed(request, User.from_account(account))
    if completion.mail is not None:
        get_adapter(request).add_verification_message(request, completion.mail, account.email)
    return response


def _welcomed(request, user):
    """Welcome the new account, logged in, and trust this browser for it (its device cookie)."""
    adapter = get_adapter(request)
    adapter.add_success_message(request, "signed_up", username=user.display_name)
    response = redirect(adapter.get_signup_redirect_url(request))
    devices.remember(request, response, user.pk)
    return response


class LoginView(RateLimitMixin, auth_views.LoginView):
    """Log in with a username or an email address; ``?next=`` is honoured when safe.

    The view calls the login flow (:func:`accounts.internal.flows.login.log_in_with_password`)
    and renders its outcome: a refusal on the form (past the ``login_failed`` rate limit, a
    429), a stage to pass, or logged in."""

    template_name = "accounts/login.html"
    redirect_authenticated_user = True

    def get_form_class(self):
        return get_adapter(self.request).get_form_class("login")

    def get_success_url(self):
        # The one decision of where a login lands, shared with the second step's pages.
        return login_flow.redirect_url(self.request, self.get_redirect_url())

    def form_valid(self, form):
        password = form.cleaned_data["password"]
        outcome = login_flow.log_in_with_password(
            self.request, login=form.cleaned_data["username"], password=password, redirect_to=self.get_success_url()
        )
        if outcome.refused:
            form.refuse(outcome)
            return self.form_invalid(form)
        if breached_passwords.times_breached(password):
            # NIST SP 800-63B-4: the login goes on, and the person is asked to change it.
            messages.warning(self.request, breached_passwords.LOGIN_WARNING)
        if outcome.status == login_flow.PENDING:
            # The password is right, but no session logs in before the stages it needs.
            return redirect(outcome.pending.url_name)
        user = outcome.user
        response = HttpResponseRedirect(self.get_success_url())
        get_adapter(self.request).add_success_message(self.request, "logged_in", username=user.display_name)
        # This browser is now trusted for the account: guesses from elsewhere never lock it out.
        devices.remember(self.request, response, user.pk)
        return response

    def form_invalid(self, form):
        account = form.unverified_account
        if account is not None:
            # The password was right: this person may ask for the link (or a code) again.
            email_verification.unverified_login(self.request, account)
        return super().form_invalid(form)

    def get_context_data(self, **kwargs):
        form = kwargs.get("form")
        unverified = form is not None and form.unverified_account is not None
        by_code = email_verification.by_code()
        return super().get_context_data(unverified=unverified, unverified_by_code=unverified and by_code, **kwargs)


class LogoutView(auth_views.LogoutView):
    """Log out (POST only)."""

    def get_default_redirect_url(self):
        return get_adapter(self.request).get_logout_redirect_url(self.request)

    def post(self, request, *args, **kwargs):
        response = super().post(request, *args, **kwargs)
        get_adapter(request).add_success_message(request, "logged_out")
        return response


class AccountSessionsMixin:
    """A page about the signed-in account's sessions: the session load reads them all,
    with the account, in its one request (see :mod:`accounts.internal.flows.sessions`)."""

    # How many of the account's newest security events the same read brings (the profile's).
    events_read = 0

    def dispatch(self, request, *args, **kwargs):
        sessions_flow.read_with_session(request, events=self.events_read)
        return super().dispatch(request, *args, **kwargs)


@method_decorator(never_cache, name="dispatch")
class ProfileView(AccountSessionsMixin, AccountLoginRequiredMixin, TemplateView):
    """The signed-in account: email, username, links to change them, its sessions and its
    security timeline (the last :data:`~accounts.timeline.SHOWN` events, read with the
    sessions in the page's one ``Query``)."""

    template_name = "accounts/profile.html"
    events_read = timeline.SHOWN

    def get_context_data(self, **kwargs):
        account = self.request.user.account
        context = super().get_context_data(
            email_verified=store.is_verified(account),
            pending_email=account.pending_email,
            email_by_code=email_verification.by_code(),
            **kwargs,
        )
        listed = sessions_flow.list_sessions(self.request)
        if listed is not None:
            context["sessions"] = listed
        events = sessions_flow.security_events(self.request)
        context["events"] = timeline.events_of(events) if events is not None else timeline.recent_events(account.id)
        return context


@method_decorator(never_cache, name="dispatch")
class EndOtherSessionsView(AccountSessionsMixin, ReauthenticationRequiredMixin, AccountLoginRequiredMixin, View):
    """Log out every other session of the account (POST only): one ``Query`` (with the
    session load) and one ``TransactWriteItems`` (:func:`accounts.logouts.log_out_sessions`)."""

    http_method_names = ["post"]

    def post(self, request):
        sessions_flow.end_other_sessions(request)
        get_adapter(request).add_success_message(request, "other_sessions_ended")
        return redirect("accounts:profile")


class EmailChangeView(ReauthenticationRequiredMixin, RateLimitMixin, UserFormMixin, StoreFormView):
    """Ask to change the email address (current password required): a link goes to the new
    address and a notice to the old one; the address changes when the link is opened. An
    unverified address is simply replaced, and the new one gets a verification link. The
    current address, typed again, cancels a pending change.

    Rate limited (``change_email``, per account, counted by the flow): each request mails a
    stranger's inbox. Typing the current address again sends no mail and is not limited
    (:func:`accounts.internal.flows.email_change.request_email_change`)."""

    template_name = "accounts/email_change.html"
    form_name = "email_change"

    def apply(self, form):
        try:
            changing = email_change.request_email_change(
                self.request, account=form.user.account, email=form.cleaned_data["email"]
            )
        except ratelimit.RateLimited as error:
            ratelimit.refuse(form, error)
            return self.form_invalid(form)
        if changing.refusal is not None:
            return self.refused(form, changing.refusal)
        adapter = get_adapter(self.request)
        email = changing.email
        if changing.kind == email_change.KEPT:
            if changing.cancelled is None:
                adapter.add_success_message(self.request, "email_changed", email=form.user.account.email)
            else:
                adapter.add_success_message(self.request, "email_change_cancelled", email=changing.cancelled)
        elif changing.kind == email_change.VERIFICATION:
            if email_verification.by_code():
                # "Check your inbox" takes the code, and says what became of its mail.
                return redirect("accounts:verification_sent")
            adapter.add_verification_message(self.request, changing.mail, email)
        elif changing.mail == verification.SENT and email_verification.by_code():
            return redirect("accounts:email_change_code")
        elif changing.mail == verification.SENT:
            adapter.add_success_message(self.request, "email_change_sent", email=email)
        else:
            code = "email_change_too_soon" if changing.mail == verification.TOO_SOON else "email_change_failed"
            messages.warning(self.request, adapter.success_messages[code] % {"email": email})
        return redirect("accounts:profile")


@method_decorator(never_cache, name="dispatch")
class EmailChangeCancelView(AccountLoginRequiredMixin, View):
    """Cancel the pending email change (POST only): one guarded write, and its link stops
    working. Not rate limited: it sends no mail."""

    http_method_names = ["post"]

    def post(self, request):
        adapter = get_adapter(request)
        cancelling = email_change.cancel_email_change(account=request.user.account, session=request.session)
        if cancelling.refusal is not None:
            messages.error(request, adapter.error_messages["busy" if isinstance(cancelling.refusal, Busy) else "stale"])
        elif cancelling.cancelled is not None:
            adapter.add_success_message(request, "email_change_cancelled", email=cancelling.cancelled)
        return redirect("accounts:profile")


class UsernameChangeView(ReauthenticationRequiredMixin, RateLimitMixin, UserFormMixin, StoreFormView):
    """Change the username (a fresh proof and the current password required); the account's
    address is told. A current password past the ``reauthenticate`` limit is answered 429."""

    template_name = "accounts/username_change.html"
    form_name = "username_change"

    def dispatch(self, request, *args, **kwargs):
        if not signup_fields.has_username():
            raise Http404("This site has no usernames (ACCOUNTS_SIGNUP_FIELDS).")
        return super().dispatch(request, *args, **kwargs)

    def apply(self, form):
        changing = username_change.change_username(
            self.request, account=form.user.account, username=form.cleaned_data["username"]
        )
        if changing.refusal is not None:
            return self.refused(form, changing.refusal)
        adapter = get_adapter(self.request)
        username = changing.account.username
        if username:
            adapter.add_success_message(self.request, "username_changed", username=username)
        else:
            adapter.add_success_message(self.request, "username_removed")
        return redirect("accounts:profile")


@method_decorator(sensitive_post_parameters(), name="dispatch")
class PasswordChangeView(ReauthenticationRequiredMixin, RateLimitMixin, UserFormMixin, StoreFormView):
    """Change the password; this session stays logged in, every other one ends, a pending
    email change is cancelled, and the account's address is told."""

    template_name = "accounts/password_change.html"
    form_name = "password_change"

    def apply(self, form):
        changing = password_change.change_password(
            self.request, user=form.user, password=form.cleaned_data["new_password1"]
        )
        if changing.refusal is not None:
            return self.refused(form, changing.refusal)
        adapter = get_adapter(self.request)
        adapter.add_success_message(self.request, "password_changed")
        if changing.cancelled:
            adapter.add_success_message(self.request, "email_change_cancelled", email=changing.cancelled)
        return redirect("accounts:profile")


@method_decorator(sensitive_post_parameters(), name="dispatch")
class AccountDeleteView(ReauthenticationRequiredMixin, RateLimitMixin, UserFormMixin, StoreFormView):
    """Delete the account (current password required) and log out."""

    template_name = "accounts/delete.html"
    form_name = "delete"

    def apply(self, form):
        deleting = delete.delete_account(self.request, account=form.user.account)
        if deleting.refusal is not None:
            return self.refused(form, deleting.refusal)
        adapter = get_adapter(self.request)
        adapter.add_success_message(self.request, "account_deleted")
        return redirect(adapter.get_delete_redirect_url(self.request))


def csrf_failure(request, reason=""):
    """``CSRF_FAILURE_VIEW``: a stale second copy of the signup or login form lands on success.

    Logging in rotates the CSRF token, so when a browser sends the signup or login form
    twice (double click, resend) after the first answer arrived, the second copy fails the
    CSRF check. Its sender is already logged in by the first copy: they are sent where
    the first went. Nothing is processed. Every other failure is Django's 403 page.
    """
    landing = {
        reverse("accounts:signup"): "get_signup_redirect_url",
        reverse("accounts:login"): "get_login_redirect_url",
    }.get(request.path)
    if landing and request.method == "POST" and _is_authenticated(request):
        adapter = get_adapter(request)
        return redirect(getattr(adapter, landing)(request))
    return csrf.csrf_failure(request, reason)


def _is_authenticated(request):
    try:
        return request.user.is_authenticated
    except Exception as error:
        # CSRF failures are answered outside the view, where the 503 middleware cannot
        # catch an outage: without DynamoDB, treat the sender as logged out (plain 403).
        if is_unavailable(error):
            return False
        raise
