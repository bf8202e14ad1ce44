"""The account operations of the API: configuration, session, login, sign-up, email
verification, password reset and change, reauthentication, the address, the sessions."""

from __future__ import annotations

from http import HTTPStatus
from typing import Any

from django.contrib.auth import logout
from django.core import signing
from django.http import HttpRequest, HttpResponse
from django.utils.translation import gettext_lazy as _

from .. import (
    email_codes,
    idempotency,
    password_reset,
    ratelimit,
    sessions,
    signup_fields,
    store,
    unsettled_signups,
    verification,
)
from ..adapter import get_adapter
from ..app_settings import app_settings
from ..exceptions import InvalidUniqueValue
from ..form_errors import STORE_REFUSALS
from ..forms import SIGNUP_TOKEN_SALT, new_signup_token
from ..internal.flows import email_addresses, email_change, email_verification, password_change
from ..internal.flows import login as login_flow
from ..internal.flows import password_reset as password_reset_flow
from ..internal.flows import sessions as sessions_flow
from ..internal.flows import signup as signup_flow
from ..mfa.flows import reauthentication
from ..middleware import OUTCOME_UNKNOWN, outcome_of
from ..models import User
from ..providers import flows as provider_flows
from ..tables import Account
from . import meta_warnings, responses
from .base import IDEMPOTENCY_KEY_HEADER, APIView
from .responses import Answer

EMAIL_VERIFICATION_KEY_HEADER = "X-Email-Verification-Key"
PASSWORD_RESET_KEY_HEADER = "X-Password-Reset-Key"

MESSAGES = {
    "invalid_key": _("This link is not valid, or has expired."),
    "incorrect_code": _("Incorrect code."),
    "too_many_attempts": _("This code was tried too often and no longer works. Ask for a new one."),
    "unknown_email": _("Unknown email address."),
    "unverified_primary_email": _("Your primary email address must be verified."),
    "taken": _("Another account confirmed this address first."),
    "busy": _("The site is busy and nothing was saved. Please try again."),
    "incorrect_password": _("Your password was entered incorrectly. Please enter it again."),
    "only_address": _("The address of your account cannot be removed; change it instead."),
    "mail_failed": _("The mail could not be sent. Please try again."),
}


def conflict() -> Answer:
    """409: the operation's flow is not pending, or the session is in the wrong state."""
    return Answer(status=HTTPStatus.CONFLICT)


def not_found() -> Answer:
    """404 with allauth's body."""
    return Answer(status=HTTPStatus.NOT_FOUND)


# allauth's ``authentication_method`` (kept in its ``config`` for older clients), by the
# login methods it stands for.
AUTHENTICATION_METHODS = {("email", "username"): "username_email", ("email",): "email", ("username",): "username"}


def tracks_activity() -> bool:
    """Whether the site keeps when each session was last seen (allauth's
    ``USERSESSIONS_TRACK_ACTIVITY``): sessions kept here, refreshed every
    ``ACCOUNTS_SESSION_TOUCH_INTERVAL``."""
    return sessions.in_use() and sessions.touch_interval() is not None


class ConfigView(APIView):
    """``GET config``: what this site offers, key by key as allauth's ``config`` says it:
    the login methods (``ACCOUNTS_LOGIN_METHODS``; ``phone`` among them when the site logs in
    by number, allauth says no more of phone numbers in its ``config``), sign-up open, login
    by code, verification and password reset by code as set, the identity providers of
    ``ACCOUNTS_OIDC_PROVIDERS`` (``socialaccount.providers``, by name), the second factors,
    and whether sessions are seen (``usersessions``)."""

    http_method_names = ["get"]

    def get(self, request: HttpRequest) -> Answer:
        login_methods = signup_fields.login_methods()
        account = {
            "login_methods": login_methods,
            "is_open_for_signup": True,
            "email_verification_by_code_enabled": app_settings.EMAIL_VERIFICATION_BY_CODE_ENABLED,
            "login_by_code_enabled": True,
            "password_reset_by_code_enabled": app_settings.PASSWORD_RESET_BY_CODE_ENABLED,
        }
        # As allauth, none for a site logging in by phone only.
        by_name = tuple(method for method in login_methods if method != "phone")
        if by_name:
            account["authentication_method"] = AUTHENTICATION_METHODS[by_name]
        providers = sorted(provider_flows.providers(), key=lambda provider: provider.name)
        data = {
            "account": account,
            "socialaccount": {"providers": [responses.provider_data(each) for each in providers]},
            "mfa": {"supported_types": ["recovery_codes", "totp", "webauthn"], "passkey_login_enabled": True},
            "usersessions": {"track_activity": tracks_activity()},
        }
        return Answer(data=data)


