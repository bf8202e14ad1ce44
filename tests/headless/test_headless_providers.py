"""Identity providers through the API, on DynamoDB Local: an app's ID token
(``auth/provider/token``, tokens signed here by tests/oidc_forger.py) is verified exactly as
the callback's; an identity no account holds becomes a pending ``provider_signup``; the
second factor still applies (unless ``ACCOUNTS_OIDC_TRUST_PROVIDER_MFA`` trusts the
provider's ``amr``/``acr``); ``account/providers`` lists and unlinks with the page's rules;
``config`` lists the providers."""

import time

import pytest
from joserfc.jwk import RSAKey

from accounts import store
from accounts.providers import oidc
from accounts.providers import store as provider_store
from tests.headless import APIClient
from tests.headless_spec import conforms
from tests.mail import mails_to
from tests.mfa import code_of, enable_totp
from tests.oidc_forger import CLIENT_ID, PROVIDER_ID, ForgedProvider, unsigned
from tests.web import signed_up_client
from tests.web.test_web_round_trips import counted

pytestmark = pytest.mark.dynamodb_local
APP_CLIENT_ID = "site-ios"
SUBJECT = "forged-subject"


@pytest.fixture
def forged(settings, ddb):
    with ForgedProvider() as provider:
        settings.ACCOUNTS_OIDC_PROVIDERS = [provider.setting(app_client_ids=[APP_CLIENT_ID])]
        oidc.forget_cached_documents()
        yield provider
        oidc.forget_cached_documents()


def post_token(api, forged, id_token, client_id=APP_CLIENT_ID, process="login", **token):
    body = {
        "provider": PROVIDER_ID,
        "process": process,
        "token": {"client_id": client_id, "id_token": id_token, **token},
    }
    return api.post("auth/provider/token", body)


def token_of(forged, **claims):
    """A rightly made ID token of the forged provider for the app's client (no nonce unless
    given), a ``jti`` of its own."""
    return forged.sign(forged.claims(claims.pop("nonce", None), **{"aud": APP_CLIENT_ID, **claims}))


def pending(response):
    return [flow for flow in response.json()["data"]["flows"] if flow.get("is_pending")]


def assert_refused_token(api, response):
    assert response.status_code == 400, response.content
    assert response.json()["errors"][0]["code"] == "invalid_token"
    assert response.json()["errors"][0]["param"] == "token"
    session = api.get("auth/session")
    assert session.status_code == 401
    assert not pending(session)


def account_holding_the_identity(forged, email="ada@example.com", username="ada"):
    """A password account ``username`` that linked the forged provider's identity."""
    client = signed_up_client(email, username)
    provider_store.link(store.get_by_username(username), forged.issuer, SUBJECT)
    return client


# The token: verified as the callback verifies one.


def test_a_token_of_a_known_identity_signs_in(forged):
    account_holding_the_identity(forged)
    api = APIClient("app")

    response = post_token(api, forged, token_of(forged))

    assert response.status_code == 200, response.content
    data = response.json()["data"]
    assert data["user"]["username"] == "ada"
    assert data["methods"][-1] | {"at": 0} == {
        "method": "socialaccount",
        "provider": PROVIDER_ID,
        "uid": SUBJECT,
        "reauthenticated": False,
        "at": 0,
    }
    assert api.get("auth/session").status_code == 200


def test_a_token_for_the_web_client_signs_in_on_the_browser_client(forged):
    account_holding_the_identity(forged)

    response = post_token(APIClient("browser"), forged, token_of(forged, aud=CLIENT_ID), client_id=CLIENT_ID)

    assert response.status_code == 200, response.content


def test_an_id_token_for_another_client_posted_to_auth_provider_token_is_refused(forged):
    account_holding_the_identity(forged)
    api = APIClient("app")

    response = post_token(api, forged, token_of(forged, aud="another-site"))

    assert_refused_token(api, response)


def test_a_token_posted_with_a_client_id_the_provider_lacks_is_refused(forged):
    account_holding_the_identity(forged)
    api = APIClient("app")

    response = post_token(api, forged, token_of(forged, aud="another-site"), client_id="another-site")

    assert_refused_token(api, response)


