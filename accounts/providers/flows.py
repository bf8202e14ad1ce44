"""What each step of a provider sign-in does, as plain typed functions over explicit state
(the request's session, the provider, the verified identity): the HTML views call them, and
an API view can call the same ones.

A sign-in is two requests. :func:`begin` remembers a fresh ``state`` in the browser's session
and sends it to the provider; the PKCE verifier and the ``nonce`` are derived from the state
with the site's secret (:func:`_derived`), so the callback can exchange the code and verify
the ID token before it reads the session, and then read the identity's lock *with* the
session, in one request (:func:`read_identity_lock_with_session`). The state also carries
its deadline and an HMAC of it with this browser's binding (a random value in the cookie
:data:`BINDING_COOKIE`), so :func:`verify_answer` refuses a state this site did not make
for this browser, or one past its deadline, before it asks the provider anything.
:func:`take_state` then requires the state to be one this browser's session holds, and
removes it: a state is used once, and only by the browser it was made for.

Whose an identity is, the lock ``UNIQ#OIDC#<issuer>#<subject>`` alone says
(:func:`log_in`): never an address. An identity no account holds signs up through one form
(:func:`sign_up`); linking one to an account is done signed in to it, after reauthentication
(:func:`link`), and refused by the lock when another account holds it.
"""

import secrets
import time
from collections.abc import Sequence
from dataclasses import dataclass
from urllib.parse import urlencode, urlsplit

from django.conf import settings
from django.core.exceptions import ImproperlyConfigured
from django.urls import reverse
from django.utils.crypto import constant_time_compare, salted_hmac

from .. import links, sessions, timeline, transactions
from .. import store as account_store
from ..app_settings import app_settings
from ..exceptions import StaleItem, UniqueViolation
from ..headless.frontend import frontend_url
from ..internal.flows import login as login_flow
from ..mfa.flows import login as second_step
from ..models import User
from ..tables import ACCOUNT_PREFIX
from . import oidc, store
from .oidc import ProviderConfig, VerifiedIdentity

LOGINS_SESSION_KEY = "accounts_oidc_logins"
PENDING_SESSION_KEY = "accounts_oidc_pending"
# How long a browser may take at the provider, and then on the sign-up form.
STATE_SECONDS = 600
# At most this many sign-ins under way in one browser (tabs): the oldest are dropped.
MAX_STATES = 5
LOGIN, LINK = "login", "link"

# How a provider sign-in ended (see log_in).
SIGNED_IN, SECOND_STEP, NEEDS_SIGNUP, NOT_ALLOWED = "signed_in", "second_step", "needs_signup", "not_allowed"
ALREADY_USED = "already_used"

# The cookie binding this browser's states (see new_state): random, HttpOnly, sent only to
# the providers' pages, for as long as a state lives.
BINDING_COOKIE = "accounts_oidc_binding"

# Why the provider's answer at the callback is refused (see verify_answer), as the page and
# the app's ``?error=`` name it: a state this site did not make for this browser (or none);
# one past its deadline or used already; the person declined at the provider
# (``access_denied``, django-allauth's "cancelled"); another error of the provider; no code;
# a code the token endpoint refused; a token or UserInfo answer that fails its checks; the
# provider unreachable.
UNKNOWN_STATE, EXPIRED, CANCELLED, PROVIDER_ERROR = "unknown_state", "expired", "cancelled", "provider_error"
MISSING_CODE, INVALID_CODE, REFUSED, UNREACHABLE = "missing_code", "invalid_code", "refused", "unreachable"
# The longest error_description of a provider shown on the page.
MAX_DESCRIPTION = 300


class CallbackRefused(Exception):
    """The provider's answer at the callback is refused: ``reason`` (:data:`UNKNOWN_STATE`,
    :data:`EXPIRED`, ...), and the provider's own ``error_description`` when it sent one
    with a state made for this browser."""

    def __init__(self, reason: str, description: str | None = None):
        self.reason = reason
        self.description = description
        super().__init__(reason)


def providers() -> list[ProviderConfig]:
    """The configured providers, in the order of ``ACCOUNTS_OIDC_PROVIDERS``."""
    return [ProviderConfig.from_setting(entry) for entry in app_settings.OIDC_PROVIDERS]


def provider(provider_id: str) -> ProviderConfig | None:
    """The configured provider ``provider_id``, or ``None``."""
    return next((each for each in providers() if each.id == provider_id), None)