class SessionView(APIView):
    """``GET auth/session``: who is logged in (200) or the flows to log in (401);
    ``DELETE``: log out (401)."""

    http_method_names = ["get", "delete"]

    def get(self, request: HttpRequest) -> Answer:
        if request.user.is_authenticated:
            return responses.authenticated(request, request.user)
        return responses.unauthenticated(request)

    def delete(self, request: HttpRequest) -> Answer:
        logout(request)
        return responses.unauthenticated(request)


class LoginView(APIView):
    """``POST auth/login``: ``username`` or ``email``, and ``password``; with one login
    method (``ACCOUNTS_LOGIN_METHODS``), that one, required, as allauth's ``LoginInput``
    (``{"email"}``: a ``username`` sent is not read). The ``login_failed`` rate limit
    applies as on the login page (429); an account with a second factor answers 401 with
    the pending ``mfa_authenticate`` flow, an unverified one with ``verify_email``."""

    http_method_names = ["post"]

    def post(self, request: HttpRequest) -> Answer:
        if request.user.is_authenticated:
            return conflict()
        # One login method: that field, required. Several: the one sent (email, then phone).
        methods = signup_fields.login_methods()
        sent = [method for method in ("email", "phone") if method in methods and self.text(method) is not None]
        name_field = methods[0] if len(methods) == 1 else (sent[0] if sent else "username")
        data = {"username": self.text(name_field) or "", "password": self.text("password") or ""}
        form = get_adapter(request).get_form_class("login")(request, data=data)
        if not form.is_valid():
            return responses.form_errors(form, {"username": name_field})
        outcome = login_flow.log_in_with_password(
            request,
            login=form.cleaned_data["username"],
            password=form.cleaned_data["password"],
            redirect_to="",
            method={"method": "password", name_field: data["username"]},
        )
        if outcome.status == login_flow.RATE_LIMITED:
            raise outcome.refusal
        if outcome.status == login_flow.UNVERIFIED:
            # The password was right: this person may verify, and ask for the link (or a code) again.
            email_verification.unverified_login(request, outcome.account)
            return responses.unauthenticated(request)
        if outcome.status == login_flow.WRONG_CREDENTIALS:
            form.refuse(outcome)
            return responses.form_errors(form, {"username": name_field})
        # A right password that appears in a breach: the login goes on, told so (as the page).
        password = form.cleaned_data["password"]
        if outcome.status == login_flow.PENDING:
            return meta_warnings.about_password(responses.unauthenticated(request), password)
        answer = meta_warnings.about_password(responses.authenticated(request, outcome.user), password)
        answer.trusted_account = outcome.user.pk
        return answer


def signup_token(idempotency_key: idempotency.ClientKey | None) -> str:
    """The sign-up form's signed token: from the ``Idempotency-Key`` in its scope (the same
    key from the same caller, the same ClientRequestToken and account id: a resent sign-up
    gets the first one's answer), else a fresh one."""
    if idempotency_key is None:
        return new_signup_token()
    return signing.TimestampSigner(salt=SIGNUP_TOKEN_SALT).sign(idempotency_key.token)