def test_a_token_with_the_nonce_the_app_asked_with_signs_in_and_another_is_refused(forged):
    account_holding_the_identity(forged)

    right = post_token(APIClient("app"), forged, token_of(forged, nonce="app-nonce"), nonce="app-nonce")
    api = APIClient("app")
    wrong = post_token(api, forged, token_of(forged, nonce="another-nonce"), nonce="app-nonce")
    missing = post_token(api, forged, token_of(forged), nonce="app-nonce")

    assert right.status_code == 200, right.content
    assert_refused_token(api, wrong)
    assert_refused_token(api, missing)


@pytest.mark.parametrize(
    "hostile",
    [
        pytest.param(
            lambda forged: token_of(forged, exp=int(time.time()) - 3600, iat=int(time.time()) - 7200), id="expired"
        ),
        pytest.param(lambda forged: token_of(forged, iss="https://another-issuer.example"), id="iss-mismatch"),
        pytest.param(lambda forged: unsigned(forged.claims(None)), id="alg-none"),
        pytest.param(
            lambda forged: forged.sign(
                forged.claims(None), RSAKey.generate_key(2048, parameters={"kid": "test-key", "alg": "RS256"})
            ),
            id="key-not-in-jwks",
        ),
        pytest.param(lambda forged: token_of(forged, iat=int(time.time()) + 3600), id="issued-in-the-future"),
        pytest.param(lambda forged: "not.a.token", id="garbage"),
    ],
)
def test_a_hostile_token_is_refused_through_the_api(forged, hostile):
    account_holding_the_identity(forged)
    api = APIClient("app")

    response = post_token(api, forged, hostile(forged))

    assert_refused_token(api, response)


def test_a_token_of_an_unknown_provider_is_an_error_of_the_provider(forged):
    api = APIClient("app")
    body = {"provider": "nope", "process": "login", "token": {"client_id": CLIENT_ID, "id_token": token_of(forged)}}

    response = api.post("auth/provider/token", body)

    assert response.status_code == 400
    assert response.json()["errors"][0]["param"] == "provider"


# A first sign-in: the pending provider sign-up.


def test_an_unknown_identity_is_a_pending_provider_signup_then_one_form_makes_the_account(forged):
    api = APIClient("app")

    response = post_token(api, forged, token_of(forged, email="new@example.com"))

    assert response.status_code == 401
    (flow,) = pending(response)
    assert flow["id"] == "provider_signup"
    assert flow["provider"]["id"] == PROVIDER_ID and flow["provider"]["client_id"] == CLIENT_ID
    info = api.get("auth/provider/signup")
    assert info.status_code == 200
    assert info.json()["data"]["email"] == [{"email": "new@example.com", "primary": True, "verified": True}]
    assert info.json()["data"]["account"]["uid"] == SUBJECT

    created = api.post("auth/provider/signup", {"email": "new@example.com", "username": "newcomer"})

    assert created.status_code == 200, created.content
    assert created.json()["data"]["methods"][-1]["method"] == "socialaccount"
    account = store.get_by_username("newcomer")
    assert provider_store.identities_of(account) == [(forged.issuer, SUBJECT)]
    assert api.get("auth/provider/signup").status_code == 409
    again = post_token(APIClient("app"), forged, token_of(forged))
    assert again.status_code == 200 and again.json()["data"]["user"]["id"] == account.id


def test_the_provider_signup_is_a_conflict_when_none_is_pending(forged):
    api = APIClient("app")

    assert api.get("auth/provider/signup").status_code == 409
    assert api.post("auth/provider/signup", {"email": "a@example.com", "username": "a"}).status_code == 409


def test_a_verified_address_of_an_existing_account_does_not_sign_into_it_through_the_api(forged, settings):
    settings.ACCOUNTS_PREVENT_ENUMERATION = False
    signed_up_client("ada@example.com", "ada")
    attacker = APIClient("app")

    response = post_token(attacker, forged, token_of(forged, email="ada@example.com"))

    assert response.status_code == 401
    assert [flow["id"] for flow in pending(response)] == ["provider_signup"]
    taken = attacker.post("auth/provider/signup", {"email": "ada@example.com", "username": "mallory"})
    assert taken.status_code == 400
    assert [error["param"] for error in taken.json()["errors"]] == ["email"]
    assert attacker.get("auth/session").status_code == 401
    assert store.get_by_username("ada").oidc_identities is None


