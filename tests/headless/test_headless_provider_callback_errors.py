"""The provider's callback of a sign-in begun by the API's browser client
(``auth/provider/redirect``) refuses what it cannot use as django-allauth's headless
callback does: back to the app's ``callback_url`` with ``?error=<code>&error_process=...``;
for a state the site does not know, to the app's ``socialaccount_login_error`` page
(``ACCOUNTS_HEADLESS_FRONTEND_URLS``), else the error page (400). Never a 500, and nothing
asked of the provider for an unknown state: counted in the certified oidc-provider's own log
(tests/oidc.py). The pages' side: tests/providers/test_providers_callback_errors.py."""

import pytest

from tests.headless import APIClient
from tests.oidc import (  # noqa: F401  (fixtures)
    CALLBACK_PATH,
    PROVIDER_ID,
    callback_query,
    cancel_at_provider,
    oidc_provider,
    oidc_site,
    sign_in_at_provider,
)
from tests.web import signed_up_client

pytestmark = pytest.mark.dynamodb_local
REDIRECT = "/_allauth/browser/v1/auth/provider/redirect"
APP_PAGE = "/app/account/provider/callback"
APP_ERROR_PAGE = "/app/account/provider/error"
BACK = "http://testserver" + CALLBACK_PATH


def redirected_to_provider(api, process="login"):
    response = api.http.post(REDIRECT, {"provider": PROVIDER_ID, "callback_url": APP_PAGE, "process": process})
    assert response.status_code == 302, response.content
    return response["Location"]


def test_cancelling_at_the_provider_lands_back_on_the_apps_page_with_allauths_error(oidc_site):
    api = APIClient("browser")
    asked = oidc_site.calls("/token")
    back = cancel_at_provider(redirected_to_provider(api), BACK)

    landed = api.http.get(CALLBACK_PATH, callback_query(back))

    assert landed.status_code == 302
    assert landed["Location"] == APP_PAGE + "?error=cancelled&error_process=login"
    assert oidc_site.calls("/token") == asked
    assert api.get("auth/session").status_code == 401


def test_an_unknown_state_goes_to_the_apps_login_error_page_without_asking_the_provider(oidc_site, settings):
    settings.ACCOUNTS_HEADLESS_FRONTEND_URLS = {"socialaccount_login_error": APP_ERROR_PAGE}
    api = APIClient("browser")
    redirected_to_provider(api)
    asked = oidc_site.calls("/token")

    landed = api.http.get(CALLBACK_PATH, {"state": "made-up", "code": "any-code"})

    assert landed.status_code == 302
    assert landed["Location"] == "http://testserver" + APP_ERROR_PAGE + "?error=unknown_state&error_process=login"
    assert oidc_site.calls("/token") == asked
    session = api.get("auth/session")
    assert session.status_code == 401
    assert not [flow for flow in session.json()["data"]["flows"] if flow.get("is_pending")]


def test_an_unknown_state_without_an_apps_error_page_ends_on_the_error_page(oidc_site):
    api = APIClient("browser")
    redirected_to_provider(api)
    asked = oidc_site.calls("/token")

    landed = api.http.get(CALLBACK_PATH, {"state": "made-up", "code": "any-code"})

    assert landed.status_code == 400
    assert 'data-reason="unknown_state"' in landed.content.decode()
    assert oidc_site.calls("/token") == asked


def test_a_missing_code_lands_back_on_the_apps_page_without_asking_the_provider(oidc_site):
    api = APIClient("browser")
    state = callback_query(redirected_to_provider(api))["state"]
    asked = oidc_site.calls("/token")

    landed = api.http.get(CALLBACK_PATH, {"state": state})

    assert landed["Location"] == APP_PAGE + "?error=missing_code&error_process=login"
    assert oidc_site.calls("/token") == asked


def test_a_bad_code_lands_back_on_the_apps_page(oidc_site):
    api = APIClient("browser")
    state = callback_query(redirected_to_provider(api))["state"]

    landed = api.http.get(CALLBACK_PATH, {"state": state, "code": "not-a-code-the-provider-gave"})

    assert landed.status_code == 302
    assert landed["Location"] == APP_PAGE + "?error=invalid_code&error_process=login"
    assert api.get("auth/session").status_code == 401


def test_a_reused_answer_goes_to_the_apps_login_error_page(oidc_site, settings):
    settings.ACCOUNTS_HEADLESS_FRONTEND_URLS = {"socialaccount_login_error": APP_ERROR_PAGE}
    api = APIClient("browser")
    back = sign_in_at_provider(redirected_to_provider(api), "alice", BACK)
    assert api.http.get(CALLBACK_PATH, callback_query(back))["Location"] == APP_PAGE

    landed = api.http.get(CALLBACK_PATH, callback_query(back))

    assert landed.status_code == 302
    assert landed["Location"] == "http://testserver" + APP_ERROR_PAGE + "?error=invalid_code&error_process=login"


def test_a_refused_link_lands_back_saying_it_was_a_connect(oidc_site):
    signed_up_client("carol@example.com", "carol")
    api = APIClient("browser")
    assert api.login("carol").status_code == 200
    state = callback_query(redirected_to_provider(api, process="connect"))["state"]

    landed = api.http.get(CALLBACK_PATH, {"state": state, "error": "access_denied"})

    assert landed["Location"] == APP_PAGE + "?error=cancelled&error_process=connect"
    assert api.get("account/providers").json()["data"] == []
