"""A real browser against the live server on DynamoDB Local.

Debian's chromium (``apt-get install chromium``) driven by Playwright for Python; nothing
is downloaded. Without chromium this test fails, it does not skip.
"""

import email
import email.policy
import os
import re
import socket
import time

import pytest

from accounts import store
from tests.mail import link_in, mails_to, use_mail_backend
from tests.web import PASSWORD, stored_accounts

# Debian's chromium, or another one named by $CHROMIUM (as .ci/system-parts checks it).
CHROMIUM = os.environ.get("CHROMIUM", "/usr/bin/chromium")
CHROMIUM_ARGS = [
    "--no-sandbox",
    "--headless",
    "--disable-gpu",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--no-first-run",
]
PHONE = {"width": 390, "height": 844}

pytestmark = [pytest.mark.browser, pytest.mark.dynamodb_local]


@pytest.fixture
def transactional_db():
    """pytest-django's live_server asks for this to flush the SQL database after the test;
    this project has none (``DATABASES = {}``), so there is nothing to set up or flush."""


@pytest.fixture(scope="module")
def browser():
    """Debian's chromium, headless, driven by Playwright."""
    if not os.access(CHROMIUM, os.X_OK):
        pytest.fail(
            f"Debian's chromium is not installed at {CHROMIUM}; the browser test needs it. "
            "Install it with: apt-get install chromium",
            pytrace=False,
        )
    from playwright.sync_api import sync_playwright

    with sync_playwright() as playwright:
        browser = playwright.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS)
        yield browser
        browser.close()


@pytest.fixture
def page(live_server, ddb, browser, settings):
    """A phone-sized browser tab on the live server, whose accounts live in the ``ddb`` table
    (and whose address, ``ACCOUNTS_SITE_URL``, the links in mail lead to)."""
    settings.ACCOUNTS_SITE_URL = live_server.url
    context = browser.new_context(base_url=live_server.url, viewport=PHONE)
    context.set_default_timeout(15_000)
    yield context.new_page()
    context.close()


def fill_signup(page, email, username, password=PASSWORD):
    page.goto("/accounts/signup/")
    page.fill("#id_email", email)
    page.fill("#id_username", username)
    page.fill("#id_password1", password)
    page.fill("#id_password2", password)
    page.get_by_role("button", name="Sign up").click()
    page.wait_for_load_state()


def test_sign_up_see_email_error_log_in_change_email_and_delete(page):
    from playwright.sync_api import expect

    fill_signup(page, "ada@example.com", "ada")
    expect(page).to_have_url(re.compile(r"/accounts/profile/$"))
    expect(page.locator(".messages")).to_contain_text("Welcome, ada!")
    expect(page.locator(".profile")).to_contain_text("ada@example.com")

    page.get_by_role("button", name="Log out", exact=True).click()
    expect(page.locator(".messages")).to_contain_text("You have logged out.")

    fill_signup(page, "ADA@example.com", "lovelace")
    expect(page).to_have_url(re.compile(r"/accounts/signup/$"))
    email_error = page.locator("#id_email_error")
    expect(email_error).to_have_text("This email address is already in use.")
    email_input = page.locator("#id_email")
    expect(email_input).to_have_attribute("aria-invalid", "true")
    expect(email_input).to_have_attribute("aria-describedby", "id_email_error")
    expect(email_input).to_have_value("ADA@example.com")
    expect(page.locator("#id_username")).to_have_value("lovelace")
    expect(page.locator("#id_password1")).to_have_value("")
    expect(page.locator("#id_username_error")).to_have_count(0)
    # Next to the field: the error sits right above the email input, in its own block.
    error_box, input_box = email_error.bounding_box(), email_input.bounding_box()
    assert 0 <= input_box["y"] - (error_box["y"] + error_box["height"]) < 20

    page.get_by_role("link", name="Log in").first.click()
    page.fill("#id_username", "ADA")
    page.fill("#id_password", PASSWORD)
    page.get_by_role("button", name="Log in").click()
    expect(page).to_have_url(re.compile(r"/accounts/profile/$"))
    expect(page.locator(".messages")).to_contain_text("You are logged in as ada.")

    page.locator(".profile").get_by_role("link", name="Change").first.click()
    expect(page.locator("#id_email")).to_have_value("ada@example.com")
    page.fill("#id_email", "lovelace@example.com")
    page.fill("#id_password", PASSWORD)
    page.get_by_role("button", name="Change email").click()
    expect(page).to_have_url(re.compile(r"/accounts/profile/$"))
    expect(page.locator(".messages")).to_contain_text("We sent a link to lovelace@example.com.")
    expect(page.locator(".profile")).to_contain_text("Change to lovelace@example.com pending")
    page.goto(link_in(mails_to("lovelace@example.com")[0]))
    page.get_by_role("button", name="Change my email address").click()
    expect(page.locator("main")).to_contain_text("Your email address is now lovelace@example.com.")
    assert store.get_by_email("lovelace@example.com").username == "ada"
    page.goto("/accounts/profile/")

    page.get_by_role("link", name="Delete your account").click()
    page.fill("#id_password", PASSWORD)
    page.get_by_role("button", name="Delete my account").click()
    expect(page.locator(".messages")).to_contain_text("Your account has been deleted.")
    expect(page.get_by_role("navigation").get_by_role("link", name="Log in")).to_be_visible()
    assert stored_accounts() == []


