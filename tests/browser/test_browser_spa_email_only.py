"""The demo's single-page client on a site without usernames (``ACCOUNTS_SIGNUP_FIELDS =
["email*", "password1*"]``, ``ACCOUNTS_LOGIN_METHODS = {"email"}``), in Chromium: it asks for
no username, signs up with the address and a password, and logs in with the address."""

import re

import pytest

from tests.browser.test_browser_e2e import browser  # noqa: F401 (a fixture)
from tests.browser.test_browser_spa import answered, spa, transactional_db  # noqa: F401 (fixtures)
from tests.mail import mails_to
from tests.signup_fields import email_only  # noqa: F401 (a fixture)
from tests.web import PASSWORD

pytestmark = [pytest.mark.browser, pytest.mark.dynamodb_local]


# email_only comes first: the site is without usernames before spa opens its page.
def test_the_spa_signs_up_and_logs_in_with_the_address_alone(email_only, spa):  # noqa: F811
    from playwright.sync_api import expect

    answered(spa, "auth/session: 401")
    expect(spa.locator("#signup-username")).to_have_count(0)

    spa.fill("#signup-email", "ada@example.com")
    spa.fill("#signup-password", PASSWORD)
    spa.click("#signup")
    answered(spa, "auth/signup: 401")
    key = re.search(r"/accounts/verify/([^/]+)/", mails_to("ada@example.com")[-1].body).group(1)
    spa.fill("#verify-key", key)
    spa.click("#verify")
    answered(spa, "auth/email/verify: 200")
    expect(spa.locator("#user")).to_have_text("ada@example.com")
