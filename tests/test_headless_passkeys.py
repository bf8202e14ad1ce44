"""Passkeys through the API: a login with a passkey alone, and a passkey as the second step
of a password login, for the app client (the session token carries the challenge)."""

import json

import pytest

from tests import authenticator
from tests.headless import APIClient
from tests.mfa import ORIGIN, add_passkey
from tests.web import signed_up_client

pytestmark = pytest.mark.dynamodb_local


@pytest.fixture
def passkey(ddb):
    """The passkey ``ada`` registered from the passkeys page."""
    credential, response = add_passkey(signed_up_client())
    assert response.status_code == 302
    return credential


def answer(credential, options, **get_options):
    return json.loads(
        authenticator.get(credential, options["data"]["request_options"]["publicKey"], ORIGIN, **get_options)
    )


def test_an_app_logs_in_with_a_passkey_alone(passkey):
    app = APIClient("app")
    options = app.get("auth/webauthn/login").json()

    logged_in = app.post("auth/webauthn/login", {"credential": answer(passkey, options)})

    assert logged_in.status_code == 200, logged_in.content
    assert logged_in.json()["data"]["user"]["username"] == "ada"
    assert app.get("auth/session").status_code == 200


def test_a_passkey_answer_sent_twice_logs_in_once(passkey):
    app = APIClient("app")
    options = app.get("auth/webauthn/login").json()
    credential = answer(passkey, options)
    challenge_token = app.token
    assert app.post("auth/webauthn/login", {"credential": credential}).status_code == 200

    replay = APIClient("app")
    replay.token = challenge_token

    assert replay.post("auth/webauthn/login", {"credential": credential}).status_code == 410


def test_a_forged_passkey_answer_is_a_400_on_credential(passkey):
    app = APIClient("app")
    app.get("auth/webauthn/login")

    refused = app.post("auth/webauthn/login", {"credential": {"id": "nope", "type": "public-key"}})

    assert refused.status_code == 400
    assert refused.json()["errors"][0]["param"] == "credential"


def test_a_password_login_of_an_account_with_a_passkey_waits_for_it_as_second_step(passkey):
    app = APIClient("app")
    pending = app.login("ada")
    assert pending.status_code == 401
    flow = next(flow for flow in pending.json()["data"]["flows"] if flow.get("is_pending"))
    assert flow == {"id": "mfa_authenticate", "is_pending": True, "types": ["webauthn"]}
    options = app.get("auth/webauthn/authenticate").json()

    second = app.post("auth/webauthn/authenticate", {"credential": answer(passkey, options, user_verified=False)})

    assert second.status_code == 200, second.content
    assert [method["method"] for method in second.json()["data"]["methods"]] == ["password", "mfa"]
