"""The second-factor operations of the API: the login's second step (and the trust of the
browser after it), reauthentication with a code, and the account's authenticators
(authenticator app, recovery codes)."""

from __future__ import annotations

import json
import time
from http import HTTPStatus

from django.http import HttpRequest, HttpResponse
from django.utils.translation import gettext_lazy as _

from .. import store as account_store
from ..app_settings import app_settings
from ..exceptions import StaleItem
from ..internal.flows import login as login_flow
from ..mfa import passkeys, recovery_codes, shown_codes, store, totp, trust
from ..mfa.flows import authenticators, reauthentication
from ..mfa.flows import login as second_step
from ..mfa.stages import SecondFactorStage
from . import clients, responses
from .account_views import AuthenticatedView, ReauthenticatedView, conflict, not_found
from .base import APIView
from .responses import Answer

# The offer to trust this browser, kept in the session the second step logged in, until when
# (allauth's pending ``mfa_trust`` flow, answered by auth/2fa/trust).
TRUST_OFFER_SESSION_KEY = "accounts_mfa_trust_offer"

MESSAGES = {
    "incorrect_code": _("Incorrect code."),
    "already_used": _("This code or passkey was already used. Please log in again."),
    "stale": _("Your account changed meanwhile, so nothing was saved. Please try again."),
    "not_a_boolean": _("Enter true or false."),
}


def _timestamp(moment) -> float | None:
    return moment.timestamp() if moment is not None else None


def totp_data(account) -> dict:
    """allauth's ``TOTPAuthenticator``."""
    created = _timestamp(account.totp_created) or _timestamp(account.created)
    return {"type": "totp", "created_at": created, "last_used_at": None}


def recovery_codes_data(account, codes: list[str] | None = None) -> dict:
    """allauth's ``RecoveryCodesAuthenticator``; with ``codes`` (the unused codes this
    session may read: :mod:`accounts.mfa.shown_codes`), its ``SensitiveRecoveryCodesAuthenticator``.
    ``created_at``: when the set was generated (for a set older than that record, when the
    authenticator app came, else the account); ``last_used_at``: when a code was last used."""
    unused = len(account.recovery_codes or ())
    created = account.recovery_codes_created or account.totp_created or account.created
    data = {
        "type": "recovery_codes",
        "created_at": _timestamp(created),
        "last_used_at": _timestamp(account.recovery_codes_last_used),
        "total_code_count": (unused + len(account.used_recovery_codes or ())) or recovery_codes.COUNT,
        "unused_code_count": unused,
    }
    if codes is not None:
        data["unused_codes"] = codes
    return data


def webauthn_data(passkey) -> dict:
    """allauth's ``WebAuthnAuthenticator``; ``is_passwordless`` as the browser said at
    registration (credProps), absent when it did not say (as allauth's)."""
    data = {
        "type": "webauthn",
        "id": responses.authenticator_id(passkey.credential_id),
        "name": passkey.name,
        "created_at": _timestamp(passkey.created),
        "last_used_at": _timestamp(passkey.last_used),
    }
    if passkey.discoverable is not None:
        data["is_passwordless"] = passkey.discoverable
    return data


def second_step_done(request: HttpRequest, client: str, user) -> Answer:
    """The answer to a second step that logged ``user`` in: 200, or, with
    ``ACCOUNTS_MFA_TRUST_ENABLED`` in a browser, 401 with the pending ``mfa_trust`` flow
    (allauth's; its answer, ``auth/2fa/trust``, says whether to trust the browser). The session
    is logged in either way: the offer only adds the trust cookie, and leaving it unanswered
    is declining it."""
    if not (app_settings.MFA_TRUST_ENABLED and client == clients.BROWSER):
        answer = responses.authenticated(request, user)
    else:
        request.session[TRUST_OFFER_SESSION_KEY] = {
            "id": user.pk,
            "until": int(time.time()) + second_step.STAGE_SECONDS,
        }
        answer = responses.unauthenticated(request)
        answer.data["flows"].append({"id": "mfa_trust", "is_pending": True})
    answer.trusted_account = user.pk
    return answer


def code_type(account, code: str) -> str:
    """Which authenticator ``code`` looks like a code of (``totp`` or ``recovery_codes``)."""
    return "totp" if account.totp_secret and totp.looks_like_a_code(totp.normalize(code)) else "recovery_codes"


