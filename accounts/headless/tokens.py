"""The API's token strategy (django-allauth's ``HEADLESS_TOKEN_STRATEGY``, here
``ACCOUNTS_HEADLESS_TOKEN_STRATEGY``): ``"session"`` hands the ``app`` client its session token
alone; ``"jwt"`` (allauth's ``JWTTokenStrategy``) hands it, with each new session token of a
logged-in session (a login, a password change), an access token and a refresh token
(``meta.access_token``, ``meta.refresh_token``).

Both are JWTs signed with ``ACCOUNTS_HEADLESS_JWT_ALGORITHM`` (``RS256`` with
``ACCOUNTS_HEADLESS_JWT_PRIVATE_KEY``, or ``HS256``) through joserfc, with allauth's claims:
``sub`` (the account id), ``sid`` (the session, encrypted: a leaked access token cannot be sent
as a session token), ``jti``, ``iat``, ``exp`` and ``token_use`` (``access`` or ``refresh``).

- An access token lives ``ACCOUNTS_HEADLESS_JWT_ACCESS_TOKEN_EXPIRES_IN`` (300 s). The API
  accepts it as ``Authorization: Bearer <token>`` in place of ``X-Session-Token``, as allauth
  does: it stands for its session, so once that session ended (logout, password change) the
  API answers 410. A host's own views check one with :func:`validate_access_token`.
- A refresh token lives ``ACCOUNTS_HEADLESS_JWT_REFRESH_TOKEN_EXPIRES_IN`` (a day) and is
  exchanged at ``tokens/refresh`` for a new access token and (``ROTATE_REFRESH_TOKEN``, the
  default) the next refresh token. It dies, and nothing is issued for it, because:

  1. it is used once: the exchange is ONE transaction that puts the record of its ``jti``
     (:func:`accounts.transactions.refresh_token_spend`, guarded ``attribute_not_exists``),
     so of two exchanges of one token one commits and the other gets nothing;
  2. it belongs to one session, which that transaction checks still lives
     (:func:`accounts.transactions.session_live_check`): a logout, the session's end, and a
     password change or reset (which ends every session of the account, the changing one
     taking a new key) end every refresh token of it, whatever the timing;
  3. its signature and ``exp`` are checked first, and its ``sub`` must be the session's user.

Issuing writes nothing: the tokens are signed, and the only state is the record of a use.
"""

from __future__ import annotations

import time
import uuid
from dataclasses import dataclass
from functools import cache
from importlib import import_module
from typing import Any

from django.conf import settings
from django.contrib.auth import SESSION_KEY
from django.contrib.sessions.backends.base import SessionBase
from django.core.exceptions import ImproperlyConfigured
from django.http import HttpRequest
from django.utils.crypto import salted_hmac
from joserfc import jwe, jwt
from joserfc.errors import JoseError
from joserfc.jwk import OctKey, RSAKey
from joserfc.jwt import JWTClaimsRegistry

from .. import dynamo, sessions, transactions
from ..app_settings import app_settings
from ..exceptions import StaleItem
from .tables import UsedRefreshToken

ACCESS, REFRESH = "access", "refresh"
SID_SALT = "accounts.headless.tokens.sid"
SID_HEADER = {"alg": "dir", "enc": "A256GCM"}


def jwt_enabled() -> bool:
    """Whether the API hands out JWTs (``ACCOUNTS_HEADLESS_TOKEN_STRATEGY = "jwt"``)."""
    return app_settings.HEADLESS_TOKEN_STRATEGY == "jwt"


@dataclass(frozen=True)
class AccessToken:
    """A valid access token: its account's id (``sub``), its session's key, its claims."""

    user_id: str
    session_key: str
    claims: dict[str, Any]


@dataclass(frozen=True)
class SigningKeys:
    """The algorithm of the tokens, the key that signs them, the key that verifies them, and
    the JOSE header they carry (an RSA key's ``kid``: its thumbprint)."""

    algorithm: str
    signing: OctKey | RSAKey
    verifying: OctKey | RSAKey
    header: dict[str, str]


