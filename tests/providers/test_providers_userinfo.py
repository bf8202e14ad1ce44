"""The person's claims come from where OpenID Connect Core 1.0 says (5.4, 5.3.2): the
``email`` and ``profile`` scopes' from the UserInfo endpoint when the provider issued an
access token, else from the ID token; who signed in and how, only from the ID token; a
UserInfo answer about another subject refuses the sign-in.

Against the certified oidc-provider at its defaults (the scopes' claims in UserInfo alone)
and once more as Google and Keycloak behave (in the ID token too), and against answers the
test writes (tests/oidc_forger.py)."""

import pytest
from django.test import Client

from accounts.providers import flows, oidc
from tests.oidc import oidc_provider, oidc_provider_id_token_claims, oidc_site, oidc_site_each, provider_login  # noqa: F401
from tests.oidc_forger import CALLBACK_PATH, PROVIDER_ID, authorization_parameters, forged  # noqa: F401  (fixture)

SIGNUP = "/accounts/providers/signup/"


def test_a_first_sign_in_offers_the_address_and_username_the_provider_gives(oidc_site_each):
    client = Client()

    response = provider_login(client, "alice")

    assert response["Location"] == SIGNUP
    form = client.get(SIGNUP).context["form"]
    assert (form["email"].value(), form["username"].value()) == ("alice@example.com", "ally")
    pending = client.session[flows.PENDING_SESSION_KEY]
    assert (pending["email"], pending["email_verified"]) == ("alice@example.com", True)


def test_at_its_defaults_the_provider_is_asked_for_userinfo_once_per_sign_in(oidc_site):
    asked = oidc_site.calls("/me")

    provider_login(Client(), "bob")

    assert oidc_site.calls("/me") == asked + 1
    assert Client().get(SIGNUP).status_code == 302  # nothing pending in another browser


def test_an_address_the_provider_did_not_verify_stays_unverified_from_userinfo(oidc_site):
    client = Client()

    provider_login(client, "mallory")

    pending = client.session[flows.PENDING_SESSION_KEY]
    assert (pending["email"], pending["email_verified"]) == ("ada@example.com", False)


# Answers a real provider does not give: written by the test.


def answered(client, forged, **claims):
    """A sign-in at the forged provider whose token endpoint gives an ID token with
    ``claims`` (and the access token ``at``): the callback's response."""
    query = authorization_parameters(client.post(f"/accounts/providers/{PROVIDER_ID}/login/")["Location"])
    forged.id_token = forged.sign(forged.claims(query["nonce"], **claims))
    return client.get(CALLBACK_PATH, {"code": "any-code", "state": query["state"]})


def test_userinfo_is_asked_with_the_access_token(forged):
    forged.userinfo = {"sub": "forged-subject"}

    answered(Client(), forged)

    assert forged.userinfo_requests == ["Bearer at"]


def test_a_userinfo_answer_about_another_subject_refuses_the_sign_in(forged):
    forged.userinfo = {"sub": "victim", "email": "victim@example.com", "email_verified": True}
    client = Client()

    response = answered(client, forged)

    assert response.status_code == 400
    assert 'data-reason="refused"' in response.content.decode()
    assert flows.PENDING_SESSION_KEY not in client.session and "_auth_user_id" not in client.session


def test_userinfos_address_wins_and_its_verification_comes_with_it(forged):
    # The ID token vouches for one address; UserInfo names another and says nothing of it.
    forged.userinfo = {"sub": "forged-subject", "email": "other@example.com"}
    client = Client()

    answered(client, forged, email="forged@example.com", email_verified=True)

    pending = client.session[flows.PENDING_SESSION_KEY]
    assert (pending["email"], pending["email_verified"]) == ("other@example.com", False)


def test_without_an_address_in_userinfo_the_id_tokens_address_and_verification_stand(forged):
    forged.userinfo = {"sub": "forged-subject", "preferred_username": "forger"}
    client = Client()

    answered(client, forged, email="forged@example.com", email_verified=True)

    pending = client.session[flows.PENDING_SESSION_KEY]
    assert (pending["email"], pending["email_verified"], pending["preferred_username"]) == (
        "forged@example.com",
        True,
        "forger",
    )


def test_with_fetch_userinfo_off_the_id_token_alone_is_read(forged, settings):
    settings.ACCOUNTS_OIDC_PROVIDERS = [forged.setting(fetch_userinfo=False)]
    forged.userinfo = {"sub": "someone-else"}
    client = Client()

    answered(client, forged)

    assert forged.userinfo_requests == []
    assert client.session[flows.PENDING_SESSION_KEY]["email"] == "forged@example.com"


def test_a_userinfo_endpoint_refusing_the_access_token_refuses_the_sign_in(forged):
    forged.userinfo, forged.userinfo_status = {"error": "invalid_token"}, 401
    client = Client()

    response = answered(client, forged)

    assert response.status_code == 400
    assert flows.PENDING_SESSION_KEY not in client.session


def test_a_userinfo_endpoint_failing_says_the_provider_cannot_be_reached(forged):
    forged.userinfo, forged.userinfo_status = {"error": "server_error"}, 500
    client = Client()

    response = answered(client, forged)

    assert response.status_code == 503
    assert 'data-reason="unreachable"' in response.content.decode()
    assert flows.PENDING_SESSION_KEY not in client.session


# The merge itself (oidc.with_userinfo).

IDENTITY = oidc.VerifiedIdentity(
    issuer="https://id.example",
    subject="248289761001",
    email="token@example.com",
    email_verified=True,
    preferred_username="from-token",
    amr=("pwd",),
    acr="bronze",
)


def test_who_signed_in_and_how_stay_the_id_tokens_whatever_userinfo_says():
    claims = {"sub": "248289761001", "iss": "https://evil.example", "amr": ["mfa"], "acr": "gold", "email": "u@x.io"}

    merged = oidc.with_userinfo(IDENTITY, claims)

    assert (merged.issuer, merged.subject, merged.amr, merged.acr) == (
        IDENTITY.issuer,
        "248289761001",
        ("pwd",),
        "bronze",
    )
    assert (merged.email, merged.email_verified) == ("u@x.io", False)


@pytest.mark.parametrize("sub", [None, "248289761002", 248289761001, ""])
def test_a_userinfo_sub_not_exactly_the_id_tokens_is_refused(sub):
    with pytest.raises(oidc.TokenRefused):
        oidc.with_userinfo(IDENTITY, {"sub": sub, "email": "u@x.io", "email_verified": True})


@pytest.mark.parametrize("verified", ["true", 1, None])
def test_only_a_json_true_verifies_userinfos_address(verified):
    merged = oidc.with_userinfo(IDENTITY, {"sub": "248289761001", "email": "u@x.io", "email_verified": verified})

    assert merged.email_verified is False
