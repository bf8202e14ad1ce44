"""The browser client's ``auth/provider/redirect`` with a real OpenID provider (oidc-provider,
tests/oidc.py): a form post sends the browser to the provider, whose callback lands back at
the app's ``callback_url`` signed in, with a pending ``provider_signup``, or with ``?error=``."""

import pytest

from accounts import store
from accounts.providers import store as provider_store
from tests.headless import APIClient
from tests.oidc import CALLBACK_PATH, PROVIDER_ID, callback_query, oidc_provider, oidc_site, sign_in_at_provider  # noqa: F401
from tests.web import signed_up_client

pytestmark = pytest.mark.dynamodb_local
REDIRECT = "/_allauth/browser/v1/auth/provider/redirect"
APP_PAGE = "/app/account/provider/callback"


def redirect_to_provider(api, callback_url=APP_PAGE, provider=PROVIDER_ID, process="login"):
    return api.http.post(REDIRECT, {"provider": provider, "callback_url": callback_url, "process": process})


def sign_in_through_the_redirect(api, login):
    """The whole browser journey: the form post, the provider's pages, the callback."""
    response = redirect_to_provider(api)
    assert response.status_code == 302, response.content
    back = sign_in_at_provider(response["Location"], login, "http://testserver" + CALLBACK_PATH)
    return api.http.get(CALLBACK_PATH, callback_query(back))


def test_a_first_sign_in_lands_back_pending_a_provider_signup_then_signs_in(oidc_site):
    api = APIClient("browser")

    landed = sign_in_through_the_redirect(api, "alice")

    assert landed.status_code == 302 and landed["Location"] == APP_PAGE
    session = api.get("auth/session")
    assert session.status_code == 401
    (flow,) = [flow for flow in session.json()["data"]["flows"] if flow.get("is_pending")]
    assert flow["id"] == "provider_signup" and flow["provider"]["id"] == PROVIDER_ID
    created = api.post("auth/provider/signup", {"email": "alice@example.com", "username": "alice"})
    assert created.status_code == 200, created.content
    assert provider_store.identities_of(store.get_by_username("alice")) == [(oidc_site.issuer, "alice")]

    again = APIClient("browser")
    landed = sign_in_through_the_redirect(again, "alice")
    assert landed["Location"] == APP_PAGE
    assert again.get("auth/session").json()["data"]["user"]["username"] == "alice"


def test_a_known_identity_lands_back_signed_in(oidc_site):
    signed_up_client("bob@example.com", "bob")
    provider_store.link(store.get_by_username("bob"), oidc_site.issuer, "bob")
    api = APIClient("browser")

    landed = sign_in_through_the_redirect(api, "bob")

    assert landed["Location"] == APP_PAGE
    session = api.get("auth/session")
    assert session.status_code == 200
    assert session.json()["data"]["methods"][-1]["method"] == "socialaccount"


def test_a_provider_that_refuses_lands_back_with_an_error(oidc_site):
    api = APIClient("browser")
    response = redirect_to_provider(api)
    state = callback_query(response["Location"])["state"]

    landed = api.http.get(CALLBACK_PATH, {"error": "access_denied", "state": state})

    assert landed.status_code == 302
    assert landed["Location"] == APP_PAGE + "?error=cancelled&error_process=login"
    assert api.get("auth/session").status_code == 401


def test_a_callback_url_of_another_site_is_refused(oidc_site):
    response = redirect_to_provider(APIClient("browser"), callback_url="https://evil.example/steal")

    assert response.status_code == 400
    assert response.json()["errors"][0]["param"] == "callback_url"


def test_an_unknown_provider_lands_back_with_an_error(oidc_site):
    response = redirect_to_provider(APIClient("browser"), provider="nope")

    assert response.status_code == 302
    assert response["Location"] == APP_PAGE + "?error=unknown_provider&error_process=login"


def test_connecting_needs_a_logged_in_recently_reauthenticated_session(oidc_site):
    response = redirect_to_provider(APIClient("browser"), process="connect")

    assert response["Location"] == APP_PAGE + "?error=reauthentication_required&error_process=connect"


def test_connecting_with_a_stale_login_lands_back_asking_for_reauthentication(oidc_site, settings):
    signed_up_client("carol@example.com", "carol")
    api = APIClient("browser")
    assert api.login("carol").status_code == 200
    settings.ACCOUNTS_REAUTHENTICATION_TIMEOUT = -1

    response = redirect_to_provider(api, process="connect")

    assert response["Location"] == APP_PAGE + "?error=reauthentication_required&error_process=connect"


def test_connecting_through_the_redirect_links_the_identity(oidc_site, mailoutbox):
    signed_up_client("carol@example.com", "carol")
    api = APIClient("browser")
    assert api.login("carol").status_code == 200

    response = redirect_to_provider(api, process="connect")
    back = sign_in_at_provider(response["Location"], "carol", "http://testserver" + CALLBACK_PATH)
    landed = api.http.get(CALLBACK_PATH, callback_query(back))

    assert landed["Location"] == APP_PAGE
    assert provider_store.identities_of(store.get_by_username("carol")) == [(oidc_site.issuer, "carol")]
    linked = api.get("account/providers").json()["data"]
    assert [entry["uid"] for entry in linked] == ["carol"]


def test_the_app_client_has_no_redirect(oidc_site):
    response = APIClient("app").http.post(
        "/_allauth/app/v1/auth/provider/redirect", {"provider": PROVIDER_ID, "callback_url": APP_PAGE}
    )

    assert response.status_code == 404
