"""The OpenID Connect protocol, through Authlib: discovery, the authorization request (code
flow with PKCE), the code's exchange, the ID token's verification with the issuer's JWKS,
and the person's claims from the UserInfo endpoint.

Nothing here touches DynamoDB or a request: :mod:`.flows` calls these with explicit values.
Authlib's ``OAuth2Session`` builds the authorization URL, sends the token request and asks
the UserInfo endpoint with the access token (its Bearer auth; the answer read as Authlib's
``UserInfo``); the ID token is verified by ``joserfc`` (Authlib's JOSE library, which
Authlib itself depends on and which replaces its deprecated ``authlib.jose``): no JWT is
parsed by hand.

Which claim comes from where (OpenID Connect Core 1.0, 5.4 and 5.3.2): who signed in and how
(``iss``, ``sub``, ``aud``, ``exp``, ``nonce``, ``amr``, ``acr``) only from the verified ID
token; the claims of the ``email`` and ``profile`` scopes from the UserInfo endpoint when
the provider gave an access token, else from the ID token. ``email_verified`` always comes
with the ``email`` it is about: an address from UserInfo is verified only if UserInfo says
so. A UserInfo answer whose ``sub`` is not the ID token's is refused, and the sign-in with it.
"""

import dataclasses
import hashlib
import threading
import time
from dataclasses import dataclass

import requests
from authlib.common.errors import AuthlibBaseError
from authlib.integrations.requests_client import OAuth2Session
from authlib.oidc.core import UserInfo
from authlib.oidc.core.util import create_half_hash
from django.utils.crypto import constant_time_compare
from joserfc import jwt
from joserfc.errors import InvalidKeyIdError, JoseError
from joserfc.jwk import KeySet

# How long a discovery document and a JWKS are kept; a token signed by a key the cached JWKS
# lacks fetches it again at once (key rotation), at most every MIN_REFETCH_SECONDS.
CACHE_SECONDS = 3600
MIN_REFETCH_SECONDS = 60
HTTP_TIMEOUT_SECONDS = 5
# Clock skew allowed between the provider and this server for exp and iat.
LEEWAY_SECONDS = 60
DEFAULT_SCOPES = ("openid", "email", "profile")
# The ``amr`` values (RFC 8176) that say the provider itself asked for more than one factor:
# "mfa" and "mca" by name, and the factors that are a second one wherever we know them used
# (a one-time code, a hardware key, a smart card).
MFA_AMR_VALUES = frozenset({"mfa", "mca", "otp", "hwk", "sc"})


class ProviderError(Exception):
    """The provider could not be asked (unreachable, or its answer is not one we can read)."""


class TokenRefused(Exception):
    """The ID token (or the answer about it) is not one this site accepts; ``reason`` says
    which check failed."""

    def __init__(self, reason: str):
        self.reason = reason
        super().__init__(reason)


class CodeRefused(Exception):
    """The provider's token endpoint refused the code (an OAuth 2.0 error such as
    ``invalid_grant``: used already, expired, or not this client's); ``error`` is its code."""

    def __init__(self, error: str):
        self.error = error
        super().__init__(error)


@dataclass(frozen=True)
class Tokens:
    """What the token endpoint gave for a code: the ID token, and the access token (for the
    UserInfo endpoint) when it issued one."""

    id_token: str
    access_token: str | None


@dataclass(frozen=True)
class ProviderConfig:
    """One entry of ``ACCOUNTS_OIDC_PROVIDERS``."""

    id: str
    name: str
    issuer: str
    client_id: str
    client_secret: str
    scopes: tuple[str, ...] = DEFAULT_SCOPES
    # The client ids whose ID tokens the API's app client accepts at auth/provider/token
    # (e.g. Google's iOS client; its Android SDK's tokens name the web client, which is then
    # listed here too). The browser client accepts the web client's (client_id) alone.
    app_client_ids: tuple[str, ...] = ()
    # Trust the provider's amr/acr saying it asked for a second factor (None: the global
    # ACCOUNTS_OIDC_TRUST_PROVIDER_MFA decides), and the acr values that mean so.
    trust_mfa: bool | None = None
    mfa_acr_values: tuple[str, ...] = ()
    # Ask the UserInfo endpoint for the scopes' claims when an access token is at hand
    # (django-allauth's "fetch_userinfo"); False: the ID token's claims alone.
    fetch_userinfo: bool = True

    def audiences(self, api_client: str) -> tuple[str, ...]:
        """The client ids (``aud``) whose ID tokens the API's ``api_client`` (``"app"`` or
        ``"browser"``) accepts: the app, :attr:`app_client_ids`; the browser, the web
        client's :attr:`client_id` (as Google's sign-in for websites gives it)."""
        return self.app_client_ids if api_client == "app" else (self.client_id,)

    @classmethod
    def from_setting(cls, entry: dict) -> "ProviderConfig":
        return cls(
            id=entry["id"],
            name=entry.get("name") or entry["id"],
            issuer=entry["issuer"],
            client_id=entry["client_id"],
            client_secret=entry.get("client_secret", ""),
            scopes=tuple(entry.get("scopes") or DEFAULT_SCOPES),
            app_client_ids=tuple(entry.get("app_client_ids") or ()),
            trust_mfa=entry.get("trust_mfa"),
            mfa_acr_values=tuple(entry.get("mfa_acr_values") or ()),
            fetch_userinfo=entry.get("fetch_userinfo", True) is not False,
        )