class SignupView(APIView):
    """``POST auth/signup``: ``email``, ``username``, ``password``, as ``ACCOUNTS_SIGNUP_FIELDS``
    asks (a site without usernames ignores a ``username`` sent, as allauth does: its sign-up
    form has no such field); the ``Idempotency-Key`` header makes a resend safe. Taken
    values are errors of their own field, all at once (from the one cancelled transaction);
    ``signup`` is rate limited as on the page.

    A sign-up answered 503 with its outcome unknown is remembered by the browser
    (:mod:`accounts.unsettled_signups`): sent again from it without an ``Idempotency-Key``,
    it goes with the same token, as the HTML page's does."""

    http_method_names = ["post"]
    params = {"password1": "password", "password2": "password"}
    # The token (as the form cleaned it) of the sign-up this request sent to the store.
    sent_token: str | None = None

    def dispatch(self, request: HttpRequest, *args: Any, **kwargs: Any) -> HttpResponse:
        response = super().dispatch(request, *args, **kwargs)
        if self.sent_token is not None and response.status_code != HTTPStatus.SERVICE_UNAVAILABLE:
            unsettled_signups.forget(request, response)
        return response

    def unavailable(self, request: HttpRequest, error: Exception) -> HttpResponse:
        response = super().unavailable(request, error)
        if self.sent_token is not None and outcome_of(request, error) == OUTCOME_UNKNOWN:
            unsettled_signups.remember(request, response, self.sent_token)
        return response

    def post(self, request: HttpRequest) -> Answer:
        if request.user.is_authenticated:
            return conflict()
        password = self.text("password") or ""
        key = request.headers.get(IDEMPOTENCY_KEY_HEADER)
        remembered = None if key else unsettled_signups.form_token(request)
        data = {
            "email": self.text("email") or "",
            "username": self.text("username") or "",
            "phone": self.text("phone") or "",
            "password1": password,
            "password2": password,
            "token": remembered or signup_token(self.claimed_key(request)),
        }
        form = get_adapter(request).get_form_class("signup")(data=data)
        if not form.is_valid():
            return responses.form_errors(form, self.params)
        ratelimit.consume(request, "signup")
        self.sent_token = form.cleaned_data["token"]
        try:
            account = form.save(request)
        except STORE_REFUSALS as error:
            form.add_store_error(error)
            return responses.form_errors(form, self.params)
        return signed_up(request, account)


def signed_up(request: HttpRequest, account: Account, method: dict[str, Any] | None = None) -> Answer:
    """The answer to a sign-up saved as ``account`` (by a password, a passkey or a provider,
    ``method``): logged in (200, this browser trusted for it), or 401 with the pending
    ``verify_email`` flow."""
    completion = signup_flow.complete_signup(request, account=account, method=method)
    if not completion.logged_in:
        return responses.unauthenticated(request)
    answer = responses.authenticated(request, User.from_account(account))
    answer.trusted_account = account.id
    return answer


