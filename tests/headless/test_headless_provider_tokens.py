"""An ID token an app posts to ``auth/provider/token`` is accepted ONCE, until it expires,
with or without a nonce: its record (``USED#<digest>``, ``SK=ID_TOKEN``) is put guarded
``attribute_not_exists(PK) OR expires < :now - margin`` in the sign-in's own transaction, or
alone before a half-login, a pending sign-up or a link. Each API client accepts the
audiences configured for it: the app client the provider's ``app_client_ids``, the browser
client its ``client_id``. With an access token, the claims come from UserInfo, as at the
callback. On DynamoDB Local, with tokens signed by tests/oidc_forger.py."""

import time

import pytest
from authlib.oidc.core.util import create_half_hash

from accounts import dynamo, store
from accounts.app_settings import app_settings
from accounts.providers import oidc
from accounts.providers import store as provider_store
from accounts.providers.tables import UsedIdToken
from tests.headless import APIClient
from tests.mfa import enable_totp
from tests.oidc_forger import CLIENT_ID, PROVIDER_ID, ForgedProvider
from tests.web import signed_up_client
from tests.web.test_sessions import account_id_of
from tests.web.test_sessions_bound_race import at_once, live_sessions

pytestmark = pytest.mark.dynamodb_local
APP_CLIENT_ID = "site-ios"
SUBJECT = "forged-subject"
PARALLEL = 16


@pytest.fixture
def forged(settings, ddb):
    # 16 sign-ins from one address at once: this is about what the accepted ones leave.
    settings.ACCOUNTS_RATE_LIMITS = {}
    with ForgedProvider() as provider:
        settings.ACCOUNTS_OIDC_PROVIDERS = [provider.setting(app_client_ids=[APP_CLIENT_ID])]
        oidc.forget_cached_documents()
        yield provider
        oidc.forget_cached_documents()


def token_of(forged, aud=APP_CLIENT_ID, **claims):
    """A rightly made ID token of the forged provider for ``aud`` (no nonce unless given)."""
    return forged.sign(forged.claims(claims.pop("nonce", None), aud=aud, **claims))


def post_token(api, id_token, client_id=APP_CLIENT_ID, process="login", **token):
    body = {
        "provider": PROVIDER_ID,
        "process": process,
        "token": {"client_id": client_id, "id_token": id_token, **token},
    }
    return api.post("auth/provider/token", body)


def error_of(response):
    assert response.status_code == 400, response.content
    (error,) = response.json()["errors"]
    return error["code"], error.get("param")


def pending(api):
    return [flow["id"] for flow in api.get("auth/session").json()["data"]["flows"] if flow.get("is_pending")]


def account_holding_the_identity(forged):
    """ada's account (a password and a session of its own), linked to the forged identity."""
    client = signed_up_client("ada@example.com", "ada")
    provider_store.link(store.get_by_username("ada"), forged.issuer, SUBJECT)
    return client


# Once.


@pytest.mark.parametrize("nonce", [None, "app-nonce"], ids=["without-nonce", "with-nonce"])
def test_an_id_token_signs_in_once(forged, nonce):
    account_holding_the_identity(forged)
    token = token_of(forged, nonce=nonce)
    sent = {"nonce": nonce} if nonce else {}

    first = post_token(APIClient("app"), token, **sent)
    replay = APIClient("app")
    again = post_token(replay, token, **sent)

    assert first.status_code == 200, first.content
    assert error_of(again) == ("invalid_token", "token")
    assert replay.get("auth/session").status_code == 401


def test_a_token_without_jti_signs_in_once_too(forged):
    account_holding_the_identity(forged)
    token = token_of(forged, jti=None)

    assert post_token(APIClient("app"), token).status_code == 200
    assert error_of(post_token(APIClient("app"), token)) == ("invalid_token", "token")


def test_sixteen_parallel_posts_of_one_token_make_exactly_one_session(forged):
    account_id = account_id_of(account_holding_the_identity(forged))
    before = len(live_sessions(account_id))
    token = token_of(forged)
    apis = [APIClient("app") for _ in range(PARALLEL)]

    answers = at_once(PARALLEL, lambda number: post_token(apis[number], token))

    statuses = sorted(answer.status_code for answer in answers)
    assert statuses.count(200) == 1, statuses
    assert all(error_of(answer) == ("invalid_token", "token") for answer in answers if answer.status_code != 200)
    assert len(live_sessions(account_id)) == before + 1
    assert sum(api.get("auth/session").status_code == 200 for api in apis) == 1


def test_sixteen_parallel_posts_of_one_token_of_an_unknown_identity_leave_one_pending_sign_up(forged):
    token = token_of(forged, email="new@example.com")
    apis = [APIClient("app") for _ in range(PARALLEL)]

    answers = at_once(PARALLEL, lambda number: post_token(apis[number], token))

    assert sorted(answer.status_code for answer in answers) == [400] * (PARALLEL - 1) + [401]
    assert sum(pending(api) == ["provider_signup"] for api in apis) == 1


def test_a_token_of_an_account_with_a_second_factor_stages_one_half_login(forged):
    enable_totp(account_holding_the_identity(forged))
    token = token_of(forged)
    first, replay = APIClient("app"), APIClient("app")

    staged = post_token(first, token)
    again = post_token(replay, token)

    assert staged.status_code == 401 and pending(first) == ["mfa_authenticate"]
    assert error_of(again) == ("invalid_token", "token")
    assert pending(replay) == []


