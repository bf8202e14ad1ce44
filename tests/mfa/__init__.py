"""Helpers for the tests of second factors: enrolling through the pages as a person does,
with a software authenticator (tests/authenticator.py) and pyotp for the app's codes."""

import time

import pyotp

from tests import authenticator
from tests.web import PASSWORD, login

# The origin of the relying party: ACCOUNTS_SITE_URL of the test settings, where the test
# client's requests come from.
ORIGIN = "http://testserver"


def options(client, purpose):
    """The options of a passkey ceremony, as webauthn.js asks for them."""
    response = client.post(f"/accounts/mfa/passkey/options/{purpose}/")
    assert response.status_code == 200, response.content
    return response.json()


def add_passkey(client, name="Laptop", **create_options):
    """Register a new passkey from the passkeys page; returns ``(credential, response)``."""
    credential, answer = authenticator.create(options(client, "register"), ORIGIN, **create_options)
    return credential, client.post("/accounts/mfa/passkeys/", {"name": name, "credential": answer})


def passkey_login(client, credential, **get_options):
    """Log in with ``credential`` alone, as the login page's passkey button does."""
    answer = authenticator.get(credential, options(client, "login"), ORIGIN, **get_options)
    return client.post("/accounts/mfa/passkey/login/", {"credential": answer})


def enable_totp(client):
    """Turn the authenticator app on from its page; returns ``(secret, recovery codes shown)``."""
    page = client.get("/accounts/mfa/totp/")
    secret = page.context["secret"]
    response = client.post("/accounts/mfa/totp/", {"code": pyotp.TOTP(secret).now()})
    assert response.status_code == 200, response.content
    return secret, response.context["codes"]


def code_of(secret, at=None):
    """The app's code for ``secret`` now (or at epoch second ``at``)."""
    return pyotp.TOTP(secret).at(time.time() if at is None else at)


def second_step(client, code):
    """Send the second step of a login."""
    return client.post("/accounts/mfa/authenticate/", {"code": code})


def password_login(client, name="ada"):
    return login(client, name, PASSWORD)