class VerifyEmailView(APIView):
    """``GET auth/email/verify`` (``X-Email-Verification-Key``): whom a key verifies;
    ``POST`` (``key``): verify. The key is a verification link's, an email-change link's, an
    added address's link's, or (with ``ACCOUNTS_EMAIL_VERIFICATION_BY_CODE_ENABLED``) the
    code this session waits for (409 when it waits for none). Verifying the sign-up this session keeps pending goes on with
    its login, as allauth's ``verify_email`` stage does (200, or 401 with the second factor
    pending); a key opened anywhere else logs nobody in (401)."""

    http_method_names = ["get", "post"]

    def get(self, request: HttpRequest) -> Answer:
        key = request.headers.get(EMAIL_VERIFICATION_KEY_HEADER, "")
        if self.is_code(key):
            read = email_verification.read_code(request, code=key)
            if read.outcome != email_verification.RIGHT_CODE:
                return self.refused(read.outcome)
            email, account = read.email, read.account
        else:
            claim = (
                email_verification.read_key(key=key)
                or email_change.claimed_change(key=key)
                or email_addresses.read_key(key=key)
            )
            if claim is None or claim[1] is None:
                return responses.error(MESSAGES["invalid_key"], "invalid", "key")
            email, account = claim
        data = {"email": email, "user": responses.user_data(User.from_account(account))}
        return Answer(data=data, meta={"is_authenticating": False})

    def post(self, request: HttpRequest) -> Answer:
        key = self.text("key") or ""
        if self.is_code(key):
            pending = email_verification.pending_code(request)
            if pending is not None and pending.purpose == email_codes.ADD_EMAIL:
                verified = email_addresses.verify_address_code(request, code=key)
            elif pending is not None and pending.purpose == email_codes.CHANGE_EMAIL:
                verified = email_change.confirm_email_change_code(request, code=key)
            else:
                verified = email_verification.verify_code(request, code=key)
        elif email_change.read_key(key=key) is not None:
            verified = email_change.confirm_email_change(request, key=key)
        elif email_addresses.is_address_key(key=key):
            verified = email_addresses.verify_address(request, key=key)
        else:
            verified = email_verification.verify_email(request, key=key, end_pending=True)
        if verified.login is not None and verified.login.status == login_flow.DONE:
            # This session's own sign-up, verified: its login went on, as allauth's does.
            return responses.authenticated(request, verified.login.user)
        if verified.confirmed or verified.outcome == verification.CHANGED:
            if not request.user.is_authenticated:
                return responses.unauthenticated(request)
            account = verified.account
            # The user as the key left it, when it was this session's own (its new address).
            mine = account is not None and account.id == request.user.pk
            return responses.authenticated(request, User.from_account(account) if mine else request.user)
        return self.refused(verified.outcome)

    def is_code(self, key: str) -> bool:
        """Whether ``key`` is judged as a mailed code (the one this session waits for; 409
        when none): codes are on, and it is no link's key (staff still mail links)."""
        return email_verification.by_code() and not email_verification.is_link_key(key)

    def refused(self, outcome: str) -> Answer:
        """The error answering a key or code that verified nothing (409: no code pending)."""
        if outcome == email_verification.NO_CODE:
            return conflict()
        if outcome == email_verification.WRONG_CODE:
            return responses.error(MESSAGES["incorrect_code"], "incorrect_code", "key")
        if outcome == email_verification.NO_TRIES_LEFT:
            return responses.error(MESSAGES["too_many_attempts"], "too_many_attempts", "key")
        code = {verification.TAKEN: "taken", verification.BUSY: "busy"}.get(outcome, "invalid_key")
        return responses.error(MESSAGES[code], "invalid" if code == "invalid_key" else code, "key")


class ResendVerificationView(APIView):
    """``POST auth/email/verify/resend``: send the pending sign-up's link again (409 when
    none is pending, 429 within the ``resend_verification`` limit)."""

    http_method_names = ["post"]

    def post(self, request: HttpRequest) -> Answer:
        resent = email_verification.resend_verification(request)
        if resent.outcome in (
            email_verification.NOTHING_PENDING,
            email_verification.GONE,
            verification.ALREADY_VERIFIED,
        ):
            return conflict()
        if resent.outcome == verification.TOO_SOON:
            return Answer(status=HTTPStatus.TOO_MANY_REQUESTS)
        if resent.outcome == verification.FAILED:
            return responses.error(MESSAGES["mail_failed"], "mail_failed", status=HTTPStatus.SERVICE_UNAVAILABLE)
        return Answer()


