"""Every page and mail of second factors in Japanese, Turkish and French."""

import re

import pytest
from django.test import Client
from django.utils import translation

from accounts.mfa import notices
from tests.mail import mails_to
from tests.mfa import enable_totp, password_login
from tests.web import signed_up_client

pytestmark = pytest.mark.dynamodb_local

LANGUAGES = ("ja", "tr", "fr")
PAGES = {
    "/accounts/mfa/totp/": "Authenticator app",
    "/accounts/mfa/passkeys/": "Passkeys",
    "/accounts/mfa/recovery-codes/": "Recovery codes",
    "/accounts/mfa/reauthenticate/": "Confirm it is you",
}


def heading(response):
    return re.search(r"<h1>(.*?)</h1>", response.content.decode(), re.S).group(1).strip()


@pytest.mark.parametrize("language", LANGUAGES)
def test_the_pages_speak_the_language(ddb, language):
    client = signed_up_client()
    with translation.override(language):
        expected = {url: translation.gettext(english) for url, english in PAGES.items()}
        second_step = translation.gettext("Two-factor authentication")
    for url, english in PAGES.items():
        response = client.get(url, HTTP_ACCEPT_LANGUAGE=language)
        assert heading(response) == expected[url] != english, url
    enable_totp(client)
    visitor = Client()
    password_login(visitor)
    assert heading(visitor.get("/accounts/mfa/authenticate/", HTTP_ACCEPT_LANGUAGE=language)) == second_step


@pytest.mark.parametrize("language", LANGUAGES)
def test_the_notices_speak_the_language(ddb, rf, language):
    client = signed_up_client()
    enable_totp(client)
    account = client.get("/accounts/profile/").context["user"].account
    request = rf.get("/")
    with translation.override(language):
        notices.authenticator_added(request, account, "passkey", "Laptop")
        notices.authenticator_removed(request, account, "totp", by_staff=True)
        notices.recovery_code_used(request, account, 9)
    for mail in mails_to("ada@example.com")[-3:]:
        assert "Hello" not in mail.body and not mail.subject.startswith(("An authenticator", "A recovery code")), (
            mail.body
        )
        assert "ada" in mail.body
