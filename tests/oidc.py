"""A real OpenID provider for the tests: the npm package ``oidc-provider`` (pinned in
tests/oidc_provider/package.json and its lock file), installed into var/oidc-provider by
``make test`` (or here, when missing) and started on 127.0.0.1 by tests/oidc_provider/provider.mjs.

It runs at the library's defaults (the scopes' claims come from the UserInfo endpoint, not
the ID token); :func:`oidc_site_each` runs a test once more with them in the ID token too
(``conformIdTokenClaims: false``), as Google and Keycloak do. Its development login pages
accept any password; the login name is the subject, and :data:`USERS` gives some of them an
address (an unknown name gets an unverified one). It logs every request it answers
(:meth:`OidcProvider.calls`), so a test can count what the site asked it.
"""

import json
import re
import shutil
import subprocess
import tempfile
from pathlib import Path
from urllib.parse import parse_qs, urljoin, urlsplit

import pytest
import requests

from accounts.dynamodb_local import free_port
from accounts.providers import oidc

ROOT = Path(__file__).resolve().parent.parent
SOURCES = ROOT / "tests" / "oidc_provider"
PREFIX = ROOT / "var" / "oidc-provider"
CLIENT_ID = "site"
CLIENT_SECRET = "test-client-secret-0123456789"
PROVIDER_ID = "test"
PROVIDER_NAME = "Test ID"
CALLBACK_PATH = f"/accounts/providers/{PROVIDER_ID}/callback/"
# The people of the provider: alice has a verified address; mallory claims ada's address,
# which the provider never verified (the pre-account hijack).
USERS = {
    "alice": {"email": "alice@example.com", "email_verified": True, "preferred_username": "ally"},
    "bob": {"email": "bob@example.com", "email_verified": True},
    "mallory": {"email": "ada@example.com", "email_verified": False},
}


def install(prefix: Path = PREFIX) -> Path:
    """``npm ci`` the pinned oidc-provider into ``prefix`` unless it is there; its node_modules."""
    modules = prefix / "node_modules"
    lock = SOURCES / "package-lock.json"
    installed = prefix / "package-lock.json"
    if (modules / "oidc-provider").exists() and installed.exists() and installed.read_bytes() == lock.read_bytes():
        return modules
    npm = shutil.which("npm")
    if npm is None:
        raise RuntimeError("npm is needed to install the test OpenID provider (apt-get install npm)")
    prefix.mkdir(parents=True, exist_ok=True)
    shutil.copy(SOURCES / "package.json", prefix / "package.json")
    shutil.copy(lock, installed)
    subprocess.run(
        [npm, "ci", "--no-audit", "--no-fund", "--ignore-scripts"], cwd=prefix, check=True, capture_output=True
    )
    return modules


class OidcProvider:
    """oidc-provider on a free loopback port, with one client whose redirect URIs are
    ``redirect_uris``; a context manager. ``id_token_claims``: the scopes' claims in the ID
    token too (``conformIdTokenClaims: false``); by default, the library's: only in UserInfo."""

    def __init__(self, redirect_uris: list[str], *, id_token_claims: bool = False):
        self.port = free_port()
        self.issuer = f"http://127.0.0.1:{self.port}"
        self.redirect_uris = redirect_uris
        self.id_token_claims = id_token_claims
        self._process = None
        self._log = Path(tempfile.mkstemp(prefix="oidc-provider-", suffix=".log")[1])

    def calls(self, path: str) -> int:
        """How many requests to ``path`` (``/token``, ``/me``...) the provider answered so far."""
        return sum(1 for line in self._log.read_text().splitlines() if line.split()[1] == path)

    def __enter__(self):
        node = shutil.which("node")
        if node is None:
            raise RuntimeError("node is needed to run the test OpenID provider (apt-get install nodejs)")
        modules = install()
        client = {"client_id": CLIENT_ID, "client_secret": CLIENT_SECRET, "redirect_uris": self.redirect_uris}
        env = {
            "PATH": "/usr/bin:/bin",
            "OIDC_CLIENT": json.dumps(client),
            "OIDC_USERS": json.dumps(USERS),
            "OIDC_LOG": str(self._log),
            "OIDC_ID_TOKEN_CLAIMS": "1" if self.id_token_claims else "0",
        }
        self._process = subprocess.Popen(
            [node, str(SOURCES / "provider.mjs"), str(modules), str(self.port)],
            stdout=subprocess.PIPE,
            stderr=subprocess.DEVNULL,
            env=env,
            text=True,
        )
        line = self._process.stdout.readline()
        if not line.startswith("listening"):
            self.__exit__(None, None, None)
            raise RuntimeError(f"the test OpenID provider did not start: {line!r}")
        return self

    def __exit__(self, *exc):
        if self._process is not None:
            self._process.terminate()
            self._process.wait(timeout=10)
            self._process = None
        self._log.unlink(missing_ok=True)

    def setting(self, **overrides) -> dict:
        """This provider's entry of ``ACCOUNTS_OIDC_PROVIDERS``."""
        return {
            "id": PROVIDER_ID,
            "name": PROVIDER_NAME,
            "issuer": self.issuer,
            "client_id": CLIENT_ID,
            "client_secret": CLIENT_SECRET,
            **overrides,
        }


