"""The identity-provider operations of the API: the browser's redirect to a provider, an
app's ID token, the pending provider sign-up, and the account's linked providers.

Each view parses its input, calls one flow of :mod:`accounts.providers.flows` (the same the
pages call) and renders what it returns: whose an identity is, only its lock says; an
account with a second factor is asked for it (401, ``mfa_authenticate``) unless the provider
is trusted to have asked (``ACCOUNTS_OIDC_TRUST_PROVIDER_MFA``).
"""

from __future__ import annotations

from http import HTTPStatus
from urllib.parse import urlsplit

from django.conf import settings
from django.http import HttpRequest, HttpResponse, HttpResponseRedirect, QueryDict
from django.utils.http import url_has_allowed_host_and_scheme
from django.utils.translation import gettext_lazy as _

from .. import idempotency, links, ratelimit, timeline
from ..app_settings import app_settings
from ..exceptions import Busy, StaleItem
from ..form_errors import STORE_REFUSALS
from ..mfa.flows import reauthentication
from ..providers import flows, notices, oidc, store
from ..providers.forms import ProviderSignupForm
from ..signup_fields import has_username
from . import responses
from .account_views import ReauthenticatedView, conflict, signed_up
from .base import APIView
from .responses import Answer

LOGIN, CONNECT = "login", "connect"

MESSAGES = {
    "unknown_provider": _("Unknown provider."),
    "invalid_token": _("The token was invalid."),
    "token_used": _("This token was used already. Get a new one from the provider."),
    "unreachable": _("The provider cannot be reached at the moment. Please try again later."),
    "invalid_callback_url": _("This callback URL is not allowed."),
    "invalid_process": _("The process must be login or connect."),
    "already_used": _("This sign-in was already used. Please start again."),
    "not_allowed": _("This account cannot log in."),
    "account_not_found": _("Unknown account."),
    "taken": _("This sign-in is already linked to another account."),
    "too_many": _("Your account has as many passkeys and sign-ins as it may have. Remove one first."),
    "last_way_in": _("This is your account's last way in: set a password or add a passkey before removing it."),
    "stale": _("Your account changed meanwhile, so nothing was saved. Please try again."),
}


def _provider_of(value: object) -> oidc.ProviderConfig | None:
    return flows.provider(value) if isinstance(value, str) else None


def login_answer(request: HttpRequest, outcome: flows.Outcome) -> Answer:
    """The answer to a provider sign-in's outcome: 200 signed in; 401 with the pending
    ``mfa_authenticate`` or ``provider_signup`` flow; 400 refused."""
    if outcome.result == flows.SIGNED_IN and outcome.user is not None:
        answer = responses.authenticated(request, outcome.user)
        answer.trusted_account = outcome.user.pk
        return answer
    if outcome.result in (flows.SECOND_STEP, flows.NEEDS_SIGNUP):
        return responses.unauthenticated(request)
    code = "already_used" if outcome.result == flows.ALREADY_USED else "not_allowed"
    return responses.error(MESSAGES[code], code)


Origin = tuple[str, str, int]
DEFAULT_PORTS = {"http": 80, "https": 443}


def origin_of(url: str) -> Origin | None:
    """``(scheme, host, port)`` of an absolute ``http``/``https`` URL (the port made
    explicit, the host lower-cased), or ``None`` (another scheme, no host, credentials in it,
    a port that is not one)."""
    try:
        parts = urlsplit(url)
        port = parts.port
    except ValueError:
        return None
    scheme = parts.scheme.lower()
    if scheme not in DEFAULT_PORTS or not parts.hostname or parts.username is not None:
        return None
    return scheme, parts.hostname, port or DEFAULT_PORTS[scheme]


def site_origin(request: HttpRequest) -> Origin | None:
    """The site's own origin: ``ACCOUNTS_SITE_URL``'s when set, else this request's."""
    return origin_of(links.site_url() if app_settings.SITE_URL else request.build_absolute_uri("/"))


