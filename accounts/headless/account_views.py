"""The account operations of the API: configuration, session, login, sign-up, email
verification, password reset and change, reauthentication, the address, the sessions."""

from __future__ import annotations

import hashlib
from http import HTTPStatus
from typing import Any

from django.contrib.auth import logout
from django.core import signing
from django.http import HttpRequest
from django.utils.translation import gettext_lazy as _

from .. import password_reset, ratelimit, sessions, signup_fields, store, verification
from ..adapter import get_adapter
from ..form_errors import STORE_REFUSALS
from ..forms import SIGNUP_TOKEN_SALT, new_signup_token
from ..internal.flows import email_change, email_verification, password_change
from ..internal.flows import login as login_flow
from ..internal.flows import password_reset as password_reset_flow
from ..internal.flows import sessions as sessions_flow
from ..internal.flows import signup as signup_flow
from ..mfa.flows import reauthentication
from ..models import User
from ..pending import remember_pending
from ..providers import flows as provider_flows
from ..tables import Account
from . import responses
from .base import APIView
from .responses import Answer

IDEMPOTENCY_KEY_HEADER = "Idempotency-Key"
EMAIL_VERIFICATION_KEY_HEADER = "X-Email-Verification-Key"
PASSWORD_RESET_KEY_HEADER = "X-Password-Reset-Key"