def callback_uri(request, provider: ProviderConfig) -> str:
    """The redirect URI registered at the provider: ``ACCOUNTS_SITE_URL`` (or this request's
    host) with the callback's path."""
    path = reverse("accounts:providers:callback", args=[provider.id])
    try:
        return links.absolute_url(path)
    except ImproperlyConfigured:
        return request.build_absolute_uri(path)


def app_error_url(url: str, code: str, process: str = "login") -> str:
    """The app's page ``url`` with ``?error=<code>&error_process=<process>``, as django-allauth's
    headless callback tells an app that a provider sign-in failed."""
    separator = "&" if urlsplit(url).query else "?"
    return f"{url}{separator}{urlencode({'error': code, 'error_process': process})}"


def _derived(state: str, purpose: str) -> str:
    # 64 hex characters: a PKCE verifier of 256 bits (RFC 7636 asks for 43 to 128
    # characters), a nonce no one can compute without the site's SECRET_KEY.
    return salted_hmac(f"accounts.providers.{purpose}", state, algorithm="sha256").hexdigest()


def browser_binding(cookie: str | None) -> str:
    """The value of :data:`BINDING_COOKIE` to bind this browser's new state to: the one it
    sent, or a new random one (the caller sets the cookie on its answer)."""
    if cookie and 32 <= len(cookie) <= 64 and cookie.isascii():
        return cookie
    return secrets.token_urlsafe(32)


def binding_cookie(binding: str) -> dict:
    """The arguments of ``HttpResponse.set_cookie`` for :data:`BINDING_COOKIE`: HttpOnly,
    ``SameSite=Lax`` (sent with the provider's redirect back, a top-level GET), secure as
    the session's cookie, sent only to the providers' pages (the callback), for as long as
    a state lives."""
    return {
        "key": BINDING_COOKIE,
        "value": binding,
        "max_age": STATE_SECONDS,
        "path": reverse("accounts:providers:list"),
        "secure": settings.SESSION_COOKIE_SECURE,
        "httponly": True,
        "samesite": "Lax",
    }


def _state_mac(prefix: str, provider_id: str, binding: str) -> str:
    return salted_hmac("accounts.providers.state", f"{prefix}|{provider_id}|{binding}", algorithm="sha256").hexdigest()


def new_state(provider: ProviderConfig, binding: str, expires: int) -> str:
    """A fresh state: 256 random bits, its deadline ``expires``, and an HMAC (with the
    site's secret) of both with the provider and this browser's ``binding``."""
    prefix = f"{secrets.token_urlsafe(32)}.{expires}"
    return f"{prefix}.{_state_mac(prefix, provider.id, binding)}"


def check_state(provider: ProviderConfig, state: str, binding: str | None, now: float | None = None) -> str | None:
    """Why ``state`` cannot be this browser's sign-in at ``provider``, without asking the
    provider or reading the session: :data:`UNKNOWN_STATE` (none, or not made by this site
    for this browser and provider), :data:`EXPIRED` (past its deadline); ``None`` when it
    may be (the session's record then says whether it is still unused, :func:`take_state`)."""
    prefix, _, mac = state.rpartition(".")
    deadline = prefix.rpartition(".")[2]
    if (
        not binding
        or not deadline.isdigit()
        or not constant_time_compare(mac, _state_mac(prefix, provider.id, binding))
    ):
        return UNKNOWN_STATE
    return EXPIRED if int(deadline) < (time.time() if now is None else now) else None


def begin(
    session,
    provider: ProviderConfig,
    *,
    redirect_uri: str,
    next_url: str,
    binding: str,
    purpose: str = LOGIN,
    headless: bool = False,
) -> str:
    """Remember a new sign-in at ``provider`` in ``session`` and return the provider's URL
    to send the browser to; its state is bound to ``binding`` (:func:`browser_binding`, the
    value the caller sets as :data:`BINDING_COOKIE`). ``purpose``: :data:`LOGIN`, or
    :data:`LINK` for a signed-in account linking an identity; ``headless``: begun by the API
    (``auth/provider/redirect``), so the callback ends at ``next_url`` (the app's page),
    whatever the outcome."""
    now = int(time.time())
    state = new_state(provider, binding, now + STATE_SECONDS)
    logins = {key: value for key, value in session.get(LOGINS_SESSION_KEY, {}).items() if value["expires"] >= now}
    logins[state] = {"provider": provider.id, "next": next_url, "purpose": purpose, "expires": now + STATE_SECONDS}
    if headless:
        logins[state]["headless"] = True
    session[LOGINS_SESSION_KEY] = dict(sorted(logins.items(), key=lambda item: item[1]["expires"])[-MAX_STATES:])
    return oidc.authorization_url(
        provider,
        redirect_uri=redirect_uri,
        state=state,
        nonce=_derived(state, "nonce"),
        code_verifier=_derived(state, "pkce"),
    )