def trusted_origin(origin: Origin) -> bool:
    """Whether ``origin`` is one of ``CSRF_TRUSTED_ORIGINS`` (the origins the site trusts to
    post to it, which django-allauth's ``is_safe_url`` also accepts as redirects): the same
    scheme, host and port, a ``*.`` pattern matching the host's subdomains."""
    scheme, host, port = origin
    for entry in settings.CSRF_TRUSTED_ORIGINS:
        subdomains = "://*." in entry
        trusted = origin_of(entry.replace("://*.", "://", 1))
        if trusted is None or (trusted[0], trusted[2]) != (scheme, port):
            continue
        if host == trusted[1] or (subdomains and host.endswith("." + trusted[1])):
            return True
    return False


def safe_callback_url(request: HttpRequest, url: str) -> bool:
    """Whether the app's ``callback_url`` may be redirected to: a path of this site, or a
    URL of the site's own origin (scheme, host AND port: ``ACCOUNTS_SITE_URL``'s, else the
    request's), or of one of ``CSRF_TRUSTED_ORIGINS``. Never an ``http://`` downgrade of an
    ``https`` site, nor another port of its host."""
    if not url or any(character.isspace() or ord(character) < 32 for character in url):
        return False
    if not urlsplit(url).scheme and not urlsplit(url).netloc:
        # A path: refused when a browser would read it as another host ("//evil", "/\\evil").
        return url_has_allowed_host_and_scheme(url, allowed_hosts=set())
    origin = origin_of(url)
    return origin is not None and (origin == site_origin(request) or trusted_origin(origin))


class ProviderRedirectView(APIView):
    """``POST auth/provider/redirect`` (browser only, a form: ``provider``, ``callback_url``,
    ``process``): 302 to the provider; its callback ends at ``callback_url``, signed in, or
    with a pending flow (``mfa_authenticate``, ``provider_signup``), or with ``?error=``.
    ``connect`` links the identity to the logged-in account, which must have reauthenticated
    recently (else back with ``?error=reauthentication_required``)."""

    http_method_names = ["post"]
    # This browser's binding of its sign-in states (accounts.providers.flows.BINDING_COOKIE),
    # set on the answer.
    binding: str | None = None

    def read_input(self, request: HttpRequest) -> dict:
        # A form post, not JSON: the browser navigates here (allauth's handle_json_input=False).
        form: QueryDict = request.POST
        return {name: form.get(name) for name in ("provider", "callback_url", "process")}

    def post(self, request: HttpRequest) -> Answer:
        callback_url = self.text("callback_url") or ""
        if not safe_callback_url(request, callback_url):
            return responses.error(MESSAGES["invalid_callback_url"], "invalid", "callback_url")
        process = self.text("process") or LOGIN
        provider = _provider_of(self.input.get("provider"))
        if process not in (LOGIN, CONNECT):
            return redirect_answer(flows.app_error_url(callback_url, "invalid_process"))
        if provider is None:
            return redirect_answer(flows.app_error_url(callback_url, "unknown_provider", process))
        if process == CONNECT and not (request.user.is_authenticated and reauthentication.is_fresh(request)):
            return redirect_answer(flows.app_error_url(callback_url, "reauthentication_required", process))
        binding = flows.browser_binding(request.COOKIES.get(flows.BINDING_COOKIE))
        try:
            url = flows.begin(
                request.session,
                provider,
                redirect_uri=flows.callback_uri(request, provider),
                next_url=callback_url,
                binding=binding,
                purpose=flows.LINK if process == CONNECT else flows.LOGIN,
                headless=True,
            )
        except oidc.ProviderError:
            return redirect_answer(flows.app_error_url(callback_url, "unreachable", process))
        self.binding = binding
        return redirect_answer(url)

    def render(self, request: HttpRequest, answer: Answer) -> HttpResponse:
        location = answer.headers.pop("Location", None)
        if location is None:
            return super().render(request, answer)
        response = HttpResponseRedirect(location)
        response["Cache-Control"] = "no-store"
        if self.binding is not None:
            response.set_cookie(**flows.binding_cookie(self.binding))
        return response


def redirect_answer(location: str) -> Answer:
    """A 302 to ``location`` (rendered by :class:`ProviderRedirectView`)."""
    return Answer(status=HTTPStatus.FOUND, headers={"Location": location})