def sign_in_at_provider(authorize_url: str, login: str, callback_prefix: str) -> str:
    """Go through the provider's pages as a browser would (the login form with ``login``,
    then the consent form) and return the URL it sends the browser back to."""
    browser = requests.Session()
    browser.trust_env = False
    answer = browser.get(authorize_url, allow_redirects=False)
    for _ in range(20):
        if answer.is_redirect:
            location = urljoin(answer.url, answer.headers["Location"])
            if location.startswith(callback_prefix):
                return location
            answer = browser.get(location, allow_redirects=False)
            continue
        prompt = re.search(r'name="prompt" value="(\w+)"', answer.text)
        action = re.search(r'<form[^>]*action="([^"]+)"', answer.text)
        assert prompt and action, answer.text
        data = {"prompt": prompt.group(1), "login": login, "password": "any"}
        answer = browser.post(urljoin(answer.url, action.group(1)), data=data, allow_redirects=False)
    raise AssertionError("the provider never sent the browser back")


def cancel_at_provider(authorize_url: str, callback_prefix: str) -> str:
    """Go to the provider's login page as a browser would, press its "[ Cancel ]" link, and
    return the URL it sends the browser back to (``error=access_denied``)."""
    browser = requests.Session()
    browser.trust_env = False
    answer = browser.get(authorize_url)
    cancel = re.search(r'<a href="([^"]+)">\[ Cancel \]</a>', answer.text)
    assert cancel, answer.text
    answer = browser.get(urljoin(answer.url, cancel.group(1).replace("&amp;", "&")), allow_redirects=False)
    for _ in range(20):
        location = urljoin(answer.url, answer.headers["Location"])
        if location.startswith(callback_prefix):
            return location
        answer = browser.get(location, allow_redirects=False)
    raise AssertionError("the provider never sent the browser back")


def callback_query(url: str) -> dict:
    """The query of the provider's answer, as the test client takes it."""
    return {name: values[0] for name, values in parse_qs(urlsplit(url).query).items()}


def begin_at_site(client, next_url: str | None = None):
    """Press "Sign in with Test ID" on the site: the provider's authorization URL."""
    data = {"next": next_url} if next_url else {}
    response = client.post(f"/accounts/providers/{PROVIDER_ID}/login/", data)
    assert response.status_code == 302, response.content.decode()
    return response["Location"]


def provider_login(client, login: str):
    """A whole sign-in at the site with the provider's user ``login``: the callback's response."""
    url = sign_in_at_provider(begin_at_site(client), login, "http://testserver" + CALLBACK_PATH)
    return client.get(CALLBACK_PATH, callback_query(url))


@pytest.fixture(scope="session")
def oidc_provider():
    """The test OpenID provider, for the whole session, sending browsers back to the test
    client's site (``http://testserver``)."""
    with OidcProvider(["http://testserver" + CALLBACK_PATH]) as provider:
        yield provider


@pytest.fixture(scope="session")
def oidc_provider_id_token_claims():
    """The test OpenID provider putting the scopes' claims in the ID token too, as Google
    and Keycloak do (``conformIdTokenClaims: false``)."""
    with OidcProvider(["http://testserver" + CALLBACK_PATH], id_token_claims=True) as provider:
        yield provider


def configured(settings, provider: OidcProvider):
    """The site configured with ``provider`` (``ACCOUNTS_OIDC_PROVIDERS``), its discovery
    document and JWKS to be fetched afresh."""
    settings.ACCOUNTS_OIDC_PROVIDERS = [provider.setting()]
    oidc.forget_cached_documents()
    return provider


@pytest.fixture
def oidc_site(settings, ddb, oidc_provider):
    """The site configured with the test provider at its defaults."""
    yield configured(settings, oidc_provider)
    oidc.forget_cached_documents()


@pytest.fixture(params=["defaults", "id_token_claims"])
def oidc_site_each(request, settings, ddb):
    """The site configured with the test provider at its defaults, then (a second run of
    the test) with the scopes' claims in the ID token too."""
    name = "oidc_provider" if request.param == "defaults" else "oidc_provider_id_token_claims"
    yield configured(settings, request.getfixturevalue(name))
    oidc.forget_cached_documents()