@dataclass(frozen=True)
class VerifiedIdentity:
    """What a verified ID token says: who (``issuer``, ``subject``) and their address."""

    issuer: str
    subject: str
    email: str | None
    email_verified: bool
    preferred_username: str | None
    # How the person proved who they are at the provider (RFC 8176 ``amr``, and ``acr``).
    amr: tuple[str, ...] = ()
    acr: str | None = None
    # The token itself, for using it once (:func:`token_digest`), and the last second it is
    # accepted (its ``exp`` plus the leeway).
    token_digest: str = ""
    accepted_until: int = 0

    def reports_mfa(self, provider: "ProviderConfig") -> bool:
        """Whether the token says the provider asked for a second factor: an ``amr`` value
        of :data:`MFA_AMR_VALUES`, or an ``acr`` the provider's ``mfa_acr_values`` list."""
        return bool(MFA_AMR_VALUES.intersection(self.amr)) or (
            self.acr is not None and self.acr in provider.mfa_acr_values
        )


class _Cache:
    """Documents fetched by URL, each kept :data:`CACHE_SECONDS`; thread-safe."""

    def __init__(self):
        self._lock = threading.Lock()
        self._entries: dict[str, tuple[float, object]] = {}

    def get(self, url: str, build, *, refresh: bool = False):
        now = time.monotonic()
        with self._lock:
            found = self._entries.get(url)
        if found is not None:
            fetched, value = found
            fresh = now - fetched < CACHE_SECONDS
            if fresh and not (refresh and now - fetched >= MIN_REFETCH_SECONDS):
                return value
        value = build(_get_json(url))
        with self._lock:
            self._entries[url] = (now, value)
        return value

    def clear(self) -> None:
        with self._lock:
            self._entries.clear()


_discoveries = _Cache()
_key_sets = _Cache()


def forget_cached_documents() -> None:
    """Fetch discovery documents and JWKS afresh when next needed (tests)."""
    _discoveries.clear()
    _key_sets.clear()


def _get_json(url: str, session: requests.Session | None = None) -> dict:
    """The JSON object at ``url``, asked with ``session`` (an ``OAuth2Session`` holding an
    access token) when given. Raises :class:`TokenRefused` when the endpoint refuses that
    token (401, 403), :class:`ProviderError` when it cannot be asked or read."""
    try:
        answer = (session or requests).get(url, timeout=HTTP_TIMEOUT_SECONDS)
        if session is not None and answer.status_code in (401, 403):
            raise TokenRefused(f"{url} refused the access token ({answer.status_code})")
        answer.raise_for_status()
        document = answer.json()
    except (requests.RequestException, ValueError) as error:
        raise ProviderError(f"{url}: {error}") from error
    if not isinstance(document, dict):
        raise ProviderError(f"{url}: not a JSON object")
    return document


def discovery(provider: ProviderConfig) -> dict:
    """The provider's discovery document, ``<issuer>/.well-known/openid-configuration``,
    whose ``issuer`` must be the configured one exactly (OpenID Connect Discovery 1.0,
    section 4.3: else a document could speak for another issuer)."""

    def checked(document: dict) -> dict:
        if document.get("issuer") != provider.issuer:
            raise ProviderError(f"the discovery document names issuer {document.get('issuer')!r}")
        for name in ("authorization_endpoint", "token_endpoint", "jwks_uri"):
            if not isinstance(document.get(name), str):
                raise ProviderError(f"the discovery document has no {name}")
        return document

    return _discoveries.get(provider.issuer.rstrip("/") + "/.well-known/openid-configuration", checked)


def signing_algorithms(document: dict) -> list[str]:
    """The algorithms an ID token may be signed with: those the discovery document lists,
    never ``none`` (an unsigned token) nor an HMAC one (signed with the client secret, which
    the JWKS cannot check); RS256 when it lists none, as OpenID Connect Core requires."""
    listed = document.get("id_token_signing_alg_values_supported") or ["RS256"]
    return [alg for alg in listed if isinstance(alg, str) and alg.lower() != "none" and not alg.startswith("HS")]