class ProviderTokenView(APIView):
    """``POST auth/provider/token`` (``provider``, ``process``, ``token``: ``client_id``,
    ``id_token``, and ``nonce`` when the app asked the provider with one, ``access_token``
    when it has one): an app's sign-in with the ID token it got from the provider itself,
    verified exactly as the callback's (signature by the issuer's JWKS, ``iss``, ``aud`` the
    given client id, one of those this API client accepts, ``exp``, ``iat``, ``nonce``; with
    an access token, ``at_hash`` and the UserInfo claims), and accepted ONCE. ``login``: as
    the callback (200, or 401 with ``mfa_authenticate`` or ``provider_signup`` pending);
    ``connect``: link it to the logged-in, recently reauthenticated account. A refused token,
    or one used already: 400 ``invalid_token``, ``param: token``."""

    http_method_names = ["post"]

    def post(self, request: HttpRequest) -> Answer:
        provider = _provider_of(self.input.get("provider"))
        if provider is None:
            return responses.error(MESSAGES["unknown_provider"], "invalid", "provider")
        process = self.input.get("process", LOGIN)
        if process not in (LOGIN, CONNECT):
            return responses.error(MESSAGES["invalid_process"], "invalid", "process")
        token = self.input.get("token")
        token = token if isinstance(token, dict) else {}
        client_id, id_token, nonce = token.get("client_id"), token.get("id_token"), token.get("nonce")
        access_token = token.get("access_token")
        if (
            not isinstance(client_id, str)
            or not isinstance(id_token, str)
            or not isinstance(nonce, str | None)
            or not isinstance(access_token, str | None)
        ):
            return responses.error(MESSAGES["invalid_token"], "invalid_token", "token")
        try:
            identity = flows.verify_app_token(
                provider,
                api_client=self.client,
                client_id=client_id,
                id_token=id_token,
                access_token=access_token or None,
                nonce=nonce,
            )
        except oidc.TokenRefused:
            return responses.error(MESSAGES["invalid_token"], "invalid_token", "token")
        except oidc.ProviderError:
            return responses.error(MESSAGES["unreachable"], "unreachable", status=HTTPStatus.SERVICE_UNAVAILABLE)
        once = [store.id_token_spend(identity)]
        # A browser's session is not read yet: its read brings the identity's lock along.
        flows.read_identity_lock_with_session(request.session, identity)
        if process == CONNECT:
            return self.connect(request, provider, identity, once)
        if request.user.is_authenticated:
            return conflict()
        outcome = flows.log_in(request, provider, identity, next_url="", once=once)
        if outcome.result == flows.ALREADY_USED:
            return responses.error(MESSAGES["token_used"], "invalid_token", "token")
        return login_answer(request, outcome)

    def connect(
        self,
        request: HttpRequest,
        provider: oidc.ProviderConfig,
        identity: oidc.VerifiedIdentity,
        once: list,
    ) -> Answer:
        if not request.user.is_authenticated:
            return responses.unauthenticated(request)
        if not reauthentication.is_fresh(request):
            return responses.reauthentication_required(request, request.user)
        account = request.user.account
        try:
            flows.link(account, identity, origin=timeline.origin_of(request), once=once)
        except flows.TokenUsed:
            return responses.error(MESSAGES["token_used"], "invalid_token", "token")
        except store.IdentityTaken:
            return responses.error(MESSAGES["taken"], "account_taken", "token")
        except store.TooManyIdentities:
            return responses.error(MESSAGES["too_many"], "too_many", "token")
        except (StaleItem, Busy):
            return responses.error(MESSAGES["stale"], "stale")
        notices.identity_linked(request, account, provider.name)
        return responses.authenticated(request, request.user)


def pending_account_data(found: dict, provider: oidc.ProviderConfig) -> dict:
    """allauth's ``ProviderAccount`` of a pending sign-up's identity."""
    display = found.get("preferred_username") or found.get("email") or found["subject"]
    return {"uid": found["subject"], "display": display, "provider": responses.provider_data(provider)}


def request_token(idempotency_key: idempotency.ClientKey | None) -> str | None:
    """The sign-up's ClientRequestToken from the ``Idempotency-Key`` in its scope (the same
    key from the same caller, the same transaction), else ``None``."""
    return idempotency_key.token if idempotency_key is not None else None