MESSAGES = {
    "invalid_key": _("This link is not valid, or has expired."),
    "taken": _("Another account confirmed this address first."),
    "busy": _("The site is busy and nothing was saved. Please try again."),
    "incorrect_password": _("Your password was entered incorrectly. Please enter it again."),
    "not_your_address": _("This is not the address of your account."),
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


class ConfigView(APIView):
    """``GET config``: what this site offers: the login methods (``ACCOUNTS_LOGIN_METHODS``),
    login by code, the identity providers of ``ACCOUNTS_OIDC_PROVIDERS``
    (``socialaccount.providers``); ``phone`` among the login methods when the site logs in by
    number (allauth says no more of phone numbers in its ``config``)."""

    http_method_names = ["get"]

    def get(self, request: HttpRequest) -> Answer:
        login_methods = signup_fields.login_methods()
        account = {
            "login_methods": login_methods,
            "is_open_for_signup": True,
            "email_verification_by_code_enabled": False,
            "login_by_code_enabled": True,
            "password_reset_by_code_enabled": False,
        }
        # As allauth, none for a site logging in by phone only.
        by_name = tuple(method for method in login_methods if method != "phone")
        if by_name:
            account["authentication_method"] = AUTHENTICATION_METHODS[by_name]
        data = {
            "account": account,
            "socialaccount": {"providers": [responses.provider_data(each) for each in provider_flows.providers()]},
            "mfa": {"supported_types": ["recovery_codes", "totp", "webauthn"], "passkey_login_enabled": True},
            "usersessions": {"track_activity": False},
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
            # The password was right: this person may verify, and ask for the link again.
            remember_pending(request, outcome.account.id, outcome.account.email, verification.SENT)
            return responses.unauthenticated(request)
        if outcome.status == login_flow.WRONG_CREDENTIALS:
            form.refuse(outcome)
            return responses.form_errors(form, {"username": name_field})
        if outcome.status == login_flow.PENDING:
            return responses.unauthenticated(request)
        answer = responses.authenticated(request, outcome.user)
        answer.trusted_account = outcome.user.pk
        return answer


def signup_token(idempotency_key: str | None) -> str:
    """The sign-up form's signed token: from the ``Idempotency-Key`` (the same key, the same
    ClientRequestToken and account id: a resent sign-up gets the first one's answer), else
    a fresh one. The key is hashed: any text a client sends becomes a valid token."""
    if not idempotency_key:
        return new_signup_token()
    derived = hashlib.sha256(f"accounts.headless.signup:{idempotency_key}".encode()).hexdigest()[:32]
    return signing.TimestampSigner(salt=SIGNUP_TOKEN_SALT).sign(derived)


class SignupView(APIView):
    """``POST auth/signup``: ``email``, ``username``, ``password``, as ``ACCOUNTS_SIGNUP_FIELDS``
    asks (a site without usernames ignores a ``username`` sent, as allauth does: its sign-up
    form has no such field); the ``Idempotency-Key`` header makes a resend safe. Taken
    values are errors of their own field, all at once (from the one cancelled transaction);
    ``signup`` is rate limited as on the page."""

    http_method_names = ["post"]
    params = {"password1": "password", "password2": "password"}

    def post(self, request: HttpRequest) -> Answer:
        if request.user.is_authenticated:
            return conflict()
        password = self.text("password") or ""
        data = {
            "email": self.text("email") or "",
            "username": self.text("username") or "",
            "phone": self.text("phone") or "",
            "password1": password,
            "password2": password,
            "token": signup_token(request.headers.get(IDEMPOTENCY_KEY_HEADER)),
        }
        form = get_adapter(request).get_form_class("signup")(data=data)
        if not form.is_valid():
            return responses.form_errors(form, self.params)
        ratelimit.consume(request, "signup")
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
    ``POST`` (``key``): verify. Verifying does not log in: the app logs in next."""

    http_method_names = ["get", "post"]

    def get(self, request: HttpRequest) -> Answer:
        claim = email_verification.read_key(key=request.headers.get(EMAIL_VERIFICATION_KEY_HEADER, ""))
        if claim is None or claim[1] is None:
            return responses.error(MESSAGES["invalid_key"], "invalid", "key")
        email, account = claim
        data = {"email": email, "user": responses.user_data(User.from_account(account))}
        return Answer(data=data, meta={"is_authenticating": False})

    def post(self, request: HttpRequest) -> Answer:
        verified = email_verification.verify_email(request, key=self.text("key") or "", end_pending=True)
        if verified.confirmed:
            if request.user.is_authenticated:
                return responses.authenticated(request, request.user)
            return responses.unauthenticated(request)
        code = {verification.TAKEN: "taken", verification.BUSY: "busy"}.get(verified.outcome, "invalid_key")
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
    known or not; ``reset_password`` is rate limited as on the page."""

    http_method_names = ["post"]

    def post(self, request: HttpRequest) -> Answer:
        form = password_reset.PasswordResetRequestForm(data={"email": self.text("email") or ""})
        if not form.is_valid():
            return responses.form_errors(form)
        requested = password_reset_flow.request_password_reset(request, email=form.cleaned_data["email"])
        # Mailed once the answer is sent: a known address answers as fast as an unknown one.
        return Answer(then=requested.send_link)


class ResetPasswordView(APIView):
    """``GET auth/password/reset`` (``X-Password-Reset-Key``): whose key it is; ``POST``
    (``key``, ``password``): set the password; every session of the account ends (401)."""

    http_method_names = ["get", "post"]

    def get(self, request: HttpRequest) -> Answer:
        user = password_reset_flow.user_of_key(key=request.headers.get(PASSWORD_RESET_KEY_HEADER, ""))
        if user is None:
            return responses.error(MESSAGES["invalid_key"], "invalid_password_reset", "key")
        return Answer(data={"user": responses.user_data(user)})

    def post(self, request: HttpRequest) -> Answer:
        user = password_reset_flow.user_of_key(key=self.text("key") or "")
        if user is None:
            return responses.error(MESSAGES["invalid_key"], "invalid_password_reset", "key")
        password = self.text("password") or ""
        form = password_reset.SetPasswordForm(user, data={"new_password1": password, "new_password2": password})
        params = {"new_password1": "password", "new_password2": "password"}
        if not form.is_valid():
            return responses.form_errors(form, params)
        resetting = password_reset_flow.reset_password(request, user=user, password=form.cleaned_data["new_password1"])
        if resetting.refusal is not None:
            form.add_store_error(resetting.refusal)
            return responses.form_errors(form, params)
        return responses.unauthenticated(request)


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
    """``account/email``: the account's one address, a list of one, primary.

    ``GET`` lists it. ``POST`` (``email``) asks to change it, as the email page does (fresh
    reauthentication, ``change_email`` limit): a verified address changes when the link mailed
    to the new one is opened, so the list still shows the old one; an unverified one is
    replaced at once. With an ``Idempotency-Key``, a resend gets the first answer and makes
    no second change (:mod:`accounts.idempotency`). ``PUT`` (``email``) sends the
    verification link of the address again. ``PATCH`` (``email``, ``primary``) marks it
    primary: it always is. ``DELETE`` is refused (400): an account keeps its address.
    """

    http_method_names = ["get", "post", "put", "patch", "delete"]
    sensitive = ("post",)

    def get(self, request: HttpRequest) -> Answer:
        return Answer(data=responses.email_addresses(request.user))

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
            idempotency_key=request.headers.get(IDEMPOTENCY_KEY_HEADER),
        )
        if changing.refusal is not None:
            form.add_store_error(changing.refusal)
            return responses.form_errors(form)
        return Answer(data=responses.email_addresses(User.from_account(account)))

    def put(self, request: HttpRequest) -> Answer:
        account = request.user.account
        if not self.is_own(request):
            return responses.error(MESSAGES["not_your_address"], "invalid", "email")
        resent = email_verification.resend_verification(request, account=account)
        return Answer() if resent.outcome == verification.SENT else Answer(status=HTTPStatus.FORBIDDEN)

    def patch(self, request: HttpRequest) -> Answer:
        if not self.is_own(request) or self.input.get("primary") is not True:
            return responses.error(MESSAGES["not_your_address"], "invalid", "email")
        return Answer(data=responses.email_addresses(request.user))

    def delete(self, request: HttpRequest) -> Answer:
        return responses.error(MESSAGES["only_address"], "cannot_remove_primary_email", "email")

    def is_own(self, request: HttpRequest) -> bool:
        email = self.text("email")
        return email is not None and store.is_same_address(request.user.account, email)


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
        ended = sessions_flow.end_sessions(request, ids)
        if ended.logged_out:
            return responses.unauthenticated(request)
        return Answer(data=[self.session_data(info) for info in ended.remaining])

    def session_data(self, info: sessions.SessionInfo) -> dict:
        return {
            "id": responses.session_id(info.id),
            "user_agent": info.user_agent,
            # Not recorded: a session keeps no address (the spec asks for the field).
            "ip": "",
            "created_at": info.created.timestamp(),
            "last_seen_at": info.last_seen.timestamp(),
            "is_current": info.current,
        }