class RequestPasswordView(APIView):
    """``POST auth/password/request`` (``email``): the same answer whether the address is
    known or not; ``reset_password`` is rate limited as on the page. With
    ``ACCOUNTS_PASSWORD_RESET_BY_CODE_ENABLED``, 401 with the flow ``password_reset_by_code``
    pending (its code goes to this session), as allauth answers."""

    http_method_names = ["post"]

    def post(self, request: HttpRequest) -> Answer:
        form = password_reset.PasswordResetRequestForm(data={"email": self.text("email") or ""})
        if not form.is_valid():
            return responses.form_errors(form)
        requested = password_reset_flow.request_password_reset(request, email=form.cleaned_data["email"])
        # Mailed once the answer is sent: a known address answers as fast as an unknown one.
        if password_reset_flow.by_code():
            # allauth's answer: 401, the flow password_reset_by_code pending.
            answer = responses.unauthenticated(request)
            answer.then = requested.send_link
            return answer
        return Answer(then=requested.send_link)


class ResetPasswordView(APIView):
    """``GET auth/password/reset`` (``X-Password-Reset-Key``): whose key it is; ``POST``
    (``key``, ``password``): set the password; every session of the account ends (401). With
    ``ACCOUNTS_PASSWORD_RESET_BY_CODE_ENABLED`` the key is the code this session waits for
    (409 when it waits for none; a wrong one is counted)."""

    http_method_names = ["get", "post"]
    params = {"new_password1": "password", "new_password2": "password"}

    def get(self, request: HttpRequest) -> Answer:
        user = self.user_of(request, request.headers.get(PASSWORD_RESET_KEY_HEADER, ""))
        if isinstance(user, Answer):
            return user
        return Answer(data={"user": responses.user_data(user)})

    def post(self, request: HttpRequest) -> Answer:
        key = self.text("key") or ""
        user = self.user_of(request, key)
        if isinstance(user, Answer):
            return user
        password = self.text("password") or ""
        form = password_reset.SetPasswordForm(user, data={"new_password1": password, "new_password2": password})
        if not form.is_valid():
            return responses.form_errors(form, self.params)
        if password_reset_flow.by_code():
            # The code was judged just now: the reset reads its account again, as typed right.
            resetting = password_reset_flow.reset_password_by_code(
                request, code=None, password=form.cleaned_data["new_password1"]
            )
        else:
            resetting = password_reset_flow.reset_password(
                request, user=user, password=form.cleaned_data["new_password1"]
            )
        if resetting.outcome is not None:
            return self.refused(resetting.outcome)
        if resetting.refusal is not None:
            form.add_store_error(resetting.refusal)
            return responses.form_errors(form, self.params)
        return responses.unauthenticated(request)

    def user_of(self, request: HttpRequest, key: str) -> User | Answer:
        """The user whose password ``key`` (a link's key, or this session's code) resets, or
        the answer refusing it (a wrong code is counted)."""
        if password_reset_flow.by_code():
            user, refusal = password_reset_flow.user_of_code(request, code=key)
            return user if user is not None else self.refused(refusal)
        user = password_reset_flow.user_of_key(key=key)
        return user if user is not None else responses.error(MESSAGES["invalid_key"], "invalid_password_reset", "key")

    def refused(self, outcome: str | None) -> Answer:
        """The answer to a code that names nobody: 409 when none is pending, else 400 on ``key``."""
        if outcome == email_verification.WRONG_CODE:
            return responses.error(MESSAGES["incorrect_code"], "incorrect_code", "key")
        if outcome == email_verification.NO_TRIES_LEFT:
            return responses.error(MESSAGES["too_many_attempts"], "too_many_attempts", "key")
        return conflict()


class AuthenticatedView(APIView):
    """An operation for a logged-in session only (401 with the flows to log in otherwise)."""

    def answer(self, request: HttpRequest, handler, *args: Any, **kwargs: Any):
        if not request.user.is_authenticated:
            return super().answer(request, lambda request, *a, **k: responses.unauthenticated(request))
        return super().answer(request, handler, *args, **kwargs)


