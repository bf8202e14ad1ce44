"""The passkey operations of the API beside the logins (:mod:`.mfa_views`): signing up with a
passkey, reauthenticating with one, and the account's passkeys (add, rename, remove).

Each keeps the guarantees of its HTML page: the challenge is taken out of the session when
it is answered (single use), the relying party's id and origin come from the settings, a
credential another account registered is refused by its lock, the last passkey of an account
without a password stays, and adding, renaming or removing one needs a fresh proof.
"""

from __future__ import annotations

import json

from django.http import HttpRequest
from django.utils.translation import gettext_lazy as _

from .. import ratelimit
from ..app_settings import app_settings
from ..exceptions import Busy, StaleItem, UniqueViolation
from ..form_errors import STORE_REFUSALS
from ..internal.flows import login as login_flow
from ..mfa import passkeys, store
from ..mfa.flows import authenticators, reauthentication
from ..mfa.flows import signup as passkey_signup
from ..mfa.forms import PasskeyAddForm, PasskeySignupForm
from . import responses
from .account_views import (
    AuthenticatedView,
    ReauthenticatedView,
    conflict,
    not_found,
    signed_up,
    signup_token,
)
from .mfa_views import MESSAGES as MFA_MESSAGES
from .mfa_views import WebAuthnView, request_options, webauthn_data
from .responses import Answer

DEFAULT_NAME = _("Passkey")
MESSAGES = {
    "stale": MFA_MESSAGES["stale"],
    "already_used": MFA_MESSAGES["already_used"],
    "passkey_taken": PasskeyAddForm.error_messages["passkey_taken"],
    "last_way_in": _("It is the only way into your account: set a password first, then remove it."),
    "unknown_authenticator": _("No passkey of your account has this id."),
    "invalid_name": _("Enter a name of at most 64 characters."),
}
# What the engine refuses a change with when the account changed meanwhile.
REFUSALS = (StaleItem, Busy)


def creation_options(options: passkeys.CeremonyOptions) -> dict:
    """allauth's ``WebAuthnCredentialCreationOptions``: ``navigator.credentials.create()``'s
    options under ``creation_options.publicKey``."""
    return {"creation_options": {"publicKey": json.loads(options.json)}}


class PasskeyInputMixin:
    """The ``name`` and ``credential`` of a new passkey, checked by the passkeys page's form
    (a name of at most 64 characters, a bounded answer)."""

    input: dict

    def passkey_form(self: WebAuthnView) -> PasskeyAddForm:
        name = self.input.get("name", str(DEFAULT_NAME))
        return PasskeyAddForm(data={"name": name if isinstance(name, str) else "", "credential": self.credential()})


class WebAuthnSignupView(PasskeyInputMixin, WebAuthnView):
    """``auth/webauthn/signup`` (with ``ACCOUNTS_PASSKEY_SIGNUP``, else 404 as allauth):
    ``POST`` (``email``, ``username``) starts it, as the first page (``signup`` limit; the
    ``Idempotency-Key`` fixes the account's id), answering 401 with the pending
    ``mfa_signup_webauthn`` flow; ``GET`` the creation options of its passkey; ``PUT``
    (``credential``, ``name``) creates the account with it in one transaction, as the second
    page. 409 when none is pending, or someone is logged in."""

    http_method_names = ["get", "post", "put"]

    def post(self, request: HttpRequest) -> Answer:
        if not app_settings.PASSKEY_SIGNUP:
            return not_found()
        if request.user.is_authenticated:
            return conflict()
        data = {
            "email": self.text("email") or "",
            "username": self.text("username") or "",
            "token": signup_token(self.claimed_key(request)),
        }
        form = PasskeySignupForm(data=data)
        if not form.is_valid():
            return responses.form_errors(form)
        ratelimit.consume(request, "signup")
        passkey_signup.start(
            request, form.cleaned_data["email"], form.cleaned_data["username"], form.cleaned_data["token"]
        )
        return responses.unauthenticated(request)

    def get(self, request: HttpRequest) -> Answer:
        if not app_settings.PASSKEY_SIGNUP:
            return not_found()
        if request.user.is_authenticated or passkey_signup.pending(request) is None:
            return conflict()
        # In the session: an app keeps no cookie, its session token carries the challenge.
        return Answer(data=creation_options(passkey_signup.options(request, in_session=True)))

    def put(self, request: HttpRequest) -> Answer:
        if not app_settings.PASSKEY_SIGNUP:
            return not_found()
        pending = passkey_signup.pending(request)
        if request.user.is_authenticated or pending is None:
            return conflict()
        form = self.passkey_form()
        if not form.is_valid():
            return responses.form_errors(form)
        try:
            account, _created = passkey_signup.complete(
                request, form.cleaned_data["credential"], form.cleaned_data["name"]
            )
        except passkeys.PasskeyRefused as refusal:
            return self.refused(refusal)
        except STORE_REFUSALS as error:
            # A value taken meanwhile (the email, the username, or the passkey): on its field.
            values = PasskeySignupForm(data={**pending, "token": ""})
            values.is_valid()
            values.add_store_error(error)
            return responses.form_errors(values, {"passkeys": "credential"})
        method = {"method": "mfa", "type": "webauthn", "passwordless": True}
        return signed_up(request, account, method)