def test_sign_up_in_japanese_with_a_taken_email_then_switch_to_turkish(live_server, ddb, browser):
    from playwright.sync_api import expect

    context = browser.new_context(base_url=live_server.url, viewport=PHONE, locale="ja-JP")
    context.set_default_timeout(15_000)
    page = context.new_page()
    try:
        page.goto("/accounts/signup/")
        expect(page.locator("html")).to_have_attribute("lang", "ja")
        expect(page.get_by_role("heading", level=1)).to_have_text("アカウントの作成")
        page.get_by_label("メールアドレス").fill("taro@example.jp")
        page.get_by_label("ユーザー名").fill("山田タロウ")
        page.fill("#id_password1", PASSWORD)
        page.fill("#id_password2", PASSWORD)
        page.get_by_role("button", name="登録", exact=True).click()
        expect(page).to_have_url(re.compile(r"/accounts/profile/$"))
        expect(page.locator(".messages")).to_contain_text("ようこそ、山田タロウ さん。")
        page.get_by_role("button", name="ログアウト", exact=True).click()

        page.goto("/accounts/signup/")
        page.get_by_label("メールアドレス").fill("TARO@example.jp")
        page.get_by_label("ユーザー名").fill("hanako")
        page.fill("#id_password1", PASSWORD)
        page.fill("#id_password2", PASSWORD)
        page.get_by_role("button", name="登録", exact=True).click()
        expect(page.locator("#id_email_error")).to_have_text("このメールアドレスはすでに使われています。")

        page.select_option("#id_language", "tr")
        page.get_by_role("button", name="言語を切り替える").click()
        expect(page.get_by_role("heading", level=1)).to_have_text("Hesabınızı oluşturun")
        assert store.get_by_username("山田タロウ").email == "taro@example.jp"
    finally:
        context.close()


class Mailbox:
    """An aiosmtpd handler keeping every message it receives."""

    def __init__(self):
        self.messages = []

    async def handle_DATA(self, server, session, envelope):
        self.messages.append(email.message_from_bytes(envelope.content, policy=email.policy.default))
        return "250 Message accepted for delivery"


@pytest.fixture
def smtp_server(settings):
    """A real SMTP server on a free port, which the site sends its mail through."""
    from aiosmtpd.controller import Controller

    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    mailbox = Mailbox()
    controller = Controller(mailbox, hostname="127.0.0.1", port=port)
    controller.start()
    use_mail_backend(
        settings,
        "django.core.mail.backends.smtp.EmailBackend",
        host="127.0.0.1",
        port=port,
        use_tls=False,
        use_ssl=False,
        username="",
        password="",
    )
    yield mailbox
    controller.stop()


def wait_for_mail(mailbox, count):
    """The messages received, once there are ``count`` (bounded wait: the SMTP server
    hands them over from its own thread)."""
    for _ in range(100):
        if len(mailbox.messages) >= count:
            return mailbox.messages
        time.sleep(0.05)
    raise AssertionError(f"{len(mailbox.messages)} message(s) received, {count} expected")


def test_sign_up_read_the_mail_from_a_real_smtp_server_and_open_the_link(page, smtp_server, settings):
    from playwright.sync_api import expect

    settings.ACCOUNTS_EMAIL_VERIFICATION = "mandatory"

    fill_signup(page, "ada@example.com", "ada")
    expect(page).to_have_url(re.compile(r"/accounts/verify/sent/$"))
    expect(page.locator("main")).to_contain_text("We sent a link to ada@example.com")

    (message,) = wait_for_mail(smtp_server, 1)
    assert message["To"] == "ada@example.com"
    (link,) = re.findall(r"https?://\S+", message.get_content())
    assert link.startswith(page.url.split("/accounts/")[0] + "/accounts/verify/")
    page.goto(link)
    page.get_by_role("button", name="Confirm my address for ada").click()
    expect(page.locator("main")).to_contain_text("ada@example.com is confirmed")

    page.get_by_role("link", name="Log in").last.click()
    page.fill("#id_username", "ada@example.com")
    page.fill("#id_password", PASSWORD)
    page.get_by_role("button", name="Log in").click()
    expect(page).to_have_url(re.compile(r"/accounts/profile/$"))
    assert store.get_by_email("ada@example.com").email_verified is True
