"""The JWT token strategy (``ACCOUNTS_HEADLESS_TOKEN_STRATEGY = "jwt"``, django-allauth's
``JWTTokenStrategy``) and ``tokens/refresh``: a login hands the app an access token (accepted
as ``Authorization: Bearer``) and a refresh token, used once (a guarded write) and never after
its session ended: a logout, or the owner's password change, leaves nothing a stolen token
can refresh."""

import time
from concurrent.futures import ThreadPoolExecutor

import pytest
from django.contrib.auth.hashers import make_password
from joserfc import jwt
from joserfc.jwk import OctKey, RSAKey

from accounts import store
from accounts.headless import tokens
from tests.headless import APIClient
from tests.headless_spec import conforms
from tests.web import OTHER_PASSWORD, PASSWORD, signed_up_client

pytestmark = pytest.mark.dynamodb_local

PRIVATE_KEY = RSAKey.generate_key(2048, private=True)


@pytest.fixture
def jwt_site(ddb, settings):
    settings.ACCOUNTS_HEADLESS_TOKEN_STRATEGY = "jwt"
    settings.ACCOUNTS_HEADLESS_JWT_PRIVATE_KEY = PRIVATE_KEY.as_pem(private=True).decode()
    signed_up_client()


class BearerApp(APIClient):
    """An app that sends its access token (``Authorization: Bearer``) and no session token."""

    def __init__(self, access_token):
        super().__init__("app")
        self.access_token = access_token

    def request(self, method, operation, data=None, headers=None):
        return super().request(
            method, operation, data, {**(headers or {}), "Authorization": f"Bearer {self.access_token}"}
        )


def logged_in(name="ada", password=PASSWORD):
    """An app logged in; returns ``(app, meta of the login's answer)``."""
    app = APIClient("app")
    response = app.login(name, password)
    assert response.status_code == 200, response.content
    return app, response.json()["meta"]


def claims_of(token):
    return jwt.decode(token, RSAKey.import_key(PRIVATE_KEY.as_dict(private=False)), algorithms=["RS256"]).claims


def refresh(token, client="app"):
    return APIClient(client).post("tokens/refresh", {"refresh_token": token})


def test_a_login_hands_the_app_a_signed_access_token_and_a_refresh_token(jwt_site):
    _, meta = logged_in()

    access, refresh_token = meta["access_token"], meta["refresh_token"]
    claims = claims_of(access)
    assert claims["sub"] == store.get_by_username("ada").id
    assert claims["token_use"] == "access" and claims["exp"] - claims["iat"] == 300
    assert meta["session_token"] not in claims["sid"] and tokens.session_key_of(claims["sid"]) == meta["session_token"]
    assert claims_of(refresh_token)["token_use"] == "refresh"
    assert claims_of(refresh_token)["exp"] - claims_of(refresh_token)["iat"] == 86400


def test_the_access_token_stands_for_its_session_as_a_bearer_token(jwt_site):
    _, meta = logged_in()
    app = BearerApp(meta["access_token"])

    session = app.get("auth/session")

    assert session.status_code == 200, session.content
    assert session.json()["data"]["user"]["username"] == "ada"
    assert "session_token" not in session.json().get("meta", {})
    assert app.get("account/authenticators").status_code == 200


def test_a_refresh_token_is_exchanged_once_for_a_new_pair(jwt_site):
    _, meta = logged_in()

    first = refresh(meta["refresh_token"])

    assert first.status_code == 200, first.content
    assert conforms("RefreshToken", first.json(), "responses")
    data = first.json()["data"]
    assert data["refresh_token"] != meta["refresh_token"]
    assert BearerApp(data["access_token"]).get("auth/session").status_code == 200
    again = refresh(meta["refresh_token"])
    assert again.status_code == 400
    assert again.json()["errors"][0]["code"] == "invalid_token"
    assert again.json()["errors"][0]["param"] == "refresh_token"
    assert refresh(data["refresh_token"]).status_code == 200


def test_of_eight_exchanges_of_one_refresh_token_at_once_one_gets_tokens(jwt_site):
    _, meta = logged_in()

    with ThreadPoolExecutor(8) as pool:
        answers = list(pool.map(lambda _: refresh(meta["refresh_token"]).status_code, range(8)))

    assert sorted(answers) == [200] + [400] * 7


def test_a_logout_ends_the_access_and_refresh_tokens(jwt_site):
    app, meta = logged_in()

    assert app.delete("auth/session").status_code == 401

    assert BearerApp(meta["access_token"]).get("auth/session").status_code == 410
    assert refresh(meta["refresh_token"]).status_code == 400