class WebAuthnReauthenticateView(WebAuthnView, AuthenticatedView):
    """``auth/webauthn/reauthenticate``: ``GET`` the request options for a passkey of the
    account (user verification required), ``POST`` (``credential``) a fresh proof with it
    (``reauthenticate`` limit; the challenge is used once)."""

    def get(self, request: HttpRequest) -> Answer:
        account = request.user.account
        allowed = account.passkeys or ()
        return Answer(
            data=request_options(passkeys.authentication_options(request, passkeys.REAUTHENTICATE, allowed=allowed))
        )

    def post(self, request: HttpRequest) -> Answer:
        ratelimit.consume(request, reauthentication.RATE_LIMIT_ACTION)
        try:
            reauthentication.with_passkey(request, self.credential())
        except passkeys.PasskeyRefused as refusal:
            return self.refused(refusal)
        except REFUSALS:
            # The challenge or the passkey was used meanwhile (this session was emptied).
            if not request.user.is_authenticated:
                return responses.unauthenticated(request)
            return responses.error(MESSAGES["already_used"], "already_used", "credential")
        login_flow.record_method(request, {"method": "mfa", "type": "webauthn", "reauthenticated": True})
        return responses.authenticated(request, request.user)


class ManageWebAuthnView(PasskeyInputMixin, WebAuthnView, ReauthenticatedView):
    """``account/authenticators/webauthn``, each with a fresh proof (as the passkeys page):
    ``GET`` the creation options of a new passkey, ``POST`` (``credential``, ``name``) add it
    (``Idempotency-Key``: a resend adds it once), ``PUT`` (``id``, ``name``) rename one,
    ``DELETE`` (``authenticators``: ids) remove them. 409 for an account whose address is not
    verified, or that has as many passkeys as it may."""

    http_method_names = ["get", "post", "put", "delete"]
    sensitive = ("get", "post", "put", "delete")

    def get(self, request: HttpRequest) -> Answer:
        account = request.user.account
        if not authenticators.may_set_up(account):
            return conflict()
        try:
            options = authenticators.passkey_options(request, account)
        except store.TooManyPasskeys:
            return conflict()
        return Answer(data=creation_options(options))

    def post(self, request: HttpRequest) -> Answer:
        account = request.user.account
        if not authenticators.may_set_up(account):
            return conflict()
        form = self.passkey_form()
        if not form.is_valid():
            return responses.form_errors(form)
        try:
            passkey = authenticators.add_passkey(
                request,
                account,
                form.cleaned_data["name"],
                form.cleaned_data["credential"],
                idempotency_key=self.claimed_key(request),
            )
        except passkeys.PasskeyRefused as refusal:
            return self.refused(refusal)
        except UniqueViolation:
            return responses.error(MESSAGES["passkey_taken"], "passkey_taken", "credential")
        except store.TooManyPasskeys:
            return conflict()
        except REFUSALS:
            return responses.error(MESSAGES["stale"], "stale", "credential")
        if passkey is None:
            # Added by the first request with this key, and removed since.
            return responses.error(MESSAGES["stale"], "stale", "credential")
        return Answer(data=webauthn_data(passkey), meta={"recovery_codes_generated": False})

    def put(self, request: HttpRequest) -> Answer:
        account = request.user.account
        named = self.passkeys_named(account, [self.input.get("id")])
        if named is None:
            return responses.error(MESSAGES["unknown_authenticator"], "invalid", "id")
        name = self.text("name")
        if not name or len(name) > PasskeyAddForm.base_fields["name"].max_length:
            return responses.error(MESSAGES["invalid_name"], "invalid", "name")
        try:
            renamed = authenticators.rename_passkey(request, account, named[0], name)
        except REFUSALS:
            return responses.error(MESSAGES["stale"], "stale", "id")
        return Answer(data=webauthn_data(renamed))

    def delete(self, request: HttpRequest) -> Answer:
        account = request.user.account
        ids = self.input.get("authenticators")
        removed = self.passkeys_named(account, ids) if isinstance(ids, list) and ids else None
        if removed is None:
            return responses.error(MESSAGES["unknown_authenticator"], "invalid", "authenticators")
        try:
            authenticators.remove_passkeys(request, account, removed)
        except store.LastWayIn:
            return responses.error(MESSAGES["last_way_in"], "last_way_in", "authenticators")
        except REFUSALS:
            return responses.error(MESSAGES["stale"], "stale", "authenticators")
        return Answer()

    def passkeys_named(self, account, ids: list) -> list | None:
        """The account's passkeys of the API ids ``ids`` (integers), or ``None`` when one is
        not an id of one of them."""
        by_id = {responses.authenticator_id(passkey.credential_id): passkey for passkey in store.passkeys_of(account)}
        found = []
        for wanted in ids:
            if not isinstance(wanted, int) or isinstance(wanted, bool) or wanted not in by_id:
                return None
            if by_id[wanted] not in found:
                found.append(by_id[wanted])
        return found