def signing_keys() -> SigningKeys:
    """The keys of ``ACCOUNTS_HEADLESS_JWT_ALGORITHM`` (``HS*``: the private key setting, else
    ``SECRET_KEY``; ``RS*``: the PEM of ``ACCOUNTS_HEADLESS_JWT_PRIVATE_KEY``). Raises
    :class:`~django.core.exceptions.ImproperlyConfigured` when they cannot be made (system
    check ``accounts.headless.E001`` says so at start)."""
    algorithm = app_settings.HEADLESS_JWT_ALGORITHM
    key = app_settings.HEADLESS_JWT_PRIVATE_KEY
    if algorithm.startswith("HS"):
        return _keys(algorithm, key or settings.SECRET_KEY)
    return _keys(algorithm, key)


@cache
def _keys(algorithm: str, key: str) -> SigningKeys:
    if algorithm in ("HS256", "HS384", "HS512"):
        secret = OctKey.import_key(key.encode())
        return SigningKeys(algorithm, secret, secret, {"alg": algorithm})
    if algorithm in ("RS256", "RS384", "RS512"):
        if not key:
            raise ImproperlyConfigured(
                f"ACCOUNTS_HEADLESS_JWT_PRIVATE_KEY must hold an RSA private key (PEM) for {algorithm}."
            )
        try:
            private = RSAKey.import_key(key)
        except (JoseError, ValueError, TypeError) as error:
            raise ImproperlyConfigured(
                f"ACCOUNTS_HEADLESS_JWT_PRIVATE_KEY is not an RSA private key: {error}"
            ) from error
        if not private.is_private:
            raise ImproperlyConfigured("ACCOUNTS_HEADLESS_JWT_PRIVATE_KEY is an RSA public key, not a private one.")
        public = RSAKey.import_key(private.as_dict(private=False))
        return SigningKeys(algorithm, private, public, {"alg": algorithm, "kid": private.thumbprint()})
    raise ImproperlyConfigured(
        f"ACCOUNTS_HEADLESS_JWT_ALGORITHM {algorithm!r} is not one of HS256, RS256 (or 384, 512)."
    )


def _sid_key() -> OctKey:
    return OctKey.import_key(salted_hmac(SID_SALT, "sid", algorithm="sha256").digest())


def sid_of(session_key: str) -> str:
    """The ``sid`` claim of ``session_key``: encrypted (JWE, under ``SECRET_KEY``), so that
    an access token, which apps send to other services, never carries a session token."""
    return jwe.encrypt_compact(SID_HEADER, session_key.encode(), _sid_key())


def session_key_of(sid: str) -> str | None:
    """The session key a ``sid`` claim encrypts, or ``None`` (not one of ours)."""
    try:
        return (jwe.decrypt_compact(sid, _sid_key()).plaintext or b"").decode() or None
    except (JoseError, ValueError, UnicodeDecodeError):
        return None


def _encode(use: str, *, user_id: str, session_key: str, expires_in: int) -> str:
    keys = signing_keys()
    now = int(time.time())
    payload = {
        "iat": now,
        "exp": now + expires_in,
        "sid": sid_of(session_key),
        "jti": str(uuid.uuid4()),
        "token_use": use,
        "sub": str(user_id),
    }
    return jwt.encode(keys.header, payload, keys.signing, algorithms=[keys.algorithm])


def decode(token: str, use: str) -> dict[str, Any] | None:
    """The claims of ``token`` when its signature holds, it has not expired, it is a token
    of ``use`` and carries allauth's claims; else ``None``."""
    keys = signing_keys()
    try:
        claims = jwt.decode(token, keys.verifying, algorithms=[keys.algorithm]).claims
        JWTClaimsRegistry(exp={"essential": True}).validate(claims)
    except (JoseError, ValueError, TypeError):
        return None
    if claims.get("token_use") != use or not all(isinstance(claims.get(name), str) for name in ("jti", "sub", "sid")):
        return None
    return claims


def new_access_token(user_id: str, session_key: str) -> str:
    """A new access token of account ``user_id``'s session ``session_key``."""
    expires_in = app_settings.HEADLESS_JWT_ACCESS_TOKEN_EXPIRES_IN
    return _encode(ACCESS, user_id=user_id, session_key=session_key, expires_in=expires_in)


def new_refresh_token(user_id: str, session_key: str) -> str:
    """A new refresh token of account ``user_id``'s session ``session_key`` (nothing stored)."""
    expires_in = app_settings.HEADLESS_JWT_REFRESH_TOKEN_EXPIRES_IN
    return _encode(REFRESH, user_id=user_id, session_key=session_key, expires_in=expires_in)