def verify_answer(
    provider: ProviderConfig,
    *,
    redirect_uri: str,
    state: str,
    binding: str | None,
    code: str | None,
    error: str | None,
    error_description: str | None = None,
) -> VerifiedIdentity:
    """The identity the provider's answer at the callback proves. In this order, each step
    only if the one before passed:

    1. the state is one this site made for this browser and provider, not past its deadline
       (:func:`check_state`): else nothing is asked of the provider;
    2. the provider sent no ``error`` (``access_denied``: :data:`CANCELLED`), and a ``code``;
    3. the code is exchanged with this state's PKCE verifier (:data:`INVALID_CODE` when the
       token endpoint refuses it), its ID token verified with this state's nonce
       (:func:`.oidc.verify_id_token`), and the scopes' claims read from the UserInfo
       endpoint with the access token (:func:`with_userinfo`).

    Touches no session. Raises :class:`CallbackRefused`."""
    problem = check_state(provider, state, binding)
    if problem is not None:
        raise CallbackRefused(problem)
    if error:
        description = (error_description or "")[:MAX_DESCRIPTION] or None
        raise CallbackRefused(CANCELLED if error == "access_denied" else PROVIDER_ERROR, description)
    if not code:
        raise CallbackRefused(MISSING_CODE)
    try:
        tokens = oidc.exchange_code(
            provider, redirect_uri=redirect_uri, code=code, code_verifier=_derived(state, "pkce")
        )
        identity = oidc.verify_id_token(provider, tokens.id_token, nonce=_derived(state, "nonce"))
        return with_userinfo(provider, identity, tokens.access_token)
    except oidc.CodeRefused as refused:
        raise CallbackRefused(INVALID_CODE) from refused
    except oidc.TokenRefused as refused:
        raise CallbackRefused(REFUSED) from refused
    except oidc.ProviderError as unreachable:
        raise CallbackRefused(UNREACHABLE) from unreachable


def with_userinfo(provider: ProviderConfig, identity: VerifiedIdentity, access_token: str | None) -> VerifiedIdentity:
    """``identity`` with the claims of the provider's UserInfo endpoint
    (:func:`.oidc.with_userinfo`: its ``sub`` must be the ID token's) when there is an
    access token, the provider's ``fetch_userinfo`` is on and its discovery document names
    the endpoint; else ``identity`` as the ID token says. Raises
    :class:`~.oidc.TokenRefused` or :class:`~.oidc.ProviderError`."""
    if access_token is None or not provider.fetch_userinfo or "userinfo_endpoint" not in oidc.discovery(provider):
        return identity
    return oidc.with_userinfo(identity, oidc.userinfo(provider, access_token))


def read_identity_lock_with_session(session, identity: VerifiedIdentity) -> None:
    """Ask the session's load to read the identity's lock along (one request for both);
    call it before anything touches the session or ``request.user``."""
    if isinstance(session, sessions.SessionStore):
        session.read_along([store.identity_lock_raw_key(identity.issuer, identity.subject)])


def login_error_url(request, session, state: str, reason: str) -> str | None:
    """Where a refused callback sends the browser instead of the error page, the sign-in
    ``state`` names dropped from ``session`` (a refused answer ends it): the app's page
    with ``?error=<reason>&error_process=...`` for a sign-in begun by the API, as
    django-allauth's headless callback does; for a state ``session`` does not hold, the
    app's ``socialaccount_login_error`` page (``ACCOUNTS_HEADLESS_FRONTEND_URLS``) when
    the site has one; else ``None`` (the page)."""
    logins = dict(session.get(LOGINS_SESSION_KEY, {}))
    found = logins.pop(state, None) if state else None
    if found is not None:
        session[LOGINS_SESSION_KEY] = logins
        if not found.get("headless"):
            return None
        return app_error_url(found["next"], reason, "connect" if found["purpose"] == LINK else "login")
    url = frontend_url(request, "socialaccount_login_error")
    return app_error_url(url, reason) if url else None


