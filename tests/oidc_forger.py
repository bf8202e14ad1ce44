"""An OpenID provider whose ID tokens the test writes: discovery, a JWKS, a token endpoint and
(when the test gives it claims) a UserInfo endpoint on 127.0.0.1 (http.server in a thread),
signing with a test key through joserfc (Authlib's JOSE library). For the hostile tokens
and answers a real provider never gives."""

import base64
import json
import secrets
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from urllib.parse import parse_qs, urlsplit

import pytest
from joserfc import jwt
from joserfc.jwk import KeySet, RSAKey

from accounts.providers import oidc

CLIENT_ID = "site"
CLIENT_SECRET = "forged-client-secret"
PROVIDER_ID = "forged"
CALLBACK_PATH = f"/accounts/providers/{PROVIDER_ID}/callback/"


class ForgedProvider:
    """A context manager serving ``issuer``'s documents; ``id_token`` is what its token
    endpoint answers next."""

    def __init__(self):
        self.key = RSAKey.generate_key(2048, parameters={"kid": "test-key", "use": "sig", "alg": "RS256"})
        self.id_token = None
        # What the token endpoint answers next: the access token, or an OAuth error instead.
        self.access_token = "at"
        self.token_error = None
        # The UserInfo endpoint's claims (None: the discovery document lists no endpoint), and
        # the status it answers with.
        self.userinfo = None
        self.userinfo_status = 200
        self.token_requests = 0
        self.jwks_requests = 0
        # The Authorization header of each UserInfo request.
        self.userinfo_requests = []
        self._server = ThreadingHTTPServer(("127.0.0.1", 0), self._handler())
        self.issuer = f"http://127.0.0.1:{self._server.server_address[1]}"
        self._thread = threading.Thread(target=self._server.serve_forever, daemon=True)

    def __enter__(self):
        self._thread.start()
        return self

    def __exit__(self, *exc):
        self._server.shutdown()
        self._server.server_close()

    def setting(self, **overrides) -> dict:
        """This provider's entry of ``ACCOUNTS_OIDC_PROVIDERS``, with ``overrides``."""
        return {
            "id": PROVIDER_ID,
            "name": "Forged",
            "issuer": self.issuer,
            "client_id": CLIENT_ID,
            "client_secret": CLIENT_SECRET,
            "scopes": ["openid", "email"],
            **overrides,
        }

    def claims(self, nonce: str, **overrides) -> dict:
        """The claims of a token this provider would rightly issue, with ``overrides``."""
        now = int(time.time())
        claims = {
            "iss": self.issuer,
            "sub": "forged-subject",
            "aud": CLIENT_ID,
            "iat": now,
            "exp": now + 300,
            "jti": secrets.token_urlsafe(12),
            "nonce": nonce,
            "email": "forged@example.com",
            "email_verified": True,
        }
        claims.update(overrides)
        return {name: value for name, value in claims.items() if value is not None}

    def sign(self, claims: dict, key: RSAKey | None = None) -> str:
        key = key or self.key
        return jwt.encode({"alg": "RS256", "kid": key.kid}, claims, key)

    def _handler(self):
        provider = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, *args):
                pass

            def _json(self, document, status=200):
                body = json.dumps(document).encode()
                self.send_response(status)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(body)))
                self.end_headers()
                self.wfile.write(body)

            def do_GET(self):
                path = urlsplit(self.path).path
                if path == "/.well-known/openid-configuration":
                    document = {
                        "issuer": provider.issuer,
                        "authorization_endpoint": provider.issuer + "/auth",
                        "token_endpoint": provider.issuer + "/token",
                        "jwks_uri": provider.issuer + "/jwks",
                        "id_token_signing_alg_values_supported": ["RS256", "none"],
                    }
                    if provider.userinfo is not None:
                        document["userinfo_endpoint"] = provider.issuer + "/userinfo"
                    self._json(document)
                elif path == "/jwks":
                    provider.jwks_requests += 1
                    self._json(KeySet([provider.key]).as_dict(private=False))
                elif path == "/userinfo" and provider.userinfo is not None:
                    provider.userinfo_requests.append(self.headers.get("Authorization"))
                    self._json(provider.userinfo, status=provider.userinfo_status)
                else:
                    self.send_error(404)

            def do_POST(self):
                length = int(self.headers.get("Content-Length", 0))
                parse_qs(self.rfile.read(length).decode())
                provider.token_requests += 1
                if provider.token_error is not None:
                    self._json({"error": provider.token_error}, status=400)
                    return
                answer = {"token_type": "Bearer", "id_token": provider.id_token}
                if provider.access_token is not None:
                    answer["access_token"] = provider.access_token
                self._json(answer)

        return Handler


@pytest.fixture
def forged(settings, ddb):
    """The site configured with a :class:`ForgedProvider` (``ACCOUNTS_OIDC_PROVIDERS``), its
    discovery document and JWKS fetched afresh."""
    with ForgedProvider() as provider:
        settings.ACCOUNTS_OIDC_PROVIDERS = [provider.setting()]
        oidc.forget_cached_documents()
        yield provider
        oidc.forget_cached_documents()


def unsigned(claims: dict) -> str:
    """A token with ``alg: none`` (no signature), as an attacker writes it."""

    def part(document):
        return base64.urlsafe_b64encode(json.dumps(document).encode()).rstrip(b"=").decode()

    return f"{part({'alg': 'none', 'typ': 'JWT'})}.{part(claims)}."


def authorization_parameters(url: str) -> dict:
    """The query of the authorization URL the site sent the browser to."""
    return {name: values[0] for name, values in parse_qs(urlsplit(url).query).items()}