def test_a_password_change_ends_every_token_and_hands_the_changing_app_new_ones(jwt_site):
    other, other_meta = logged_in()
    app, meta = logged_in()

    changed = app.post("account/password/change", {"current_password": PASSWORD, "new_password": OTHER_PASSWORD})

    assert changed.status_code == 200, changed.content
    new_meta = changed.json()["meta"]
    assert {"session_token", "access_token", "refresh_token"} <= new_meta.keys()
    for stolen in (meta["refresh_token"], other_meta["refresh_token"]):
        assert refresh(stolen).status_code == 400
    for stolen in (meta["access_token"], other_meta["access_token"]):
        assert BearerApp(stolen).get("auth/session").status_code == 410
    assert refresh(new_meta["refresh_token"]).status_code == 200
    assert BearerApp(new_meta["access_token"]).get("auth/session").status_code == 200


def test_a_refresh_whose_session_ends_after_its_read_is_cancelled(jwt_site, monkeypatch):
    _, meta = logged_in()
    read = tokens._session_user

    def read_then_change_the_password(session_key):
        found = read(session_key)
        store.change_password(store.get_by_username("ada"), make_password(OTHER_PASSWORD))
        return found

    monkeypatch.setattr(tokens, "_session_user", read_then_change_the_password)

    assert refresh(meta["refresh_token"]).status_code == 400


def test_a_forged_or_expired_token_gets_nothing(jwt_site, settings):
    _, meta = logged_in()
    claims = claims_of(meta["refresh_token"])
    other_key = RSAKey.generate_key(2048, private=True)
    forged = jwt.encode({"alg": "RS256"}, claims, other_key)
    expired = jwt.encode({"alg": "RS256"}, {**claims, "exp": int(time.time()) - 1}, PRIVATE_KEY)
    as_access = jwt.encode({"alg": "RS256"}, {**claims, "token_use": "access"}, other_key)

    for token in (forged, expired, meta["access_token"], "not-a-token"):
        assert refresh(token).status_code == 400
    assert BearerApp(as_access).get("auth/session").status_code == 401
    assert BearerApp(meta["refresh_token"]).get("auth/session").status_code == 401


def test_without_rotation_the_refresh_token_stays_valid_until_its_session_ends(jwt_site, settings):
    settings.ACCOUNTS_HEADLESS_JWT_ROTATE_REFRESH_TOKEN = False
    app, meta = logged_in()

    first = refresh(meta["refresh_token"])

    assert first.status_code == 200
    assert first.json()["data"].keys() == {"access_token"}
    assert refresh(meta["refresh_token"]).status_code == 200
    app.delete("auth/session")
    assert refresh(meta["refresh_token"]).status_code == 400


def test_an_hs256_site_signs_with_its_secret_key(ddb, settings):
    settings.ACCOUNTS_HEADLESS_TOKEN_STRATEGY = "jwt"
    settings.ACCOUNTS_HEADLESS_JWT_ALGORITHM = "HS256"
    signed_up_client()

    _, meta = logged_in()

    header_claims = jwt.decode(
        meta["access_token"], OctKey.import_key(settings.SECRET_KEY.encode()), algorithms=["HS256"]
    )
    assert header_claims.header["alg"] == "HS256"
    assert refresh(meta["refresh_token"]).status_code == 200


def test_validate_access_token_checks_the_session_only_when_stateful(jwt_site, settings):
    app, meta = logged_in()
    assert tokens.validate_access_token(meta["access_token"]).user_id == store.get_by_username("ada").id
    app.delete("auth/session")

    assert tokens.validate_access_token(meta["access_token"]) is not None
    settings.ACCOUNTS_HEADLESS_JWT_STATEFUL_VALIDATION_ENABLED = True
    assert tokens.validate_access_token(meta["access_token"]) is None


def test_the_session_strategy_hands_out_no_token_and_refreshes_nothing(ddb):
    signed_up_client()
    _, meta = logged_in()

    assert "access_token" not in meta and "refresh_token" not in meta
    response = refresh("anything")
    assert response.status_code == 400
    assert response.json()["errors"][0]["code"] == "invalid_token"


def test_tokens_refresh_is_an_operation_of_the_app_client_only(jwt_site):
    _, meta = logged_in()

    assert refresh(meta["refresh_token"], client="browser").status_code == 404