def verify_app_token(
    provider: ProviderConfig,
    *,
    api_client: str,
    client_id: str,
    id_token: str,
    access_token: str | None,
    nonce: str | None,
) -> VerifiedIdentity:
    """The identity an ID token an app got from ``provider`` itself proves (the API's
    ``auth/provider/token``): ``client_id`` must be one of the audiences the API's
    ``api_client`` accepts (:meth:`~.oidc.ProviderConfig.audiences`: the app its
    ``app_client_ids``, the browser the web client's) and the token's ``aud``, and the
    token is verified exactly as the callback's (:func:`.oidc.verify_id_token`), ``nonce``
    the one the app asked the provider with, when it did; with an ``access_token``, its
    ``at_hash`` checked and the scopes' claims read from UserInfo (:func:`with_userinfo`).
    The caller spends it once (:func:`.store.id_token_spend`). Raises
    :class:`~.oidc.TokenRefused` or :class:`~.oidc.ProviderError`."""
    if client_id not in provider.audiences(api_client):
        raise oidc.TokenRefused(f"the {api_client} client does not accept tokens for this client id")
    identity = oidc.verify_id_token(provider, id_token, nonce=nonce, client_id=client_id, access_token=access_token)
    return with_userinfo(provider, identity, access_token)


def trusts_provider_mfa(provider: ProviderConfig, identity: VerifiedIdentity) -> bool:
    """Whether this sign-in may skip the site's second step because the provider reports
    it asked for a second factor: only when trusted (the provider's ``trust_mfa``, else
    ``ACCOUNTS_OIDC_TRUST_PROVIDER_MFA``; off by default) and the token says so."""
    trusted = provider.trust_mfa if provider.trust_mfa is not None else app_settings.OIDC_TRUST_PROVIDER_MFA
    return bool(trusted) and identity.reports_mfa(provider)


def take_state(session, provider: ProviderConfig, state: str) -> dict | None:
    """The sign-in ``state`` names, removed from ``session``: ``{"provider", "next",
    "purpose", "expires"}``, or ``None`` when this session holds no such live state for this
    provider (made for another browser, used already, or expired)."""
    logins = dict(session.get(LOGINS_SESSION_KEY, {}))
    found = logins.pop(state, None)
    if found is None:
        return None
    session[LOGINS_SESSION_KEY] = logins
    if found["provider"] != provider.id or found["expires"] < time.time():
        return None
    return found


@dataclass(frozen=True)
class Outcome:
    """How :func:`log_in` ended, and the user it logged in (or staged), if any."""

    result: str
    user: User | None = None


def log_in(
    request,
    provider: ProviderConfig,
    identity: VerifiedIdentity,
    *,
    next_url: str,
    once: Sequence[transactions.Spend] = (),
) -> Outcome:
    """Log in the account whose lock holds ``identity`` (the second step first, when it has
    a second factor, exactly as after a password), or remember the identity for the sign-up
    form (:data:`NEEDS_SIGNUP`) when no account holds it: an address the provider reports,
    verified or not, never logs into an account that holds it.

    ``once``: the single-use writes of what proved the identity (an ID token an app posted,
    :func:`.store.id_token_spend`). They go in the sign-in's own transaction, so a token
    signs in once and a refused sign-in spends nothing; a half-login and a pending sign-up
    write no transaction of their own, so there they are sent alone first, and the session
    remembers them only after they committed. Spent already: :data:`ALREADY_USED`.

    Costs the identity lock's read (with the session's, see
    :func:`read_identity_lock_with_session`), ONE ``Query`` of the account's partition (the
    account and its sessions, of which the login ends those beyond
    ``ACCOUNTS_MAX_SESSIONS``) and the login's write: ONE transaction that writes the new
    session and deletes the one that held the state, guarded so that it is used once.
    """
    counts = isinstance(request.session, sessions.SessionStore)
    read_along = request.session.read_along_items() if counts else None
    owner = store.identity_owner(identity.issuer, identity.subject, read_along)
    if owner is None:
        if not _spent_alone(once):
            return Outcome(ALREADY_USED)
        remember_pending(request.session, provider, identity, next_url)
        return Outcome(NEEDS_SIGNUP)
    account, others = account_store.read_partition(owner.removeprefix(ACCOUNT_PREFIX))
    if account is None or not store.holds(account, identity.issuer, identity.subject):
        # The lock is the one authority; an account not holding what its lock says is the
        # audit's finding, never a login.
        return Outcome(NOT_ALLOWED)
    if not second_step.can_log_in(account):
        return Outcome(NOT_ALLOWED)
    if counts:
        request.session.note_account_items(others)
    user = User.from_account(account)
    # Noted before the login's one write, which then holds it (allauth's "socialaccount").
    method = {"method": "socialaccount", "provider": provider.id, "uid": identity.subject, "reauthenticated": False}
    login_flow.record_method(request, method)
    if second_step.needs_second_step(user, request) and not trusts_provider_mfa(provider, identity):
        if not _spent_alone(once):
            return Outcome(ALREADY_USED)
        second_step.stage(request, user, next_url)
        return Outcome(SECOND_STEP, user)
    try:
        second_step.sign_in(request, user, list(once))
    except StaleItem:
        return Outcome(ALREADY_USED)
    return Outcome(SIGNED_IN, user)