class ProviderSignupView(APIView):
    """``auth/provider/signup``: the pending first sign-in with a provider (409 when none).
    ``GET``: the provider's address and identity; ``POST`` (``email``, ``username``): the
    new account, in one transaction with the identity's lock, as the page's form does
    (``signup`` limit; ``Idempotency-Key`` makes a resend safe). Taken by the address's
    proven owner only: a new account takes the provider's address as verified only when the
    provider verified it and the site does not prevent enumeration; else 401 ``verify_email``."""

    http_method_names = ["get", "post"]

    def pending(self, request: HttpRequest) -> tuple[dict, oidc.ProviderConfig] | None:
        found = flows.pending(request.session)
        provider = flows.provider(found["provider"]) if found else None
        if found is None or provider is None or request.user.is_authenticated:
            return None
        return found, provider

    def get(self, request: HttpRequest) -> Answer:
        pending = self.pending(request)
        if pending is None:
            return conflict()
        found, provider = pending
        email = found.get("email")
        addresses = [{"email": email, "primary": True, "verified": bool(found.get("email_verified"))}] if email else []
        # The account to be: what the sign-up form would offer (it has no id yet).
        # As the sign-up form would offer it: no username on a site without usernames.
        username = (found.get("preferred_username") or (email or "").partition("@")[0]) if has_username() else ""
        user = {"display": username or email or found["subject"], "has_usable_password": False}
        user |= {"email": email} if email else {}
        user |= {"username": username} if username else {}
        data = {"email": addresses, "account": pending_account_data(found, provider), "user": user}
        return Answer(data=data)

    def post(self, request: HttpRequest) -> Answer:
        pending = self.pending(request)
        if pending is None:
            return conflict()
        found, provider = pending
        form = ProviderSignupForm(data={"email": self.text("email") or "", "username": self.text("username") or ""})
        if not form.is_valid():
            return responses.form_errors(form)
        ratelimit.consume(request, "signup")
        try:
            account, _created = flows.sign_up(
                request.session,
                found,
                email=form.cleaned_data["email"],
                username=form.cleaned_data["username"],
                token=request_token(self.claimed_key(request)),
            )
        except store.IdentityTaken:
            return responses.error(form.error_messages["identity_taken"], "identity_taken")
        except STORE_REFUSALS as error:
            form.add_store_error(error)
            return responses.form_errors(form)
        method = {"method": "socialaccount", "provider": provider.id, "uid": found["subject"], "reauthenticated": False}
        return signed_up(request, account, method)


def linked_providers(account) -> list[dict]:
    """allauth's ``ProviderAccount`` list: the account's identities of configured providers."""
    held = store.identities_of(account)
    return [
        {"uid": subject, "display": subject, "provider": responses.provider_data(provider)}
        for provider in flows.providers()
        for issuer, subject in held
        if issuer == provider.issuer
    ]


class ProvidersView(ReauthenticatedView):
    """``account/providers``: ``GET`` the linked identities; ``DELETE`` (``provider``,
    ``account``: the identity's subject) unlinks one, as the page does: a recent
    reauthentication (else 401 with the flows that renew it), refused (400 ``no_password``)
    when it is the account's last way in, and a notice mailed to the account's address."""

    http_method_names = ["get", "delete"]
    sensitive = ("delete",)

    def get(self, request: HttpRequest) -> Answer:
        return Answer(data=linked_providers(request.user.account))

    def delete(self, request: HttpRequest) -> Answer:
        account = request.user.account
        provider = _provider_of(self.input.get("provider"))
        subject = self.text("account")
        if provider is None or subject is None or not store.holds(account, provider.issuer, subject):
            return responses.error(MESSAGES["account_not_found"], "account_not_found", "account")
        try:
            account = flows.unlink(account, provider.issuer, subject, origin=timeline.origin_of(request))
        except flows.LastWayIn:
            return responses.error(MESSAGES["last_way_in"], "no_password", "account")
        except (StaleItem, Busy):
            return responses.error(MESSAGES["stale"], "stale")
        notices.identity_unlinked(request, request.user.account, provider.name)
        return Answer(data=linked_providers(account))
