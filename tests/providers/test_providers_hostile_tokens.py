"""Hostile ID tokens are refused, each by its own check: the callback neither logs in nor
remembers an identity for the sign-up form. The tokens are signed here (tests/oidc_forger.py);
the first test shows that a rightly made one is accepted, so each refusal is the check's."""

import time

import pytest
from django.test import Client
from joserfc.jwk import RSAKey

from accounts.providers import flows, oidc
from tests.oidc_forger import (  # noqa: F401  (fixture)
    CALLBACK_PATH,
    PROVIDER_ID,
    authorization_parameters,
    forged,
    unsigned,
)


def begin(client):
    response = client.post(f"/accounts/providers/{PROVIDER_ID}/login/")
    assert response.status_code == 302
    return authorization_parameters(response["Location"])


def answer(client, forged, id_token, state):
    forged.id_token = id_token
    return client.get(CALLBACK_PATH, {"code": "any-code", "state": state})


def assert_refused(client, response, reason=flows.REFUSED):
    """The callback's page says the sign-in did not succeed, and why (400): nobody is
    logged in, no identity remembered."""
    assert response.status_code == 400
    assert f'data-reason="{reason}"' in response.content.decode()
    assert "_auth_user_id" not in client.session
    assert flows.PENDING_SESSION_KEY not in client.session


def test_a_rightly_made_token_is_accepted(forged):
    client = Client()
    query = begin(client)
    response = answer(client, forged, forged.sign(forged.claims(query["nonce"])), query["state"])
    assert response["Location"] == "/accounts/providers/signup/"
    assert client.session[flows.PENDING_SESSION_KEY]["subject"] == "forged-subject"


def test_the_authorization_request_uses_pkce_state_and_nonce(forged):
    query = begin(Client())
    assert query["code_challenge_method"] == "S256"
    assert len(query["code_challenge"]) == 43
    assert query["response_type"] == "code"
    assert query["state"] and query["nonce"] and query["state"] != query["nonce"]


def test_token_with_a_wrong_nonce_is_refused(forged):
    client = Client()
    query = begin(client)
    response = answer(client, forged, forged.sign(forged.claims("another-login's-nonce")), query["state"])
    assert_refused(client, response)


def test_token_for_another_audience_is_refused(forged):
    client = Client()
    query = begin(client)
    response = answer(client, forged, forged.sign(forged.claims(query["nonce"], aud="another-site")), query["state"])
    assert_refused(client, response)


def test_token_for_several_audiences_without_this_client_as_azp_is_refused(forged):
    client = Client()
    query = begin(client)
    claims = forged.claims(query["nonce"], aud=["site", "another-site"], azp="another-site")
    assert_refused(client, answer(client, forged, forged.sign(claims), query["state"]))


def test_expired_token_is_refused(forged):
    client = Client()
    query = begin(client)
    now = int(time.time())
    claims = forged.claims(query["nonce"], iat=now - 7200, exp=now - 3600)
    assert_refused(client, answer(client, forged, forged.sign(claims), query["state"]))


def test_token_issued_in_the_future_is_refused(forged):
    client = Client()
    query = begin(client)
    now = int(time.time())
    claims = forged.claims(query["nonce"], iat=now + 3600, exp=now + 7200)
    assert_refused(client, answer(client, forged, forged.sign(claims), query["state"]))


def test_token_of_another_issuer_is_refused(forged):
    client = Client()
    query = begin(client)
    claims = forged.claims(query["nonce"], iss="https://accounts.google.com")
    assert_refused(client, answer(client, forged, forged.sign(claims), query["state"]))


def test_unsigned_token_is_refused_though_discovery_lists_alg_none(forged):
    client = Client()
    query = begin(client)
    assert_refused(client, answer(client, forged, unsigned(forged.claims(query["nonce"])), query["state"]))


def test_token_signed_by_a_key_not_in_the_jwks_is_refused(forged):
    client = Client()
    query = begin(client)
    stranger = RSAKey.generate_key(2048, parameters={"kid": "stranger"})
    assert_refused(client, answer(client, forged, forged.sign(forged.claims(query["nonce"]), stranger), query["state"]))


def test_token_signed_by_another_key_under_the_jwks_key_id_is_refused(forged):
    client = Client()
    query = begin(client)
    impostor = RSAKey.generate_key(2048, parameters={"kid": "test-key"})
    assert_refused(client, answer(client, forged, forged.sign(forged.claims(query["nonce"]), impostor), query["state"]))


def test_token_without_a_subject_is_refused(forged):
    client = Client()
    query = begin(client)
    assert_refused(client, answer(client, forged, forged.sign(forged.claims(query["nonce"], sub=None)), query["state"]))


def test_replayed_state_is_refused(forged):
    client = Client()
    query = begin(client)
    token = forged.sign(forged.claims(query["nonce"]))
    assert answer(client, forged, token, query["state"])["Location"] == "/accounts/providers/signup/"
    # Back at the login page, the same answer sent again (a back button, an attacker's replay).
    session = client.session
    del session[flows.PENDING_SESSION_KEY]
    session.save()

    assert_refused(client, answer(client, forged, token, query["state"]), flows.EXPIRED)


def test_state_of_another_browser_is_refused_without_asking_the_provider(forged):
    victim, attacker = Client(), Client()
    query = begin(attacker)
    token = forged.sign(forged.claims(query["nonce"]))
    # The attacker's own answer, sent to the victim's browser (login CSRF): not its state.
    assert_refused(victim, answer(victim, forged, token, query["state"]), flows.UNKNOWN_STATE)
    assert forged.token_requests == 0


def test_jwks_is_fetched_once_for_many_sign_ins(forged):
    for _ in range(3):
        client = Client()
        query = begin(client)
        answer(client, forged, forged.sign(forged.claims(query["nonce"])), query["state"])
    assert forged.jwks_requests == 1


def test_token_without_an_expiry_is_refused(forged):
    client = Client()
    query = begin(client)
    assert_refused(client, answer(client, forged, forged.sign(forged.claims(query["nonce"], exp=None)), query["state"]))


def test_token_without_a_nonce_is_refused(forged):
    client = Client()
    query = begin(client)
    assert_refused(client, answer(client, forged, forged.sign(forged.claims(None)), query["state"]))


def test_expired_state_is_refused(forged, monkeypatch):
    client = Client()
    monkeypatch.setattr(flows, "STATE_SECONDS", -1)
    query = begin(client)
    response = answer(client, forged, forged.sign(forged.claims(query["nonce"])), query["state"])
    assert_refused(client, response, flows.EXPIRED)
    assert forged.token_requests == 0