class AuthenticateView(APIView):
    """``POST auth/2fa/authenticate`` (``code``): the second step of a pending login, with a
    code of the authenticator app or a recovery code (``mfa_attempt`` limit, 429)."""

    http_method_names = ["post"]

    def post(self, request: HttpRequest) -> Answer:
        pending = login_flow.pending_login(request)
        if pending is None or pending.stage != SecondFactorStage.key:
            # Nothing waits for a second factor: the flows to log in.
            return responses.unauthenticated(request)
        code = self.text("code") or ""
        outcome, user = second_step.authenticate_with_code(request, code)
        if outcome == second_step.WRONG_CODE:
            return responses.error(MESSAGES["incorrect_code"], "incorrect_code", "code")
        if outcome != second_step.SIGNED_IN:
            return responses.unauthenticated(request)
        login_flow.record_method(request, {"method": "mfa", "type": code_type(user.account, code)})
        return second_step_done(request, self.client, user)


class TrustView(APIView):
    """``POST auth/2fa/trust`` (``trust``, a boolean; browser client only): answer the pending
    ``mfa_trust`` flow of a second step just passed: with ``true``, this browser's next logins
    of the account skip the second step (:mod:`accounts.mfa.trust`). 200 logged in; 401 when
    no offer is pending; 404 when ``ACCOUNTS_MFA_TRUST_ENABLED`` is off."""

    http_method_names = ["post"]
    # The account to trust, once the answer is rendered (the cookie goes on the response).
    trusting = None

    def post(self, request: HttpRequest) -> Answer:
        if not app_settings.MFA_TRUST_ENABLED:
            return not_found()
        offer = request.session.get(TRUST_OFFER_SESSION_KEY)
        user = request.user
        if not (offer and offer["until"] >= time.time() and user.is_authenticated and offer["id"] == user.pk):
            return responses.unauthenticated(request)
        wanted = self.input.get("trust", False)
        if not isinstance(wanted, bool):
            return responses.error(MESSAGES["not_a_boolean"], "invalid", "trust")
        del request.session[TRUST_OFFER_SESSION_KEY]
        self.trusting = user.account if wanted else None
        return responses.authenticated(request, user)

    def render(self, request: HttpRequest, answer: Answer) -> HttpResponse:
        response = super().render(request, answer)
        if self.trusting is not None and answer.status == HTTPStatus.OK:
            trust.trust(request, response, self.trusting)
        return response


class MFAReauthenticateView(AuthenticatedView):
    """``POST auth/2fa/reauthenticate`` (``code``): a fresh proof with a code of the
    authenticator app (the second step's ``mfa_attempt`` limit, 429) or a recovery code, as
    allauth's (``mfa_attempt`` too)."""

    http_method_names = ["post"]

    def post(self, request: HttpRequest) -> Answer:
        code = self.text("code") or ""
        kind = code_type(request.user.account, code)
        prove = reauthentication.with_totp if kind == "totp" else reauthentication.with_recovery_code
        if prove(request, code) != reauthentication.REAUTHENTICATED:
            return responses.error(MESSAGES["incorrect_code"], "incorrect_code", "code")
        login_flow.record_method(request, {"method": "mfa", "type": kind, "reauthenticated": True})
        return responses.authenticated(request, request.user)


class AuthenticatorsView(AuthenticatedView):
    """``GET account/authenticators``: the account's authenticator app, recovery codes and
    passkeys."""

    http_method_names = ["get"]

    def get(self, request: HttpRequest) -> Answer:
        account = request.user.account
        found = []
        if account.totp_secret:
            found.append(totp_data(account))
        if account.recovery_codes or account.used_recovery_codes:
            found.append(recovery_codes_data(account))
        found.extend(webauthn_data(passkey) for passkey in store.passkeys_of(account))
        return Answer(data=found)


class TOTPView(ReauthenticatedView):
    """``account/authenticators/totp``: ``GET`` the app (404 with a new secret to set it up
    when off), ``POST`` (``code``) turn it on, ``DELETE`` turn it off; both need a fresh
    reauthentication, as on the pages."""

    http_method_names = ["get", "post", "delete"]
    sensitive = ("post", "delete")

    def get(self, request: HttpRequest) -> Answer:
        account = request.user.account
        if account.totp_secret:
            return Answer(data=totp_data(account))
        if not authenticators.may_set_up(account):
            return conflict()
        setup = authenticators.totp_setup(request, account)
        return Answer(status=HTTPStatus.NOT_FOUND, meta={"secret": setup["secret"], "totp_url": setup["uri"]})

    def post(self, request: HttpRequest) -> Answer:
        account = request.user.account
        if account.totp_secret or not authenticators.may_set_up(account):
            return conflict()
        try:
            codes = authenticators.activate_totp(request, account, self.text("code") or "")
        except StaleItem:
            return responses.error(MESSAGES["stale"], "stale", "code")
        if codes is None:
            return responses.error(MESSAGES["incorrect_code"], "incorrect_code", "code")
        return Answer(data=totp_data(account), meta={"recovery_codes_generated": bool(codes)})

    def delete(self, request: HttpRequest) -> Answer:
        account = request.user.account
        if account.totp_secret:
            authenticators.deactivate_totp(request, account)
        return Answer()