def for_new_session(request: HttpRequest) -> dict[str, str]:
    """``{"access_token", "refresh_token"}`` to hand the app with the new session token of a
    logged-in session (a login, a password change), under the JWT strategy; else ``{}``."""
    if not jwt_enabled() or not request.user.is_authenticated or not request.session.session_key:
        return {}
    user_id, session_key = str(request.user.pk), request.session.session_key
    return {
        "access_token": new_access_token(user_id, session_key),
        "refresh_token": new_refresh_token(user_id, session_key),
    }


def bearer_token(request: HttpRequest) -> str | None:
    """The credential of the ``Authorization`` header in the scheme
    ``ACCOUNTS_HEADLESS_JWT_AUTHORIZATION_HEADER_SCHEME`` (``Bearer``), or ``None``."""
    parts = request.headers.get("Authorization", "").split()
    scheme = app_settings.HEADLESS_JWT_AUTHORIZATION_HEADER_SCHEME
    return parts[1] if len(parts) == 2 and parts[0].lower() == scheme.lower() else None


def _session_store(session_key: str | None = None) -> SessionBase:
    store: SessionBase = import_module(settings.SESSION_ENGINE).SessionStore(session_key)
    return store


def _session_user(session_key: str) -> str | None:
    """The id of the user session ``session_key`` is logged in as (one read), or ``None``
    when the session is gone, expired or of nobody."""
    session = _session_store(session_key)
    user_id = session.get(SESSION_KEY)
    return str(user_id) if user_id is not None and session.session_key else None


def validate_access_token(token: str) -> AccessToken | None:
    """The access token ``token`` when it is valid (signature, ``exp``, an access token), and
    with ``ACCOUNTS_HEADLESS_JWT_STATEFUL_VALIDATION_ENABLED`` when its session still lives
    logged in as its ``sub`` (one read); else ``None``. For a host's own API views."""
    claims = decode(token, ACCESS) if jwt_enabled() else None
    session_key = session_key_of(claims["sid"]) if claims else None
    if claims is None or session_key is None:
        return None
    if app_settings.HEADLESS_JWT_STATEFUL_VALIDATION_ENABLED and _session_user(session_key) != claims["sub"]:
        return None
    return AccessToken(user_id=claims["sub"], session_key=session_key, claims=claims)


def session_key_of_request(request: HttpRequest) -> str | None:
    """The session an app's request speaks for by an access token (``Authorization``), under
    the JWT strategy; ``None`` without a valid one. Whether that session still lives is the
    session's own load to say (410 when it is gone)."""
    token = bearer_token(request) if jwt_enabled() else None
    claims = decode(token, ACCESS) if token else None
    return session_key_of(claims["sid"]) if claims else None


@dataclass(frozen=True)
class Refreshed:
    """What ``tokens/refresh`` hands out: a new access token, and the next refresh token
    (``None`` when refresh tokens are not rotated: the one sent stays valid)."""

    access_token: str
    refresh_token: str | None


def refresh(token: str) -> Refreshed | None:
    """Exchange refresh token ``token``: ``None`` when it is not valid (signature, ``exp``, a
    refresh token), its session is gone or is not its ``sub``'s, or it was used (see the
    module); else the new tokens. Costs the session's read, then (rotating) ONE transaction."""
    claims = decode(token, REFRESH) if jwt_enabled() else None
    session_key = session_key_of(claims["sid"]) if claims else None
    if claims is None or session_key is None or _session_user(session_key) != claims["sub"]:
        return None
    user_id = claims["sub"]
    if not app_settings.HEADLESS_JWT_ROTATE_REFRESH_TOKEN:
        return Refreshed(new_access_token(user_id, session_key), None)
    spend = transactions.refresh_token_spend(UsedRefreshToken.build(claims["jti"], int(claims["exp"])))
    check = (
        transactions.session_live_check(dynamo.table_name(), sessions.raw_key(session_key))
        if sessions.in_use()
        else None
    )
    try:
        transactions.run_once(transactions.plan_refresh(spend, check))
    except StaleItem:
        return None
    return Refreshed(new_access_token(user_id, session_key), new_refresh_token(user_id, session_key))
