"""The bodies of the API's answers, in the shapes of django-allauth's headless API."""

from __future__ import annotations

import hashlib
from collections.abc import Callable
from dataclasses import dataclass, field
from http import HTTPStatus
from typing import Any

from django.core.exceptions import ValidationError
from django.forms import Form
from django.http import HttpRequest

from .. import store
from ..app_settings import app_settings
from ..internal.flows import login as login_flow
from ..internal.flows import password_reset as password_reset_flow
from ..login_codes import flows as code_flows
from ..mfa.flows import reauthentication
from ..mfa.flows.signup import PENDING_SESSION_KEY as PASSKEY_SIGNUP_SESSION_KEY
from ..mfa.stages import authenticator_types
from ..models import User
from ..pending import PENDING_SESSION_KEY
from ..providers import flows as provider_flows
from ..providers.oidc import ProviderConfig
from . import clients

# The flows a visitor who is not logged in can start (allauth's ``flows``), in allauth's
# order: a password, a mailed code, a sign-up; then the identity providers' (below); then a
# passkey alone.
ANONYMOUS_FLOWS = ("login", "login_by_code", "signup")
PASSKEY_LOGIN_FLOW = "mfa_login_webauthn"
# How a provider can be signed in with: the browser's redirect, an app's ID token.
PROVIDER_FLOWS = ("provider_redirect", "provider_token")
# A password reset by a mailed code (ACCOUNTS_PASSWORD_RESET_BY_CODE_ENABLED): listed to
# everyone while it is on, pending or not, as allauth lists it.
PASSWORD_RESET_BY_CODE_FLOW = "password_reset_by_code"
# A fresh proof by a code mailed to the account's verified address (its ``recipients``).
REAUTHENTICATE_BY_CODE_FLOW = "reauthenticate_by_code"


@dataclass
class Answer:
    """An API answer before it is sent: the session token (app client) is added to ``meta``
    once the session is saved (see :mod:`accounts.headless.clients`)."""

    status: int = HTTPStatus.OK
    data: Any = None
    meta: dict | None = None
    errors: list[dict] | None = None
    headers: dict[str, str] = field(default_factory=dict)
    # The account a browser is now trusted for (its device cookie), after a login.
    trusted_account: str | None = None
    # Work to run once the answer was sent (accounts.after_response), so that its time
    # does not show in the answer's.
    then: Callable[[], object] | None = None

    def body(self) -> dict:
        """The JSON body: ``status`` and, when present, ``data``, ``meta``, ``errors``."""
        body: dict[str, Any] = {"status": self.status}
        for name in ("data", "meta", "errors"):
            value = getattr(self, name)
            if value is not None:
                body[name] = value
        return body


def user_data(user: User) -> dict:
    """allauth's ``User``: ``id``, ``display``, ``has_usable_password``, ``email``, ``username``;
    as allauth's ``serialize_user``, without the empty ones (no ``username`` for an account
    without one)."""
    data = {
        "id": str(user.pk),
        "display": user.display_name,
        "has_usable_password": user.has_usable_password(),
        "email": user.email,
        "username": user.username,
    }
    return {key: value for key, value in data.items() if value not in ("", None)}


def email_addresses(user: User) -> list[dict]:
    """allauth's ``EmailAddress`` list: the account's address, primary; while an email change
    waits for its proof, its new address after it, neither verified nor primary (as allauth
    lists an address added to change to, ``ACCOUNT_CHANGE_EMAIL``)."""
    account = user.account
    addresses = [{"email": user.email, "primary": True, "verified": store.is_verified(account)}]
    if account is not None and account.pending_email:
        addresses.append({"email": account.pending_email, "primary": False, "verified": False})
    return addresses


def authenticated(request: HttpRequest, user: User) -> Answer:
    """200, ``data.user`` and ``data.methods`` (how this session proved who it is)."""
    data = {"user": user_data(user), "methods": login_flow.methods(request)}
    return Answer(data=data, meta={"is_authenticated": True})


def provider_data(provider: ProviderConfig) -> dict:
    """allauth's ``Provider``: ``id``, ``name``, ``client_id``, ``openid_configuration_url``, ``flows``."""
    return {
        "id": provider.id,
        "name": provider.name,
        "client_id": provider.client_id,
        "openid_configuration_url": provider.issuer.rstrip("/") + "/.well-known/openid-configuration",
        "flows": list(PROVIDER_FLOWS),
    }


def client_of(request: HttpRequest) -> str:
    """The client a request of the API came as (``browser`` or ``app``), from the path's
    namespace (:mod:`accounts.headless.urls`)."""
    match = request.resolver_match
    return clients.APP if match is not None and clients.APP in match.namespaces else clients.BROWSER


def unauthenticated(request: HttpRequest, status: int = HTTPStatus.UNAUTHORIZED) -> Answer:
    """401 (or ``status``: 410 for a session token that is gone), with the flows a visitor can
    start and the one this session keeps pending (``is_pending``), as allauth lists them:
    ``login``, ``login_by_code``, ``signup``; with identity providers, ``provider_redirect``
    (the browser client's only) and ``provider_token``, then a pending ``provider_signup``;
    ``mfa_login_webauthn`` (a passkey alone); the pending stage (put in place of its flow when
    listed already, else last); ``password_reset_by_code`` while it is on."""
    flows: list[dict[str, Any]] = [{"id": flow} for flow in ANONYMOUS_FLOWS]
    provider_ids = [provider.id for provider in provider_flows.providers()]
    if provider_ids:
        offered = PROVIDER_FLOWS if client_of(request) == clients.BROWSER else PROVIDER_FLOWS[1:]
        flows += [{"id": flow, "providers": provider_ids} for flow in offered]
        signup = provider_flows.pending(request.session)
        signup_provider = provider_flows.provider(signup["provider"]) if signup else None
        if signup_provider is not None:
            flows.append({"id": "provider_signup", "provider": provider_data(signup_provider), "is_pending": True})
    flows.append({"id": PASSKEY_LOGIN_FLOW})
    _put_pending(flows, _pending_stage(request))
    flows += _reset_by_code_flows(request)
    return Answer(status=status, data={"flows": flows}, meta={"is_authenticated": False})