def test_an_unverified_claim_to_a_free_address_signs_up_unverified(forged, settings, mailoutbox):
    settings.ACCOUNTS_EMAIL_VERIFICATION = "mandatory"
    api = APIClient("app")
    post_token(api, forged, token_of(forged, email="claimed@example.com", email_verified=False))

    response = api.post("auth/provider/signup", {"email": "claimed@example.com", "username": "claimer"})

    assert response.status_code == 401
    assert [flow["id"] for flow in pending(response)] == ["verify_email"]
    assert store.is_verified(store.get_by_username("claimer")) is False
    assert mails_to("claimed@example.com")


def test_a_provider_signup_with_a_taken_address_answers_as_with_a_free_one_under_enumeration_prevention(
    forged, settings, mailoutbox
):
    settings.ACCOUNTS_EMAIL_VERIFICATION = "mandatory"
    settings.ACCOUNTS_PREVENT_ENUMERATION = True
    signed_up_client("ada@example.com", "ada")
    taken, free = APIClient("app"), APIClient("app")
    post_token(taken, forged, token_of(forged, email="ada@example.com"))
    post_token(free, forged, token_of(forged, sub="another-subject", email="free@example.com"))
    mailoutbox.clear()

    on_taken = taken.post("auth/provider/signup", {"email": "ada@example.com", "username": "mallory"})
    on_free = free.post("auth/provider/signup", {"email": "free@example.com", "username": "newcomer"})

    assert (on_taken.status_code, on_taken.json()["data"]) == (on_free.status_code, on_free.json()["data"])
    assert on_free.status_code == 401
    assert [flow["id"] for flow in pending(on_free)] == ["verify_email"]
    assert store.get_by_username("ada").oidc_identities is None
    assert len(mails_to("ada@example.com")) == 1 and len(mails_to("free@example.com")) == 1


def test_provider_signups_count_against_the_signup_limit_with_429_and_retry_after(forged, settings):
    settings.ACCOUNTS_RATE_LIMITS = {"signup": "1/h/ip"}
    first, second = APIClient("app"), APIClient("app")
    post_token(first, forged, token_of(forged, email="one@example.com"))
    post_token(second, forged, token_of(forged, sub="another-subject", email="two@example.com"))

    assert first.post("auth/provider/signup", {"email": "one@example.com", "username": "one"}).status_code == 200
    response = second.post("auth/provider/signup", {"email": "two@example.com", "username": "two"})

    assert response.status_code == 429
    assert int(response["Retry-After"]) > 0
    assert store.get_by_username("two") is None


# The second factor.


def test_the_second_factor_still_applies_to_a_token_sign_in(forged):
    owner = account_holding_the_identity(forged)
    secret, _ = enable_totp(owner)
    api = APIClient("app")

    response = post_token(api, forged, token_of(forged, amr=["pwd", "mfa"]))

    assert response.status_code == 401
    (flow,) = pending(response)
    assert flow["id"] == "mfa_authenticate"
    second = api.post("auth/2fa/authenticate", {"code": code_of(secret, at=time.time() + 30)})
    assert second.status_code == 200
    assert [method["method"] for method in second.json()["data"]["methods"]] == ["socialaccount", "mfa"]


@pytest.mark.parametrize("amr", [["pwd", "mfa"], ["pwd", "otp"], ["hwk"]])
def test_a_trusted_provider_reporting_a_second_factor_skips_the_second_step(forged, settings, amr):
    settings.ACCOUNTS_OIDC_TRUST_PROVIDER_MFA = True
    owner = account_holding_the_identity(forged)
    enable_totp(owner)

    response = post_token(APIClient("app"), forged, token_of(forged, amr=amr))

    assert response.status_code == 200, response.content


@pytest.mark.parametrize("amr", [None, ["pwd"], "mfa"])
def test_a_trusted_provider_not_reporting_a_second_factor_still_gets_the_second_step(forged, settings, amr):
    settings.ACCOUNTS_OIDC_TRUST_PROVIDER_MFA = True
    owner = account_holding_the_identity(forged)
    enable_totp(owner)

    response = post_token(APIClient("app"), forged, token_of(forged, amr=amr))

    assert response.status_code == 401
    assert [flow["id"] for flow in pending(response)] == ["mfa_authenticate"]