class ReauthenticatedView(AuthenticatedView):
    """A sensitive operation: the session's proof must be fresh (``ACCOUNTS_REAUTHENTICATION_TIMEOUT``),
    else 401 with the ``reauthenticate`` flows (as the HTML pages send to reauthentication).
    ``sensitive``: the methods it guards."""

    sensitive: tuple[str, ...] = ("post",)

    def answer(self, request: HttpRequest, handler, *args: Any, **kwargs: Any):
        if (
            request.method.lower() in self.sensitive
            and request.user.is_authenticated
            and not reauthentication.is_fresh(request)
        ):
            return APIView.answer(
                self, request, lambda request, *a, **k: responses.reauthentication_required(request, request.user)
            )
        return super().answer(request, handler, *args, **kwargs)


class ReauthenticateView(AuthenticatedView):
    """``POST auth/reauthenticate`` (``password``): prove it again (``reauthenticate`` limit)."""

    http_method_names = ["post"]

    def post(self, request: HttpRequest) -> Answer:
        if not reauthentication.with_password(request, self.text("password") or ""):
            return responses.error(MESSAGES["incorrect_password"], "incorrect_password", "password")
        login_flow.record_method(request, {"method": "password", "reauthenticated": True})
        return responses.authenticated(request, request.user)


class EmailView(ReauthenticatedView):
    """``account/email``: the account's address and, while a change waits for its proof, the
    new one (``verified: false``, ``primary: false``), as allauth lists an address added to
    be changed to (``ACCOUNT_CHANGE_EMAIL``).

    ``GET`` lists them. ``POST`` (``email``) asks to change the address, as the email page
    does (fresh reauthentication, ``change_email`` limit): a verified address changes when
    the link (or code) mailed to the new one is used (``auth/email/verify``); an unverified
    one is replaced at once. With an ``Idempotency-Key``, a resend gets the first answer and
    makes no second change (:mod:`accounts.idempotency`). ``PUT`` (``email``) sends the
    proof of that address again: the pending change's, or the unverified address's (403
    when none is sent). ``PATCH`` (``email``, ``primary``) marks the address primary: it
    always is; the pending one cannot be (400). ``DELETE`` (``email``) of the pending address
    cancels the change; the account's own address cannot be removed (400).
    """

    http_method_names = ["get", "post", "put", "patch", "delete"]
    sensitive = ("post",)

    def get(self, request: HttpRequest) -> Answer:
        return Answer(data=self.addresses(request.user.account))

    def post(self, request: HttpRequest) -> Answer:
        user = request.user
        form = get_adapter(request).get_form_class("email_change")(user, data={"email": self.text("email") or ""})
        # The API proves the person by a fresh reauthentication, not a password field.
        form.fields.pop("password", None)
        if not form.is_valid():
            return responses.form_errors(form)
        account = user.account
        changing = email_change.request_email_change(
            request,
            account=account,
            email=form.cleaned_data["email"],
            idempotency_key=self.claimed_key(request),
        )
        if changing.refusal is not None:
            form.add_store_error(changing.refusal)
            return responses.form_errors(form)
        if changing.kind == email_change.RESENT:
            account = store.get_account(account.id) or account
        return Answer(data=self.addresses(account))

    def put(self, request: HttpRequest) -> Answer:
        account = request.user.account
        if self.is_pending(account):
            sent = email_change.resend_email_change(request, account=account)
        elif self.is_own(request):
            sent = email_verification.resend_verification(request, account=account).outcome
        else:
            return responses.error(MESSAGES["unknown_email"], "unknown_email", "email")
        return Answer() if sent == verification.SENT else Answer(status=HTTPStatus.FORBIDDEN)

    def patch(self, request: HttpRequest) -> Answer:
        account = request.user.account
        if self.is_pending(account):
            return responses.error(MESSAGES["unverified_primary_email"], "unverified_primary_email", "email")
        if not self.is_own(request) or self.input.get("primary") is not True:
            return responses.error(MESSAGES["unknown_email"], "unknown_email", "email")
        return Answer(data=self.addresses(account))

    def delete(self, request: HttpRequest) -> Answer:
        account = request.user.account
        if self.is_pending(account):
            cancelling = email_change.cancel_email_change(account=account, session=request.session)
            if cancelling.refusal is not None:
                return responses.error(MESSAGES["busy"], "busy", "email")
            return Answer(data=self.addresses(account))
        if self.is_own(request):
            return responses.error(MESSAGES["only_address"], "cannot_remove_primary_email", "email")
        return responses.error(MESSAGES["unknown_email"], "unknown_email", "email")

    def addresses(self, account: Account) -> list[dict]:
        return responses.email_addresses(User.from_account(account))

    def is_own(self, request: HttpRequest) -> bool:
        """Whether the input ``email`` is the account's address (in any case or width)."""
        return same_address(request.user.account.email, self.text("email"))

    def is_pending(self, account: Account) -> bool:
        """Whether the input ``email`` is the address a change of ``account`` waits for."""
        return account.pending_email is not None and same_address(account.pending_email, self.text("email"))


