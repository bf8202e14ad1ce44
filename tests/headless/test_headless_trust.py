"""``auth/2fa/trust`` and the pending ``mfa_trust`` flow, as django-allauth's API has them with
``MFA_TRUST_ENABLED`` (``ACCOUNTS_MFA_TRUST_ENABLED``): a browser's second step answers 401
with ``mfa_trust`` pending, and trusting the browser makes its next logins skip the second
step; the ``app`` client (no cookies) is never offered it."""

import time

import pytest

from accounts.mfa import trust
from tests.headless import APIClient
from tests.mfa import code_of, enable_totp
from tests.web import OTHER_PASSWORD, PASSWORD, signed_up_client

pytestmark = pytest.mark.dynamodb_local


@pytest.fixture
def secret(ddb, settings):
    settings.ACCOUNTS_MFA_TRUST_ENABLED = True
    found, _ = enable_totp(signed_up_client())
    return found


def pending(response):
    return [flow for flow in response.json()["data"]["flows"] if flow.get("is_pending")]


def through_the_second_step(api, secret, step=1):
    assert api.login("ada").status_code == 401
    return api.post("auth/2fa/authenticate", {"code": code_of(secret, at=time.time() + 30 * step)})


def test_a_browsers_second_step_offers_the_trust_and_trusting_skips_the_next_second_step(secret):
    browser = APIClient("browser")

    offered = through_the_second_step(browser, secret)

    assert offered.status_code == 401, offered.content
    assert pending(offered) == [{"id": "mfa_trust", "is_pending": True}]
    assert offered.json()["meta"]["is_authenticated"] is False
    trusted = browser.post("auth/2fa/trust", {"trust": True})
    assert trusted.status_code == 200, trusted.content
    assert trusted.json()["meta"]["is_authenticated"] is True
    assert trust.COOKIE_NAME in trusted.cookies
    assert [method["method"] for method in trusted.json()["data"]["methods"]] == ["password", "mfa"]
    assert browser.delete("auth/session").status_code == 401

    again = browser.login("ada")

    assert again.status_code == 200, again.content


def test_declining_the_trust_logs_in_and_the_next_login_asks_again(secret):
    browser = APIClient("browser")
    through_the_second_step(browser, secret)

    declined = browser.post("auth/2fa/trust", {"trust": False})

    assert declined.status_code == 200
    assert trust.COOKIE_NAME not in declined.cookies
    browser.delete("auth/session")
    assert pending(browser.login("ada"))[0]["id"] == "mfa_authenticate"


def test_a_password_change_ends_the_trust(secret):
    browser = APIClient("browser")
    through_the_second_step(browser, secret)
    browser.post("auth/2fa/trust", {"trust": True})
    browser.delete("auth/session")
    assert browser.login("ada").status_code == 200
    changed = browser.post("account/password/change", {"current_password": PASSWORD, "new_password": OTHER_PASSWORD})
    assert changed.status_code == 200, changed.content
    browser.delete("auth/session")

    again = browser.login("ada", OTHER_PASSWORD)

    assert again.status_code == 401
    assert pending(again)[0]["id"] == "mfa_authenticate"


def test_the_trust_answers_only_a_pending_offer_once(secret):
    browser = APIClient("browser")
    assert browser.post("auth/2fa/trust", {"trust": True}).status_code == 401
    through_the_second_step(browser, secret)
    assert browser.post("auth/2fa/trust", {"trust": "yes"}).json()["errors"][0]["param"] == "trust"
    assert browser.post("auth/2fa/trust", {"trust": True}).status_code == 200

    again = browser.post("auth/2fa/trust", {"trust": True})

    assert again.status_code == 401
    assert trust.COOKIE_NAME not in again.cookies


def test_an_app_is_never_offered_the_trust(secret):
    app = APIClient("app")

    done = through_the_second_step(app, secret)

    assert done.status_code == 200, done.content
    assert app.post("auth/2fa/trust", {"trust": True}).status_code == 404


def test_with_trust_off_the_second_step_logs_in_and_the_operation_is_not_found(secret, settings):
    settings.ACCOUNTS_MFA_TRUST_ENABLED = False
    browser = APIClient("browser")

    assert through_the_second_step(browser, secret).status_code == 200
    refused = browser.post("auth/2fa/trust", {"trust": True})
    assert refused.status_code == 404
    assert refused["Content-Type"].startswith("application/json")