def test_a_provider_trusted_by_its_own_setting_with_a_listed_acr_skips_the_second_step(forged, settings):
    settings.ACCOUNTS_OIDC_PROVIDERS = [
        forged.setting(trust_mfa=True, mfa_acr_values=["gold"], app_client_ids=[APP_CLIENT_ID])
    ]
    owner = account_holding_the_identity(forged)
    enable_totp(owner)

    skipped = post_token(APIClient("app"), forged, token_of(forged, acr="gold"))
    asked = post_token(APIClient("app"), forged, token_of(forged, acr="bronze"))

    assert skipped.status_code == 200, skipped.content
    assert asked.status_code == 401


def test_a_provider_untrusted_by_its_own_setting_gets_the_second_step_whatever_the_global_one(forged, settings):
    settings.ACCOUNTS_OIDC_TRUST_PROVIDER_MFA = True
    settings.ACCOUNTS_OIDC_PROVIDERS = [forged.setting(trust_mfa=False, app_client_ids=[APP_CLIENT_ID])]
    owner = account_holding_the_identity(forged)
    enable_totp(owner)

    response = post_token(APIClient("app"), forged, token_of(forged, amr=["mfa"]))

    assert response.status_code == 401


# Linking and unlinking.


def test_account_providers_lists_the_linked_identity(forged):
    account_holding_the_identity(forged)
    api = APIClient("app")
    api.login("ada")

    response = api.get("account/providers")

    assert response.status_code == 200
    (linked,) = response.json()["data"]
    assert linked["uid"] == SUBJECT and linked["provider"]["id"] == PROVIDER_ID


def test_unlinking_through_the_api_needs_a_fresh_reauthentication(forged, settings):
    account_holding_the_identity(forged)
    api = APIClient("app")
    api.login("ada")
    settings.ACCOUNTS_REAUTHENTICATION_TIMEOUT = -1

    response = api.delete("account/providers", {"provider": PROVIDER_ID, "account": SUBJECT})

    assert response.status_code == 401
    assert {flow["id"] for flow in response.json()["data"]["flows"]} == {"reauthenticate", "reauthenticate_by_code"}
    assert store.get_by_username("ada").oidc_identities


def test_unlinking_through_the_api_removes_the_identity_and_mails_a_notice(forged, mailoutbox):
    account_holding_the_identity(forged)
    api = APIClient("app")
    api.login("ada")
    mailoutbox.clear()

    response = api.delete("account/providers", {"provider": PROVIDER_ID, "account": SUBJECT})

    assert response.status_code == 200, response.content
    assert response.json()["data"] == []
    assert not store.get_by_username("ada").oidc_identities
    assert mails_to("ada@example.com")
    assert post_token(APIClient("app"), forged, token_of(forged)).status_code == 401


def test_unlinking_the_last_way_in_through_the_api_is_refused(forged):
    provider_store.signup(
        email="only@example.com", username="only", issuer=forged.issuer, subject=SUBJECT, email_verified=True
    )
    api = APIClient("app")
    assert post_token(api, forged, token_of(forged)).status_code == 200

    response = api.delete("account/providers", {"provider": PROVIDER_ID, "account": SUBJECT})

    assert response.status_code == 400
    assert response.json()["errors"][0]["code"] == "no_password"
    assert provider_store.identities_of(store.get_by_username("only")) == [(forged.issuer, SUBJECT)]


def test_unlinking_an_identity_the_account_lacks_is_an_error_of_the_account(forged):
    account_holding_the_identity(forged)
    api = APIClient("app")
    api.login("ada")

    response = api.delete("account/providers", {"provider": PROVIDER_ID, "account": "someone-else"})

    assert response.status_code == 400
    assert response.json()["errors"][0]["code"] == "account_not_found"