def _pending_stage(request: HttpRequest) -> dict[str, Any] | None:
    """The flow of the stage this session keeps pending (allauth's pending stage), if any."""
    pending = login_flow.pending_login(request)
    if pending is not None:
        return {"id": pending.stage, "is_pending": True, "types": list(pending.types)}
    if request.session.get(PASSKEY_SIGNUP_SESSION_KEY):
        # allauth's flow of a passkey signup waiting for its passkey (auth/webauthn/signup).
        return {"id": "mfa_signup_webauthn", "is_pending": True}
    if request.session.get(PENDING_SESSION_KEY):
        return {"id": "verify_email", "is_pending": True}
    if code_flows.pending(request) is not None:
        return {"id": "login_by_code", "is_pending": True}
    return None


def _put_pending(flows: list[dict[str, Any]], pending: dict[str, Any] | None) -> None:
    """Mark the flow ``pending`` in ``flows`` where it is listed already, else add it last
    (allauth's ``_upsert_pending_flow``)."""
    if pending is None:
        return
    listed = next((flow for flow in flows if flow["id"] == pending["id"]), None)
    if listed is not None:
        listed.update(pending)
    else:
        flows.append(pending)


def _reset_by_code_flows(request: HttpRequest) -> list[dict[str, Any]]:
    """``password_reset_by_code`` while ``ACCOUNTS_PASSWORD_RESET_BY_CODE_ENABLED`` is on,
    pending when this session waits for its code (or its new password)."""
    if not app_settings.PASSWORD_RESET_BY_CODE_ENABLED:
        return []
    return [{"id": PASSWORD_RESET_BY_CODE_FLOW, "is_pending": password_reset_flow.code_pending(request)}]


def reauthentication_required(request: HttpRequest, user: User) -> Answer:
    """401 to a logged-in session whose proof is too old: the flows that renew it, as allauth
    lists them: ``reauthenticate`` with a password, ``reauthenticate_by_code`` with a code
    mailed to its ``recipients`` (``ACCOUNTS_REAUTHENTICATION_BY_CODE_ENABLED``, an account
    with a verified address; ``is_pending`` while this session waits for its code),
    ``mfa_reauthenticate`` with a second factor; and ``password_reset_by_code`` while it is
    on."""
    flows: list[dict[str, Any]] = []
    if user.has_usable_password():
        flows.append({"id": "reauthenticate"})
    recipients = reauthentication.code_recipients(user)
    if recipients:
        flows.append({"id": REAUTHENTICATE_BY_CODE_FLOW, "recipients": recipients})
    account = user.account
    if account is not None and (account.totp_secret or account.passkeys):
        flows.append({"id": "mfa_reauthenticate", "types": list(authenticator_types(account))})
    if reauthentication.code_pending(request):
        _put_pending(flows, {"id": REAUTHENTICATE_BY_CODE_FLOW, "is_pending": True})
    flows += _reset_by_code_flows(request)
    data = {"user": user_data(user), "methods": login_flow.methods(request), "flows": flows}
    return Answer(status=HTTPStatus.UNAUTHORIZED, data=data, meta={"is_authenticated": True})


def error(message: str, code: str, param: str | None = None, status: int = HTTPStatus.BAD_REQUEST) -> Answer:
    """One error (allauth's ``ErrorResponse``)."""
    entry = {"message": str(message), "code": code}
    if param is not None:
        entry["param"] = param
    return Answer(status=status, errors=[entry])


def form_errors(form: Form, params: dict[str, str] | None = None, status: int = HTTPStatus.BAD_REQUEST) -> Answer:
    """Every error of ``form``, as allauth lists them: ``param`` names the input (``params``
    renames a form field to the API's name, e.g. ``password1`` to ``password``); a form-wide
    error has no ``param``."""
    params = params or {}
    errors = []
    for name, field_errors in form.errors.as_data().items():
        for field_error in field_errors:
            errors.extend(_entries(field_error, None if name == "__all__" else params.get(name, name)))
    return Answer(status=status, errors=errors)


def errors_of(errors: dict[str | None, list[ValidationError]], status: int = HTTPStatus.BAD_REQUEST) -> Answer:
    """The errors of a flow's outcome, ``{field: [ValidationError]}`` (``None``: the whole
    request's), as :func:`form_errors` lists a form's."""
    entries = [entry for name, each in errors.items() for error in each for entry in _entries(error, name)]
    return Answer(status=status, errors=entries)


def _entries(validation_error: ValidationError, param: str | None) -> list[dict]:
    entries = []
    for single in validation_error.error_list:
        message = single.message % single.params if single.params else single.message
        entry = {"message": str(message), "code": single.code or "invalid"}
        if param is not None:
            entry["param"] = param
        entries.append(entry)
    return entries


def authenticator_id(credential_id: str) -> int:
    """The integer id allauth's ``WebAuthnAuthenticator`` carries, from the passkey's
    credential id (48 bits of its SHA-256: exact in JavaScript's numbers)."""
    return int(hashlib.sha256(credential_id.encode()).hexdigest()[:12], 16)


def session_id(session_key_item_id: str) -> int:
    """The integer id allauth's ``Session`` carries, from the session's own opaque id (its
    hexadecimal digest: 48 bits, exact in JavaScript's numbers)."""
    return int(session_key_item_id, 16)