class RecoveryCodesView(ReauthenticatedView):
    """``account/authenticators/recovery-codes``: ``GET`` the set (404 when none) with the
    unused codes this session generated within ``ACCOUNTS_MFA_RECOVERY_CODES_DISPLAY_TIMEOUT``
    (``unused_codes``; ``[]`` for any other session or later: they are stored as digests),
    ``POST`` new ones replace the old."""

    http_method_names = ["get", "post"]
    sensitive = ("get", "post")

    def get(self, request: HttpRequest) -> Answer:
        account = request.user.account
        if not (account.recovery_codes or account.used_recovery_codes):
            return Answer(status=HTTPStatus.NOT_FOUND)
        return Answer(data=recovery_codes_data(account, shown_codes.readable(request.session, account) or []))

    def post(self, request: HttpRequest) -> Answer:
        account = request.user.account
        if not account_store.is_verified(account) or not (account.totp_secret or account.passkeys):
            return responses.error(_("Set up an authenticator app or a passkey first."), "no_authenticator")
        codes = authenticators.regenerate_recovery_codes(request, account)
        return Answer(data=recovery_codes_data(account, codes))


def request_options(options: passkeys.CeremonyOptions) -> dict:
    """allauth's ``WebAuthnCredentialRequestOptions``: ``navigator.credentials.get()``'s
    options under ``request_options.publicKey``."""
    return {"request_options": {"publicKey": json.loads(options.json)}}


class WebAuthnView(APIView):
    """A passkey ceremony: ``GET`` its options (a challenge kept in the session), ``POST``
    (``credential``, the browser's answer) its outcome."""

    http_method_names = ["get", "post"]

    def credential(self) -> str:
        """The answer as the passkey flows read it (JSON text; ``""`` when absent)."""
        credential = self.input.get("credential")
        return json.dumps(credential) if isinstance(credential, dict) else ""

    def refused(self, refusal: passkeys.PasskeyRefused) -> Answer:
        return responses.error(refusal.message, "passkey_refused", "credential")


class WebAuthnLoginView(WebAuthnView):
    """``auth/webauthn/login``: a login with a passkey alone (a discoverable credential,
    user verification required), as the login page's passkey button."""

    def get(self, request: HttpRequest) -> Answer:
        # The challenge stays in the session: the session token carries it for an app.
        options = passkeys.authentication_options(request, passkeys.LOGIN, in_session=True)
        return Answer(data=request_options(options))

    def post(self, request: HttpRequest) -> Answer:
        try:
            assertion = second_step.read_passkey_answer(request, self.credential())
            if request.user.is_authenticated:
                return conflict()
            outcome, user = second_step.login_with_passkey(request, assertion)
        except passkeys.PasskeyRefused as refusal:
            return self.refused(refusal)
        if outcome != second_step.SIGNED_IN:
            return responses.unauthenticated(request)
        login_flow.record_method(request, {"method": "mfa", "type": "webauthn", "passwordless": True})
        answer = responses.authenticated(request, user)
        answer.trusted_account = user.pk
        return answer


class WebAuthnAuthenticateView(WebAuthnView):
    """``auth/webauthn/authenticate``: the second step of a pending login with a passkey of
    its account."""

    def get(self, request: HttpRequest) -> Answer:
        account = second_step.staged_account(request)
        if account is None or not account.passkeys:
            return responses.unauthenticated(request)
        options = passkeys.authentication_options(request, passkeys.SECOND_FACTOR, allowed=account.passkeys)
        return Answer(data=request_options(options))

    def post(self, request: HttpRequest) -> Answer:
        pending = login_flow.pending_login(request)
        if pending is None or pending.stage != SecondFactorStage.key:
            return responses.unauthenticated(request)
        try:
            outcome, user = second_step.authenticate_with_passkey(request, self.credential())
        except passkeys.PasskeyRefused as refusal:
            return self.refused(refusal)
        if outcome != second_step.SIGNED_IN:
            return responses.unauthenticated(request)
        login_flow.record_method(request, {"method": "mfa", "type": "webauthn"})
        return second_step_done(request, self.client, user)