def test_connecting_a_token_links_it_to_the_reauthenticated_account_and_the_lock_refuses_a_second(forged):
    signed_up_client("ada@example.com", "ada")
    signed_up_client("bob@example.com", "bob")
    ada, bob = APIClient("app"), APIClient("app")
    ada.login("ada")
    bob.login("bob")

    linked = post_token(ada, forged, token_of(forged), process="connect")
    refused = post_token(bob, forged, token_of(forged), process="connect")

    assert linked.status_code == 200, linked.content
    assert refused.status_code == 400
    assert refused.json()["errors"][0]["code"] == "account_taken"
    assert provider_store.identities_of(store.get_by_username("ada")) == [(forged.issuer, SUBJECT)]
    assert not store.get_by_username("bob").oidc_identities


def test_connecting_a_token_with_a_stale_login_asks_for_reauthentication(forged, settings):
    signed_up_client("ada@example.com", "ada")
    api = APIClient("app")
    api.login("ada")
    settings.ACCOUNTS_REAUTHENTICATION_TIMEOUT = -1

    response = post_token(api, forged, token_of(forged), process="connect")

    assert response.status_code == 401
    assert {flow["id"] for flow in response.json()["data"]["flows"]} == {"reauthenticate", "reauthenticate_by_code"}
    assert not store.get_by_username("ada").oidc_identities


# Configuration.


def test_config_lists_the_providers_in_the_specs_shape(forged):
    config = APIClient("browser").get("config").json()["data"]

    assert config["socialaccount"]["providers"] == [
        {
            "id": PROVIDER_ID,
            "name": "Forged",
            "client_id": CLIENT_ID,
            "openid_configuration_url": forged.issuer + "/.well-known/openid-configuration",
            "flows": ["provider_redirect", "provider_token"],
        }
    ]


def test_the_login_flows_offer_the_providers(forged):
    app_flows = APIClient("app").get("auth/session").json()["data"]["flows"]
    browser_flows = APIClient("browser").get("auth/session").json()["data"]["flows"]

    assert {"id": "provider_token", "providers": [PROVIDER_ID]} in app_flows
    # As allauth: the redirect is the browser's (an app signs in with its ID token).
    assert "provider_redirect" not in [flow["id"] for flow in app_flows]
    assert {"id": "provider_redirect", "providers": [PROVIDER_ID]} in browser_flows
    assert {"id": "provider_token", "providers": [PROVIDER_ID]} in browser_flows


# The shapes of allauth's specification (its conformance test reaches no provider's success).


def test_every_provider_answer_has_the_shape_of_allauths_specification(forged):
    account_holding_the_identity(forged, "bob@example.com", "bob")
    newcomer = APIClient("app")
    pending_signup = post_token(newcomer, forged, token_of(forged, sub="new-subject", email="new@example.com"))
    signup_info = newcomer.get("auth/provider/signup")
    signed_up = newcomer.post("auth/provider/signup", {"email": "new@example.com", "username": "newcomer"})
    known = APIClient("app")
    signed_in = post_token(known, forged, token_of(forged))
    listed = known.get("account/providers")
    refused = post_token(APIClient("app"), forged, token_of(forged, aud="another-site"))
    config = APIClient("app").get("config")

    assert conforms("AuthenticationResponse", pending_signup.json())
    assert conforms("ProviderSignup", signup_info.json(), "responses")
    assert conforms("AuthenticatedResponse", signed_up.json())
    assert conforms("AuthenticatedResponse", signed_in.json())
    assert conforms("ProviderAccounts", listed.json(), "responses") and listed.json()["data"]
    assert conforms("ErrorResponse", refused.json())
    assert conforms("ConfigurationResponse", config.json())


# Round trips.


@pytest.mark.parametrize("client", ["app", "browser"])
def test_a_token_sign_in_of_a_known_identity_is_three_requests_and_no_new_jwks(forged, proxy, client):
    account_holding_the_identity(forged)
    post_token(APIClient("app"), forged, token_of(forged))
    fetched = forged.jwks_requests
    api = APIClient(client)
    audience = APP_CLIENT_ID if client == "app" else CLIENT_ID

    response, requests = counted(proxy, lambda: post_token(api, forged, token_of(forged, aud=audience), audience))

    assert response.status_code == 200
    assert forged.jwks_requests == fetched
    # The identity's lock (no session to read it with), the account's partition, the sign-in
    # (with the token's record: one transaction).
    assert requests == {"GetItem": 1, "Query": 1, "TransactWriteItems": 1}
