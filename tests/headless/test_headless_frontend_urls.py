"""A single-page app beside the site: ``ACCOUNTS_HEADLESS_FRONTEND_URLS`` (django-allauth's
``HEADLESS_FRONTEND_URLS``) makes each mailed link lead into the app, whose page then
finishes the job through the API with the link's key; ``ACCOUNTS_HEADLESS_ONLY`` turns the
account pages off where allauth's ``HEADLESS_ONLY`` does; ``check`` says what is missing."""

from urllib.parse import unquote, urlsplit

import pytest
from django.core.exceptions import ImproperlyConfigured
from django.core.management import call_command
from django.core.management.base import SystemCheckError
from django.test import Client, RequestFactory

from accounts import store
from accounts.headless.frontend import frontend_url
from tests.headless import APIClient
from tests.mail import link_in, mails_to
from tests.web import OTHER_PASSWORD, PASSWORD, signed_up_client

pytestmark = pytest.mark.dynamodb_local

# The pages of allauth's React example app (its backend's settings.py).
REACT_APP = {
    "account_confirm_email": "/account/verify-email/{key}",
    "account_reset_password": "/account/password/reset",
    "account_reset_password_from_key": "/account/password/reset/key/{key}",
    "account_signup": "/account/signup",
    "socialaccount_login_error": "/account/provider/callback",
}


@pytest.fixture
def app_pages(settings):
    settings.ACCOUNTS_HEADLESS_FRONTEND_URLS = REACT_APP
    return settings


def key_in(link, page):
    """The key a link into the app's ``page`` (``/account/verify-email/``) carries."""
    path = urlsplit(link).path
    assert path.startswith(page), link
    return unquote(path.removeprefix(page))


# frontend_url


def test_a_page_is_filled_with_its_key_and_made_absolute_on_the_site_url(settings):
    settings.ACCOUNTS_HEADLESS_FRONTEND_URLS = {
        "account_confirm_email": "/verify/{key}",
        "account_reset_password_from_key": "https://app.example.com/reset?key={key}&next=/",
    }
    request = RequestFactory().get("/", HTTP_HOST="evil.example.com")

    assert frontend_url(request, "account_confirm_email", key="a b/c:d") == "http://testserver/verify/a%20b/c%3Ad"
    assert (
        frontend_url(request, "account_reset_password_from_key", key="a b&c")
        == "https://app.example.com/reset?key=a+b%26c&next=/"
    )
    assert frontend_url(request, "account_signup") is None


def test_a_page_without_the_placeholder_it_needs_is_a_configuration_error(settings):
    settings.ACCOUNTS_HEADLESS_FRONTEND_URLS = {"account_confirm_email": "/verify/"}

    with pytest.raises(ImproperlyConfigured):
        frontend_url(RequestFactory().get("/"), "account_confirm_email", key="k")


# Mail leads into the app, and the app finishes through the API.


@pytest.mark.parametrize("client", ["app", "browser"])
def test_the_verification_mail_leads_into_the_app_whose_page_verifies_through_the_api(
    ddb, app_pages, mailoutbox, client
):
    app_pages.ACCOUNTS_EMAIL_VERIFICATION = "mandatory"
    api = APIClient(client)
    assert api.signup().status_code == 401
    key = key_in(link_in(mails_to("ada@example.com")[-1]), "/account/verify-email/")

    shown = api.get("auth/email/verify", headers={"X-Email-Verification-Key": key})
    verified = api.post("auth/email/verify", {"key": key})

    assert shown.status_code == 200
    assert shown.json()["data"]["email"] == "ada@example.com"
    assert verified.status_code == 200
    assert store.is_verified(store.get_by_username("ada"))


def test_a_sign_up_on_the_html_page_mails_the_apps_link_too(ddb, app_pages, mailoutbox):
    # As allauth: the setting decides where links go, whichever front end sent the mail.
    app_pages.ACCOUNTS_EMAIL_VERIFICATION = "mandatory"
    from tests.web import signup

    signup(Client())

    assert urlsplit(link_in(mails_to("ada@example.com")[-1])).path.startswith("/account/verify-email/")


