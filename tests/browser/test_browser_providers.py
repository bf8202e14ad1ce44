"""Chromium signs in at a real OpenID provider (oidc-provider, tests/oidc.py) and comes back
signed in: the login page's "Sign in with Test ID", the provider's login and consent pages,
the site's one form of a first sign-in, then a second sign-in straight to the profile.

Debian's chromium driven by Playwright, as tests/browser/test_browser_e2e.py; it fails without it."""

import re

import pytest

from accounts import store
from accounts.providers import oidc
from accounts.providers import store as provider_store
from tests.browser.test_browser_e2e import PHONE, browser, transactional_db  # noqa: F401  (fixtures)
from tests.oidc import CALLBACK_PATH, PROVIDER_NAME, OidcProvider

pytestmark = [pytest.mark.browser, pytest.mark.dynamodb_local]


@pytest.fixture
def provider_page(live_server, ddb, browser, settings):  # noqa: F811
    settings.ACCOUNTS_SITE_URL = live_server.url
    with OidcProvider([live_server.url + CALLBACK_PATH]) as provider:
        settings.ACCOUNTS_OIDC_PROVIDERS = [provider.setting()]
        # As the demo's settings do for each configured issuer (project/settings.py).
        directives = settings.CONTENT_SECURITY_POLICY["DIRECTIVES"]
        form_action = [*directives["form-action"], provider.issuer]
        settings.CONTENT_SECURITY_POLICY = {"DIRECTIVES": {**directives, "form-action": form_action}}
        oidc.forget_cached_documents()
        context = browser.new_context(base_url=live_server.url, viewport=PHONE)
        context.set_default_timeout(15_000)
        yield provider, context.new_page()
        context.close()
    oidc.forget_cached_documents()


def sign_in_at_the_provider(page, login):
    page.goto("/accounts/login/")
    page.get_by_role("button", name=f"Sign in with {PROVIDER_NAME}").click()
    page.wait_for_url("**/interaction/**")
    page.fill("input[name=login]", login)
    page.fill("input[name=password]", "any password")
    page.get_by_role("button", name="Sign-in").click()
    page.get_by_role("button", name="Continue").click()
    page.wait_for_load_state()


def test_chromium_signs_in_at_the_provider_and_comes_back_signed_in(provider_page):
    from playwright.sync_api import expect

    provider, page = provider_page
    sign_in_at_the_provider(page, "alice")
    expect(page).to_have_url(f"{page.url.split('/accounts/')[0]}/accounts/providers/signup/")
    # The provider at its defaults: the address and the username from its UserInfo endpoint.
    expect(page.locator("#id_email")).to_have_value("alice@example.com")
    expect(page.locator("#id_username")).to_have_value("ally")
    page.get_by_role("button", name="Sign up").click()
    page.wait_for_load_state()
    expect(page).to_have_url(re.compile(r"/accounts/profile/$"))
    account = store.get_by_username("ally")
    assert provider_store.identities_of(account) == [(provider.issuer, "alice")]

    # A new browser session: the identity's lock leads straight to alice's profile.
    page.context.clear_cookies()
    sign_in_at_the_provider(page, "alice")
    expect(page).to_have_url(re.compile(r"/accounts/profile/$"))
    expect(page.get_by_text("alice@example.com").first).to_be_visible()


def test_chromium_cancelling_at_the_provider_ends_on_the_sites_page_saying_so(provider_page):
    from playwright.sync_api import expect

    provider, page = provider_page
    page.goto("/accounts/login/")
    page.get_by_role("button", name=f"Sign in with {PROVIDER_NAME}").click()
    page.wait_for_url("**/interaction/**")
    asked = provider.calls("/token")

    with page.expect_response(lambda response: CALLBACK_PATH in response.url) as answer:
        page.get_by_role("link", name="[ Cancel ]").click()
    page.wait_for_load_state()

    assert answer.value.status == 400
    expect(page.locator(".provider-error")).to_have_attribute("data-reason", "cancelled")
    expect(page.locator(".provider-error-description")).to_have_text("End-User aborted interaction")
    expect(page.get_by_role("link", name="Back to the login page")).to_be_visible()
    assert provider.calls("/token") == asked