def _spent_alone(once: Sequence[transactions.Spend]) -> bool:
    """Send ``once`` as a transaction of its own (nothing when empty); False when one of
    them was spent already."""
    if not once:
        return True
    try:
        store.spend(*once)
    except StaleItem:
        return False
    return True


def remember_pending(session, provider: ProviderConfig, identity: VerifiedIdentity, next_url: str) -> None:
    """Keep the verified identity in the (server-side) session for the sign-up form."""
    session[PENDING_SESSION_KEY] = {
        "provider": provider.id,
        "issuer": identity.issuer,
        "subject": identity.subject,
        "email": identity.email,
        "email_verified": identity.email_verified,
        "preferred_username": identity.preferred_username,
        "next": next_url,
        "expires": int(time.time()) + STATE_SECONDS,
    }


def pending(session) -> dict | None:
    """The identity waiting for the sign-up form, or ``None`` (none, or expired)."""
    found = session.get(PENDING_SESSION_KEY)
    if not found or found["expires"] < time.time():
        return None
    return found


def takes_provider_address(found: dict, email: str) -> bool:
    """Whether a sign-up with ``email`` may take it as verified: the provider said
    ``email_verified`` for this very address, and the site does not prevent enumeration (a
    sign-up that logged in at once would then tell a free address from a taken one: every
    sign-up proves its mailbox by mail instead)."""
    if not found.get("email_verified") or not found.get("email") or app_settings.PREVENT_ENUMERATION:
        return False
    constraint = account_store.constraint_for("email")
    return constraint.key_for(found["email"]) == constraint.key_for(email)


def sign_up(session, found: dict, *, email: str, username: str, token: str | None = None):
    """Create the account of the pending identity ``found`` with the form's ``email`` and
    ``username``: ONE transaction with its locks, the identity's among them, so of any number
    of concurrent first sign-ins of one identity one account is made. Verified at once only
    by :func:`takes_provider_address`; otherwise unverified, as any sign-up.

    Returns ``(account, created)``. Raises :class:`~.store.IdentityTaken` when another sign-up
    of this identity won (log in instead), or what :func:`accounts.store.signup` raises.
    """
    verified = True if takes_provider_address(found, email) else None
    try:
        account, created = store.signup(
            email=email,
            username=username,
            issuer=found["issuer"],
            subject=found["subject"],
            email_verified=verified,
            token=token,
        )
    except UniqueViolation as error:
        if store.FIELD in error.fields:
            raise store.IdentityTaken(store.identity_lock_key(found["issuer"], found["subject"])) from error
        raise
    session.pop(PENDING_SESSION_KEY, None)
    return account, created


def link(account, identity: VerifiedIdentity, *, origin: timeline.Origin, once: Sequence[transactions.Spend] = ()):
    """Link ``identity`` to the signed-in, freshly reauthenticated ``account``, recorded as
    come from ``origin``; ``once``: as :func:`log_in`'s, spent alone first. Raises
    :class:`~.store.IdentityTaken` when another account's lock holds it, :class:`TokenUsed`
    when ``once`` was spent already."""
    if not _spent_alone(once):
        raise TokenUsed("This token was used already.")
    return store.link(account, identity.issuer, identity.subject, origin=origin)


class TokenUsed(Exception):
    """The ID token was accepted once already (:func:`.store.id_token_spend`)."""


def unlink(account, issuer: str, subject: str, *, origin: timeline.Origin):
    """Unlink an identity from ``account``, recorded as come from ``origin``; refused
    (:class:`LastWayIn`) when it is the account's last way in (no password, no passkey, no
    other identity)."""
    if not store.holds(account, issuer, subject):
        return account
    if store.ways_in(account) <= 1:
        raise LastWayIn("This is the account's last way in.")
    return store.unlink(account, issuer, subject, origin=origin)


class LastWayIn(Exception):
    """Unlinking this identity would leave the account no way in."""
