"""A single-page app in Chromium speaks the headless API's ``browser`` client: the demo's
plain-JavaScript client at ``/spa/`` signs up, verifies by the mailed key (which logs it in), sets up
and passes the authenticator-app step, lists and ends sessions, and logs out, with the
session cookie and Django's CSRF token as an SPA written for django-allauth does."""

import re
import time

import pyotp
import pytest

from tests.browser.test_browser_e2e import CHROMIUM_ARGS, PHONE, browser  # noqa: F401
from tests.headless.test_headless_app_client import App
from tests.mail import mails_to
from tests.web import PASSWORD

pytestmark = [pytest.mark.browser, pytest.mark.dynamodb_local]


@pytest.fixture
def transactional_db():
    """pytest-django's live_server asks for this; this project has no SQL database."""


@pytest.fixture
def spa(live_server, ddb, browser, settings):  # noqa: F811
    settings.ACCOUNTS_SITE_URL = live_server.url
    settings.ACCOUNTS_EMAIL_VERIFICATION = "mandatory"
    context = browser.new_context(base_url=live_server.url, viewport=PHONE)
    context.set_default_timeout(15_000)
    page = context.new_page()
    page.goto("/spa/")
    yield page
    context.close()


def answered(page, text):
    from playwright.sync_api import expect

    expect(page.locator("#status")).to_have_text(text)


def test_the_spa_signs_up_verifies_logs_in_passes_totp_ends_a_session_and_logs_out(spa, live_server):
    from playwright.sync_api import expect

    answered(spa, "auth/session: 401")

    spa.fill("#signup-email", "ada@example.com")
    spa.fill("#signup-username", "ada")
    spa.fill("#signup-password", PASSWORD)
    spa.click("#signup")
    answered(spa, "auth/signup: 401")
    expect(spa.locator("#pending")).to_have_text("verify_email")

    key = re.search(r"/accounts/verify/([^/]+)/", mails_to("ada@example.com")[-1].body).group(1)
    spa.fill("#verify-key", key)
    spa.click("#verify")
    # The sign-up this browser keeps pending, verified: its login goes on (allauth's verify_email stage).
    answered(spa, "auth/email/verify: 200")
    expect(spa.locator("#user")).to_have_text("ada")

    other_device = App(live_server.url)
    assert other_device.call("POST", "auth/login", {"username": "ada", "password": PASSWORD}).status_code == 200

    spa.click("#totp-begin")
    answered(spa, "account/authenticators/totp: 404")
    secret = spa.locator("#totp-secret").text_content()
    totp = pyotp.TOTP(secret)
    spa.fill("#totp-code", totp.now())
    spa.click("#totp-activate")
    answered(spa, "account/authenticators/totp: 200")

    spa.click("#logout")
    answered(spa, "auth/session: 401")
    expect(spa.locator("#user")).to_have_text("")

    spa.fill("#login-username", "ada")
    spa.fill("#login-password", PASSWORD)
    spa.click("#login")
    answered(spa, "auth/login: 401")
    expect(spa.locator("#pending")).to_have_text("mfa_authenticate")
    # The next period's code: the one that set the app up is spent.
    spa.fill("#mfa-code", totp.at(time.time() + 30))
    spa.click("#mfa-authenticate")
    answered(spa, "auth/2fa/authenticate: 200")
    expect(spa.locator("#user")).to_have_text("ada")

    spa.click("#sessions")
    answered(spa, "auth/sessions: 200")
    sessions = spa.locator("#session-list li")
    expect(sessions).to_have_count(2)
    spa.locator("#session-list li[data-current=false] button").click()
    answered(spa, "auth/sessions: 200")
    expect(sessions).to_have_count(1)
    expect(sessions.first).to_have_attribute("data-current", "true")
    assert other_device.call("GET", "auth/session").status_code == 410

    spa.click("#logout")
    answered(spa, "auth/session: 401")
    expect(spa.locator("#user")).to_have_text("")
    assert spa.context.request.get(f"{live_server.url}/_allauth/browser/v1/auth/session").status == 401
