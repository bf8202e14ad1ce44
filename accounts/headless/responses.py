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
from ..internal.flows import login as login_flow
from ..login_codes import flows as code_flows
from ..mfa.flows.signup import PENDING_SESSION_KEY as PASSKEY_SIGNUP_SESSION_KEY
from ..mfa.stages import authenticator_types
from ..models import User
from ..pending import PENDING_SESSION_KEY
from ..providers import flows as provider_flows
from ..providers.oidc import ProviderConfig

# The flows a visitor who is not logged in can start (allauth's ``flows``).
ANONYMOUS_FLOWS = ("login", "signup")
# How a provider can be signed in with: the browser's redirect, an app's ID token.
PROVIDER_FLOWS = ("provider_redirect", "provider_token")


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
    """The account's one address, primary (allauth's ``EmailAddress`` list)."""
    return [{"email": user.email, "primary": True, "verified": store.is_verified(user.account)}]


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


def unauthenticated(request: HttpRequest, status: int = HTTPStatus.UNAUTHORIZED) -> Answer:
    """401 (or ``status``: 410 for a session token that is gone), with the flows a visitor can
    start and the one this session keeps pending (``is_pending``)."""
    flows: list[dict[str, Any]] = [{"id": flow} for flow in ANONYMOUS_FLOWS]
    provider_ids = [provider.id for provider in provider_flows.providers()]
    if provider_ids:
        flows += [{"id": flow, "providers": provider_ids} for flow in PROVIDER_FLOWS]
    pending = login_flow.pending_login(request)
    signup = provider_flows.pending(request.session)
    signup_provider = provider_flows.provider(signup["provider"]) if signup else None
    if pending is not None:
        flows.append({"id": pending.stage, "is_pending": True, "types": list(pending.types)})
    elif request.session.get(PASSKEY_SIGNUP_SESSION_KEY):
        # allauth's flow of a passkey signup waiting for its passkey (auth/webauthn/signup).
        flows.append({"id": "mfa_signup_webauthn", "is_pending": True})
    elif request.session.get(PENDING_SESSION_KEY):
        flows.append({"id": "verify_email", "is_pending": True})
    elif signup_provider is not None:
        flows.append({"id": "provider_signup", "provider": provider_data(signup_provider), "is_pending": True})
    elif code_flows.pending(request) is not None:
        flows.append({"id": "login_by_code", "is_pending": True})
    return Answer(status=status, data={"flows": flows}, meta={"is_authenticated": False})


def reauthentication_required(request: HttpRequest, user: User) -> Answer:
    """401 to a logged-in session whose proof is too old: the flows that renew it."""
    flows = []
    if user.has_usable_password():
        flows.append({"id": "reauthenticate"})
    account = user.account
    if account is not None and (account.totp_secret or account.passkeys):
        flows.append({"id": "mfa_reauthenticate", "types": list(authenticator_types(account))})
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
