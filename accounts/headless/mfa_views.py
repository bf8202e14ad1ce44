"""The second-factor operations of the API: the login's second step, reauthentication
with a code, and the account's authenticators (authenticator app, recovery codes)."""

from __future__ import annotations

import json
from http import HTTPStatus

from django.http import HttpRequest
from django.utils.translation import gettext_lazy as _

from .. import store as account_store
from ..exceptions import StaleItem
from ..internal.flows import login as login_flow
from ..mfa import passkeys, recovery_codes, store, totp
from ..mfa.flows import authenticators, reauthentication
from ..mfa.flows import login as second_step
from ..mfa.stages import SecondFactorStage
from . import responses
from .account_views import AuthenticatedView, ReauthenticatedView, conflict
from .base import APIView
from .responses import Answer

MESSAGES = {
    "incorrect_code": _("Incorrect code."),
    "already_used": _("This code or passkey was already used. Please log in again."),
    "stale": _("Your account changed meanwhile, so nothing was saved. Please try again."),
}


def _timestamp(moment) -> float | None:
    return moment.timestamp() if moment is not None else None


def totp_data(account) -> dict:
    """allauth's ``TOTPAuthenticator``."""
    created = _timestamp(account.totp_created) or _timestamp(account.created)
    return {"type": "totp", "created_at": created, "last_used_at": None}


def recovery_codes_data(account, codes: list[str] | None = None) -> dict:
    """allauth's ``RecoveryCodesAuthenticator`` (``SensitiveRecoveryCodesAuthenticator``
    with ``codes``: they are stored as digests, so only new ones can be shown)."""
    unused = len(codes) if codes else len(account.recovery_codes or ())
    data = {
        "type": "recovery_codes",
        "created_at": _timestamp(account.updated) or _timestamp(account.created),
        "last_used_at": None,
        "total_code_count": recovery_codes.COUNT,
        "unused_code_count": unused,
    }
    if codes is not None:
        data["unused_codes"] = codes
    return data


def webauthn_data(passkey) -> dict:
    """allauth's ``WebAuthnAuthenticator`` (``is_passwordless`` is absent: whether the
    authenticator keeps a discoverable credential is not known)."""
    return {
        "type": "webauthn",
        "id": responses.authenticator_id(passkey.credential_id),
        "name": passkey.name,
        "created_at": _timestamp(passkey.created),
        "last_used_at": _timestamp(passkey.last_used),
    }


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
        answer = responses.authenticated(request, user)
        answer.trusted_account = user.pk
        return answer


class MFAReauthenticateView(AuthenticatedView):
    """``POST auth/2fa/reauthenticate`` (``code``): a fresh proof with a code of the
    authenticator app (the second step's ``mfa_attempt`` limit, 429)."""

    http_method_names = ["post"]

    def post(self, request: HttpRequest) -> Answer:
        if reauthentication.with_totp(request, self.text("code") or "") != reauthentication.REAUTHENTICATED:
            return responses.error(MESSAGES["incorrect_code"], "incorrect_code", "code")
        login_flow.record_method(request, {"method": "mfa", "type": "totp", "reauthenticated": True})
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
        if account.recovery_codes:
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
    """``account/authenticators/recovery-codes``: ``GET`` how many are left (404 when none;
    the codes themselves are shown once, when made), ``POST`` new ones replace the old."""

    http_method_names = ["get", "post"]
    sensitive = ("get", "post")

    def get(self, request: HttpRequest) -> Answer:
        account = request.user.account
        if not account.recovery_codes:
            return Answer(status=HTTPStatus.NOT_FOUND)
        # Stored as digests: the codes themselves were shown once, when they were made.
        return Answer(data=recovery_codes_data(account, []))

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
        answer = responses.authenticated(request, user)
        answer.trusted_account = user.pk
        return answer