def test_a_used_token_cannot_connect_either(forged):
    signed_up_client("bob@example.com", "bob")
    token = token_of(forged)
    assert post_token(APIClient("app"), token).status_code == 401  # a pending sign-up: spent
    bob = APIClient("app")
    assert bob.login("bob").status_code == 200

    response = post_token(bob, token, process="connect")

    assert error_of(response) == ("invalid_token", "token")
    assert not store.get_by_username("bob").oidc_identities


def test_the_tokens_record_outlives_the_token_by_the_clock_skew_margin(forged):
    account_holding_the_identity(forged)
    claims = forged.claims(None, aud=APP_CLIENT_ID)
    token = forged.sign(claims)

    assert post_token(APIClient("app"), token).status_code == 200

    record = UsedIdToken.build(oidc.token_digest(forged.issuer, claims, token), 0)
    (raw,) = dynamo.batch_get([dynamo.key(record.PK, record.SK)])
    # TTL deletes by DynamoDB's clock; a server behind by the margin still accepts the token.
    margin = int(app_settings.CLOCK_SKEW_MARGIN.total_seconds())
    assert int(raw["expires"]["N"]) == claims["exp"] + oidc.LEEWAY_SECONDS + margin


def test_two_tokens_of_one_identity_each_sign_in(forged):
    account_holding_the_identity(forged)

    assert post_token(APIClient("app"), token_of(forged)).status_code == 200
    assert post_token(APIClient("app"), token_of(forged)).status_code == 200


# The audiences each client accepts.


def test_a_token_issued_to_the_web_client_is_refused_on_the_app_client(forged):
    account_holding_the_identity(forged)
    api = APIClient("app")

    response = post_token(api, token_of(forged, aud=CLIENT_ID), client_id=CLIENT_ID)

    assert error_of(response) == ("invalid_token", "token")
    assert api.get("auth/session").status_code == 401


def test_the_web_clients_tokens_are_accepted_on_the_app_client_when_listed_in_app_client_ids(forged, settings):
    # Google's Android SDK asks for ID tokens for the server's web client.
    settings.ACCOUNTS_OIDC_PROVIDERS = [forged.setting(app_client_ids=[CLIENT_ID])]
    account_holding_the_identity(forged)

    response = post_token(APIClient("app"), token_of(forged, aud=CLIENT_ID), client_id=CLIENT_ID)

    assert response.status_code == 200, response.content


def test_an_app_clients_token_is_refused_on_the_browser_client(forged):
    account_holding_the_identity(forged)

    response = post_token(APIClient("browser"), token_of(forged))

    assert error_of(response) == ("invalid_token", "token")


def test_a_provider_without_app_client_ids_accepts_no_token_on_the_app_client(forged, settings):
    settings.ACCOUNTS_OIDC_PROVIDERS = [forged.setting()]
    account_holding_the_identity(forged)

    for audience in (CLIENT_ID, APP_CLIENT_ID):
        response = post_token(APIClient("app"), token_of(forged, aud=audience), client_id=audience)
        assert error_of(response) == ("invalid_token", "token")


# The claims, with an access token.


def test_an_access_token_brings_the_userinfo_claims(forged):
    forged.userinfo = {"sub": SUBJECT, "email": "from-userinfo@example.com", "email_verified": True}
    api = APIClient("app")

    response = post_token(api, token_of(forged, email=None, email_verified=None), access_token="app-access-token")

    assert response.status_code == 401 and pending(api) == ["provider_signup"]
    signup = api.get("auth/provider/signup").json()["data"]
    assert signup["email"] == [{"email": "from-userinfo@example.com", "primary": True, "verified": True}]
    assert forged.userinfo_requests == ["Bearer app-access-token"]


def test_without_an_access_token_the_id_tokens_claims_are_read_and_userinfo_not_asked(forged):
    forged.userinfo = {"sub": SUBJECT, "email": "from-userinfo@example.com"}
    api = APIClient("app")

    post_token(api, token_of(forged))

    assert api.get("auth/provider/signup").json()["data"]["email"][0]["email"] == "forged@example.com"
    assert forged.userinfo_requests == []


def test_userinfo_about_another_subject_refuses_the_token(forged):
    forged.userinfo = {"sub": "victim", "email": "victim@example.com", "email_verified": True}
    api = APIClient("app")

    response = post_token(api, token_of(forged), access_token="another-persons-token")

    assert error_of(response) == ("invalid_token", "token")
    assert pending(api) == []


def test_an_access_token_other_than_the_id_tokens_at_hash_names_is_refused(forged):
    forged.userinfo = {"sub": SUBJECT}
    right = "the-access-token-issued-with-it"
    at_hash = create_half_hash(right, "RS256").decode()
    api = APIClient("app")

    refused = post_token(api, token_of(forged, at_hash=at_hash), access_token="another-access-token")
    accepted = post_token(APIClient("app"), token_of(forged, at_hash=at_hash), access_token=right)

    assert error_of(refused) == ("invalid_token", "token")
    assert forged.userinfo_requests == ["Bearer " + right]
    assert accepted.status_code == 401


def test_a_token_that_expired_is_refused_whether_or_not_it_was_used(forged):
    account_holding_the_identity(forged)
    now = int(time.time())

    response = post_token(APIClient("app"), token_of(forged, iat=now - 7200, exp=now - 3600))

    assert error_of(response) == ("invalid_token", "token")