def same_address(address: str, typed: str | None) -> bool:
    """Whether ``typed`` is ``address`` (the same email lock key); never for what cannot be
    an address."""
    if typed is None:
        return False
    constraint = store.constraint_for("email")
    try:
        return constraint.key_for(typed) == constraint.key_for(address)
    except InvalidUniqueValue:
        return False


class ChangePasswordView(ReauthenticatedView):
    """``POST account/password/change`` (``current_password``, ``new_password``): as the
    password page; this session stays logged in, every other one ends."""

    http_method_names = ["post"]
    params = {"old_password": "current_password", "new_password1": "new_password", "new_password2": "new_password"}

    def post(self, request: HttpRequest) -> Answer:
        user = request.user
        new_password = self.text("new_password") or ""
        data = {
            "old_password": self.text("current_password") or "",
            "new_password1": new_password,
            "new_password2": new_password,
        }
        form = get_adapter(request).get_form_class("password_change")(user, data=data)
        if not form.is_valid():
            return responses.form_errors(form, self.params)
        changing = password_change.change_password(request, user=user, password=form.cleaned_data["new_password1"])
        if changing.refusal is not None:
            form.add_store_error(changing.refusal)
            return responses.form_errors(form, self.params)
        return responses.authenticated(request, user)


class SessionsView(AuthenticatedView):
    """``auth/sessions``: ``GET`` lists the account's sessions; ``DELETE`` (``sessions``,
    their ids) ends them (the current one too, which logs this session out)."""

    http_method_names = ["get", "delete"]

    def get(self, request: HttpRequest) -> Answer:
        listed = sessions_flow.list_sessions(request) or []
        return Answer(data=[self.session_data(info) for info in listed])

    def delete(self, request: HttpRequest) -> Answer:
        wanted = self.input.get("sessions")
        if not isinstance(wanted, list) or not all(
            isinstance(item, int) and not isinstance(item, bool) for item in wanted
        ):
            return responses.error(_("Enter a list of session ids."), "invalid", "sessions")
        listed = sessions_flow.list_sessions(request) or []
        ids = {info.id for info in listed if responses.session_id(info.id) in wanted}
        if any(info.id in ids and not info.current for info in listed) and not reauthentication.is_fresh(request):
            # Ending other sessions is sensitive, as on the page (logging this one out is not):
            # a stolen session must not log its owner out everywhere.
            return responses.reauthentication_required(request, request.user)
        ended = sessions_flow.end_sessions(request, ids)
        if ended.logged_out:
            return responses.unauthenticated(request)
        return Answer(data=[self.session_data(info) for info in ended.remaining])

    def session_data(self, info: sessions.SessionInfo) -> dict:
        """allauth's ``Session``: ``last_seen_at`` only where activity is tracked (``config``'s
        ``usersessions.track_activity``); ``ip``, the address it logged in from."""
        data = {
            "id": responses.session_id(info.id),
            "user_agent": info.user_agent,
            "ip": info.ip,
            "created_at": info.created.timestamp(),
            "is_current": info.current,
        }
        if tracks_activity():
            data["last_seen_at"] = info.last_seen.timestamp()
        return data