def _session(provider: ProviderConfig, redirect_uri: str) -> OAuth2Session:
    return OAuth2Session(
        provider.client_id,
        provider.client_secret,
        scope=" ".join(provider.scopes),
        redirect_uri=redirect_uri,
        code_challenge_method="S256",
        default_timeout=HTTP_TIMEOUT_SECONDS,
    )


def authorization_url(
    provider: ProviderConfig, *, redirect_uri: str, state: str, nonce: str, code_verifier: str
) -> str:
    """The URL that sends the browser to the provider: the code flow, PKCE (S256) with
    ``code_verifier``, ``state`` and ``nonce``."""
    endpoint = discovery(provider)["authorization_endpoint"]
    url, _ = _session(provider, redirect_uri).create_authorization_url(
        endpoint, state=state, code_verifier=code_verifier, nonce=nonce
    )
    return url


def exchange_code(provider: ProviderConfig, *, redirect_uri: str, code: str, code_verifier: str) -> Tokens:
    """The tokens the provider gives for ``code`` (the token request, with the PKCE
    verifier and the client's secret). Raises :class:`CodeRefused` when the provider
    answers an OAuth 2.0 error (the code used, expired, or not this client's), else
    :class:`ProviderError`."""
    endpoint = discovery(provider)["token_endpoint"]
    try:
        token = _session(provider, redirect_uri).fetch_token(endpoint, code=code, code_verifier=code_verifier)
    except AuthlibBaseError as error:
        # The token endpoint's OAuth 2.0 error (Authlib's OAuthError, e.g. invalid_grant).
        raise CodeRefused(error.error or "invalid_grant") from error
    except (requests.RequestException, ValueError) as error:
        raise ProviderError(f"the token request failed: {error}") from error
    id_token, access_token = token.get("id_token"), token.get("access_token")
    if not isinstance(id_token, str):
        raise ProviderError("the token answer holds no ID token")
    return Tokens(id_token, access_token if isinstance(access_token, str) and access_token else None)


def userinfo(provider: ProviderConfig, access_token: str) -> UserInfo:
    """The claims the provider's UserInfo endpoint answers for ``access_token`` (OpenID
    Connect Core 1.0, 5.3), as Authlib's ``UserInfo``; nothing is checked yet (see
    :func:`with_userinfo`). Raises :class:`TokenRefused` when the endpoint refuses the
    token (401, 403), :class:`ProviderError` when it cannot be asked or read (a signed,
    ``application/jwt`` answer is not read)."""
    endpoint = discovery(provider).get("userinfo_endpoint")
    if not isinstance(endpoint, str):
        raise ProviderError("the discovery document has no userinfo_endpoint")
    session = OAuth2Session(provider.client_id, token={"access_token": access_token, "token_type": "Bearer"})
    return UserInfo(_get_json(endpoint, session))


def with_userinfo(identity: VerifiedIdentity, claims: dict) -> VerifiedIdentity:
    """``identity`` (from the verified ID token) with the scopes' claims of a UserInfo
    answer (OpenID Connect Core 1.0, 5.3.2 and 5.4):

    1. its ``sub`` must be the ID token's exactly, else it is about someone else (a token
       swapped in), and :class:`TokenRefused` ends the sign-in;
    2. ``email`` with ``email_verified``, from UserInfo when it names an address (verified
       only if UserInfo says ``true``: never by the ID token's word about another address),
       else both from the ID token;
    3. ``preferred_username`` from UserInfo when it has one;
    4. who signed in and how (``iss``, ``sub``, ``amr``, ``acr``) stay the ID token's.
    """
    if not isinstance(claims.get("sub"), str) or not constant_time_compare(claims["sub"], identity.subject):
        raise TokenRefused("the UserInfo answer is about another subject than the ID token")
    changes: dict = {}
    email = claims.get("email")
    if isinstance(email, str) and email:
        changes |= {"email": email, "email_verified": claims.get("email_verified") is True}
    username = claims.get("preferred_username")
    if isinstance(username, str) and username:
        changes["preferred_username"] = username
    return dataclasses.replace(identity, **changes)


def token_digest(issuer: str, claims: dict, id_token: str) -> str:
    """What names an ID token for using it once: the SHA-256 of its issuer and ``jti``
    (unique per issuer, RFC 7519 4.1.7), or of the whole token when it has none."""
    jti = claims.get("jti")
    named = f"jti\0{issuer}\0{jti}" if isinstance(jti, str) and jti else f"token\0{id_token}"
    return hashlib.sha256(named.encode()).hexdigest()