def test_the_reset_mail_leads_into_the_app_whose_page_resets_through_the_api(ddb, app_pages, mailoutbox):
    signed_up_client()
    api = APIClient("app")
    assert api.post("auth/password/request", {"email": "ada@example.com"}).status_code == 200
    key = key_in(link_in(mails_to("ada@example.com")[-1]), "/account/password/reset/key/")

    shown = api.get("auth/password/reset", headers={"X-Password-Reset-Key": key})
    reset = api.post("auth/password/reset", {"key": key, "password": OTHER_PASSWORD})

    assert shown.status_code == 200
    assert shown.json()["data"]["user"]["username"] == "ada"
    assert reset.status_code == 401
    assert APIClient("app").login("ada", OTHER_PASSWORD).status_code == 200


def test_a_notice_leads_to_the_apps_reset_page(ddb, app_pages, mailoutbox):
    api = APIClient("app")
    api.signup()
    mailoutbox.clear()

    changed = api.post("account/password/change", {"current_password": PASSWORD, "new_password": OTHER_PASSWORD})

    assert changed.status_code == 200
    (notice,) = mails_to("ada@example.com")
    assert link_in(notice) == "http://testserver/account/password/reset"


def test_without_the_setting_mail_leads_to_the_sites_pages(ddb, mailoutbox, settings):
    settings.ACCOUNTS_EMAIL_VERIFICATION = "mandatory"

    APIClient("app").signup()

    assert urlsplit(link_in(mails_to("ada@example.com")[-1])).path.startswith("/accounts/verify/")


# ACCOUNTS_HEADLESS_ONLY


PAGES = [
    "/accounts/signup/",
    "/accounts/login/",
    "/accounts/profile/",
    "/accounts/email/",
    "/accounts/password/reset/",
    "/accounts/verify/sent/",
    "/accounts/verify/some-token/",
    "/accounts/password/reset/code/",
    "/accounts/mfa/totp/",
    "/accounts/mfa/passkey/login/",
    "/accounts/providers/",
    "/accounts/providers/google/login/",
    "/accounts/code/",
]


@pytest.mark.parametrize("path", PAGES)
def test_headless_only_turns_every_account_page_off(ddb, settings, path):
    assert Client().get(path).status_code != 404
    settings.ACCOUNTS_HEADLESS_ONLY = True

    assert Client().get(path).status_code == 404


def test_headless_only_keeps_the_providers_callback_the_api_and_the_staff_pages(ddb, settings):
    from accounts.providers import oidc
    from tests.oidc_forger import ForgedProvider

    settings.ACCOUNTS_HEADLESS_ONLY = True
    with ForgedProvider() as forged:
        settings.ACCOUNTS_OIDC_PROVIDERS = [forged.setting()]
        oidc.forget_cached_documents()
        callback = Client().get(f"/accounts/providers/{forged.setting()['id']}/callback/")
    oidc.forget_cached_documents()

    assert callback.status_code != 404
    assert Client().get("/staff/").status_code != 404
    assert APIClient("browser").get("config").status_code == 200


def test_headless_only_never_mails_a_link_to_a_page_that_is_off(ddb, settings, mailoutbox, caplog):
    settings.ACCOUNTS_HEADLESS_ONLY = True
    settings.ACCOUNTS_EMAIL_VERIFICATION = "mandatory"

    signed_up = APIClient("app").signup()

    # The sign-up is saved, and says its mail could not be sent (it is logged).
    assert signed_up.status_code == 401
    assert mails_to("ada@example.com") == []
    assert "ACCOUNTS_HEADLESS_FRONTEND_URLS['account_confirm_email']" in caplog.text


def test_check_names_what_the_frontend_urls_lack(settings):
    settings.ACCOUNTS_HEADLESS_FRONTEND_URLS = {"account_confirm_email": "/verify/", "account_signin": "/in"}
    settings.ACCOUNTS_HEADLESS_ONLY = True

    with pytest.raises(SystemCheckError) as found:
        call_command("check", "--tag", "compatibility")

    message = str(found.value)
    assert "accounts.E036" in message
    assert "'account_confirm_email'] has no {key}" in message
    assert "names 'account_signin'" in message
    assert "ACCOUNTS_HEADLESS_FRONTEND_URLS['account_reset_password_from_key']" in message


def test_check_passes_with_the_react_apps_pages(app_pages):
    app_pages.ACCOUNTS_HEADLESS_ONLY = True

    call_command("check", "--tag", "compatibility")
