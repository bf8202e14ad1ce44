"""What the API says a visitor can do, key by key as django-allauth 65.22.1 says it: the
flows of the anonymous 401 (its ``BaseAuthenticationResponse._get_flows``), ``config`` (its
``ConfigResponse``) and the sessions (its ``SessionsResponse``): the address each logged in
from, and when it was last seen."""

import pytest

from accounts.providers import oidc
from tests.headless import APIClient
from tests.headless_spec import conforms
from tests.oidc_forger import ForgedProvider
from tests.web import signed_up_client

pytestmark = pytest.mark.dynamodb_local


@pytest.fixture
def provider(settings):
    with ForgedProvider() as forged:
        settings.ACCOUNTS_OIDC_PROVIDERS = [forged.setting()]
        oidc.forget_cached_documents()
        yield forged
    oidc.forget_cached_documents()


def flows_of(response):
    return response.json()["data"]["flows"]


@pytest.mark.parametrize("client", ["app", "browser"])
def test_a_visitor_is_offered_every_flow_that_is_on_in_allauths_order(ddb, client):
    response = APIClient(client).get("auth/session")

    assert response.status_code == 401
    assert flows_of(response) == [
        {"id": "login"},
        {"id": "login_by_code"},
        {"id": "signup"},
        {"id": "mfa_login_webauthn"},
    ]
    assert conforms("AuthenticationResponse", response.json())


def test_with_a_provider_the_browser_is_offered_its_redirect_and_the_app_only_its_token(ddb, provider):
    browser = flows_of(APIClient("browser").get("auth/session"))
    app = flows_of(APIClient("app").get("auth/session"))
    providers = [provider.setting()["id"]]

    assert browser == [
        {"id": "login"},
        {"id": "login_by_code"},
        {"id": "signup"},
        {"id": "provider_redirect", "providers": providers},
        {"id": "provider_token", "providers": providers},
        {"id": "mfa_login_webauthn"},
    ]
    assert app == [
        {"id": "login"},
        {"id": "login_by_code"},
        {"id": "signup"},
        {"id": "provider_token", "providers": providers},
        {"id": "mfa_login_webauthn"},
    ]


def test_a_pending_login_by_code_is_marked_where_it_is_listed(ddb, mailoutbox):
    signed_up_client()
    api = APIClient("app")

    asked = api.post("auth/code/request", {"email": "ada@example.com"})

    assert flows_of(asked) == [
        {"id": "login"},
        {"id": "login_by_code", "is_pending": True},
        {"id": "signup"},
        {"id": "mfa_login_webauthn"},
    ]


def test_a_pending_verification_comes_last(ddb, settings):
    settings.ACCOUNTS_EMAIL_VERIFICATION = "mandatory"

    signed_up = APIClient("app").signup()

    assert flows_of(signed_up)[-1] == {"id": "verify_email", "is_pending": True}
    assert [flow["id"] for flow in flows_of(signed_up)][:4] == [
        "login",
        "login_by_code",
        "signup",
        "mfa_login_webauthn",
    ]


def test_password_reset_by_code_is_listed_while_it_is_on_and_pending_once_asked(ddb, settings, mailoutbox):
    settings.ACCOUNTS_PASSWORD_RESET_BY_CODE_ENABLED = True
    api = APIClient("app")

    before = flows_of(api.get("auth/session"))
    asked = api.post("auth/password/request", {"email": "nobody@example.com"})

    assert before[-1] == {"id": "password_reset_by_code", "is_pending": False}
    assert asked.status_code == 401
    assert flows_of(asked)[-1] == {"id": "password_reset_by_code", "is_pending": True}
    assert conforms("AuthenticationResponse", asked.json())


def test_a_logged_in_session_asked_to_reauthenticate_is_offered_reset_by_code_too(ddb, settings):
    settings.ACCOUNTS_PASSWORD_RESET_BY_CODE_ENABLED = True
    settings.ACCOUNTS_REAUTHENTICATION_TIMEOUT = 0
    api = APIClient("app")
    api.signup()

    response = api.post("account/email", {"email": "lovelace@example.com"})

    assert response.status_code == 401
    assert flows_of(response) == [
        {"id": "reauthenticate"},
        {"id": "reauthenticate_by_code", "recipients": [{"email": "ada@example.com"}]},
        {"id": "password_reset_by_code", "is_pending": False},
    ]


# config


def test_config_says_what_allauths_says_for_this_sites_settings(ddb, provider, settings):
    settings.ACCOUNTS_EMAIL_VERIFICATION_BY_CODE_ENABLED = True

    config = APIClient("app").get("config").json()

    assert config["data"]["account"] == {
        "login_methods": ["email", "username"],
        "authentication_method": "username_email",
        "is_open_for_signup": True,
        "email_verification_by_code_enabled": True,
        "login_by_code_enabled": True,
        "password_reset_by_code_enabled": False,
    }
    assert [entry["id"] for entry in config["data"]["socialaccount"]["providers"]] == [provider.setting()["id"]]
    assert config["data"]["mfa"] == {
        "supported_types": ["recovery_codes", "totp", "webauthn"],
        "passkey_login_enabled": True,
    }
    # The sessions' "last seen" is kept (refreshed every ACCOUNTS_SESSION_TOUCH_INTERVAL).
    assert config["data"]["usersessions"] == {"track_activity": True}
    assert conforms("ConfigurationResponse", config)


def test_config_says_sessions_are_not_seen_when_nothing_refreshes_them(ddb, settings):
    settings.ACCOUNTS_SESSION_TOUCH_INTERVAL = None
    settings.ACCOUNTS_SESSION_IDLE_TIMEOUT = None

    assert APIClient("app").get("config").json()["data"]["usersessions"] == {"track_activity": False}


# Sessions


def test_each_session_lists_the_address_it_logged_in_from(ddb):
    signed_up_client()
    first = APIClient("app")
    first.http.defaults["REMOTE_ADDR"] = "192.0.2.7"
    first.http.defaults["HTTP_USER_AGENT"] = "Phone/1.0"
    assert first.login("ada").status_code == 200
    second = APIClient("browser")
    second.http.defaults["REMOTE_ADDR"] = "2001:db8::9"
    assert second.login("ada").status_code == 200

    listed = second.get("auth/sessions").json()

    by_agent = {session["user_agent"]: session for session in listed["data"]}
    assert by_agent["Phone/1.0"]["ip"] == "192.0.2.7"
    current = [session for session in listed["data"] if session["is_current"]]
    assert [session["ip"] for session in current] == ["2001:db8::9"]
    assert all(isinstance(session["last_seen_at"], float) for session in listed["data"])
    assert conforms("Sessions", listed, "responses")


def test_without_activity_tracked_a_session_has_no_last_seen(ddb, settings):
    settings.ACCOUNTS_SESSION_TOUCH_INTERVAL = None
    settings.ACCOUNTS_SESSION_IDLE_TIMEOUT = None
    api = APIClient("app")
    api.signup()

    (session,) = api.get("auth/sessions").json()["data"]

    assert "last_seen_at" not in session
    assert set(session) == {"id", "user_agent", "ip", "created_at", "is_current"}