def _key_set(document: dict, *, refresh: bool = False) -> KeySet:
    return _key_sets.get(document["jwks_uri"], KeySet.import_key_set, refresh=refresh)


def verify_id_token(
    provider: ProviderConfig,
    id_token: str,
    *,
    nonce: str | None,
    client_id: str | None = None,
    access_token: str | None = None,
    now: int | None = None,
) -> VerifiedIdentity:
    """The identity ``id_token`` proves, after checking (OpenID Connect Core 1.0, 3.1.3.7):

    1. its signature, by a key of the issuer's JWKS, with an algorithm the discovery
       document lists (:func:`signing_algorithms`: never ``none``);
    2. ``iss`` is the configured issuer, so another provider's token is not taken for it;
    3. ``aud`` names this client (``client_id``, by default the provider's web client; the
       token login passes one of :attr:`ProviderConfig.client_ids`), and ``azp`` does when
       there are several audiences, so a token issued to another site is not replayed here;
    4. ``exp`` has not passed and ``iat`` is not in the future (:data:`LEEWAY_SECONDS`);
    5. ``nonce`` is this login's, so a token from another login cannot be injected (``None``
       only for a mobile app's token that was requested without one);
    6. ``at_hash``, when the token has one and an ``access_token`` comes with it, is that
       access token's (3.2.2.9), so an app cannot pair the token with another's access token.

    Raises :class:`TokenRefused`, or :class:`ProviderError` when the JWKS cannot be read.
    """
    document = discovery(provider)
    algorithms = signing_algorithms(document)
    try:
        token = _decode(id_token, _key_set(document), algorithms)
    except _UnknownKey:
        # The provider may have rotated its keys since the JWKS was cached.
        try:
            token = _decode(id_token, _key_set(document, refresh=True), algorithms)
        except _UnknownKey as error:
            raise TokenRefused("signed by a key not in the issuer's JWKS") from error
    claims = token.claims
    audience = client_id or provider.client_id
    checks: dict = {
        "iss": {"essential": True, "value": provider.issuer},
        "aud": {"essential": True, "value": audience},
        "sub": {"essential": True},
        "exp": {"essential": True},
        "iat": {"essential": True},
    }
    if nonce is not None:
        checks["nonce"] = {"essential": True, "value": nonce}
    registry = jwt.JWTClaimsRegistry(now=now, leeway=LEEWAY_SECONDS, **checks)
    try:
        registry.validate(claims)
    except JoseError as error:
        raise TokenRefused(f"claim check failed: {error}") from error
    audiences = claims["aud"] if isinstance(claims["aud"], list) else [claims["aud"]]
    if len(audiences) > 1 and claims.get("azp") != audience:
        raise TokenRefused("several audiences, and azp is not this client")
    if access_token is not None and "at_hash" in claims:
        expected = create_half_hash(access_token, token.header.get("alg", ""))
        at_hash = claims["at_hash"]
        if expected is None or not isinstance(at_hash, str) or not constant_time_compare(at_hash, expected.decode()):
            raise TokenRefused("at_hash is not the access token's")
    email = claims.get("email")
    amr = claims.get("amr")
    acr = claims.get("acr")
    return VerifiedIdentity(
        issuer=claims["iss"],
        subject=claims["sub"],
        email=email if isinstance(email, str) and email else None,
        email_verified=claims.get("email_verified") is True,
        preferred_username=claims.get("preferred_username")
        if isinstance(claims.get("preferred_username"), str)
        else None,
        amr=tuple(value for value in amr if isinstance(value, str)) if isinstance(amr, list) else (),
        acr=acr if isinstance(acr, str) else None,
        token_digest=token_digest(claims["iss"], claims, id_token),
        accepted_until=int(claims["exp"]) + LEEWAY_SECONDS,
    )


class _UnknownKey(Exception):
    pass


def _decode(id_token: str, key_set: KeySet, algorithms: list[str]):
    try:
        return jwt.decode(id_token, lambda guest: _key_for(key_set, guest), algorithms=algorithms)
    except _UnknownKey:
        raise
    except (JoseError, ValueError, TypeError) as error:
        raise TokenRefused(f"not a valid signed token: {error}") from error


def _key_for(key_set: KeySet, guest):
    """The JWKS key the token's header names (by ``kid``, else the only key of its type)."""
    header = guest.headers()
    try:
        return key_set.get_by_kid(header["kid"]) if "kid" in header else key_set
    except InvalidKeyIdError as error:
        raise _UnknownKey(str(error)) from error
