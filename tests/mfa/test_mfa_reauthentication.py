"""Reauthentication before sensitive changes, on DynamoDB Local: a login counts as fresh
for ``ACCOUNTS_REAUTHENTICATION_TIMEOUT``; past it, the sensitive pages send the person to
confirm with the password or a passkey, then back."""

import time

import pytest
from django.test import Client

from tests import authenticator
from tests.mfa import ORIGIN, add_passkey, options
from tests.web import OTHER_PASSWORD, PASSWORD, signed_up_client

pytestmark = pytest.mark.dynamodb_local

REAUTHENTICATE = "/accounts/mfa/reauthenticate/"
SENSITIVE_PAGES = [
    "/accounts/email/",
    "/accounts/password/",
    "/accounts/delete/",
    "/accounts/mfa/totp/",
    "/accounts/mfa/passkeys/",
    "/accounts/mfa/recovery-codes/",
]


def age(client, seconds):
    """Make the session's last proof of identity ``seconds`` old."""
    session = client.session
    session["accounts_authenticated_at"] = int(time.time()) - seconds
    session.save()


def test_a_login_is_fresh_for_the_timeout(ddb):
    client = signed_up_client()

    for url in SENSITIVE_PAGES:
        assert client.get(url).status_code == 200, url


@pytest.mark.parametrize("url", SENSITIVE_PAGES)
def test_past_the_timeout_a_sensitive_page_asks_to_reauthenticate(ddb, url):
    client = signed_up_client()
    age(client, 301)

    response = client.get(url)

    assert response.status_code == 302
    assert response["Location"] == f"{REAUTHENTICATE}?next={url.replace('/', '%2F')}"


def test_past_the_timeout_logging_out_the_other_sessions_asks_first(ddb):
    client = signed_up_client()
    other = Client()
    other.post("/accounts/login/", {"username": "ada", "password": PASSWORD})
    age(client, 301)

    response = client.post("/accounts/sessions/logout-others/")

    assert response["Location"] == f"{REAUTHENTICATE}?next=%2Faccounts%2Fprofile%2F"
    assert other.get("/accounts/profile/").status_code == 200


def test_the_timeout_is_a_setting(ddb, settings):
    settings.ACCOUNTS_REAUTHENTICATION_TIMEOUT = 3600
    client = signed_up_client()
    age(client, 3000)

    assert client.get("/accounts/email/").status_code == 200


def test_the_password_makes_it_fresh_and_goes_back(ddb):
    client = signed_up_client()
    age(client, 301)

    response = client.post(f"{REAUTHENTICATE}?next=/accounts/email/", {"password": PASSWORD})

    assert response["Location"] == "/accounts/email/"
    assert client.get("/accounts/email/").status_code == 200


def test_a_wrong_password_is_refused_and_each_try_counts(ddb, settings):
    settings.ACCOUNTS_RATE_LIMITS = {"reauthenticate": "2/m/user"}
    client = signed_up_client()
    age(client, 301)

    wrong = client.post(REAUTHENTICATE, {"password": OTHER_PASSWORD})
    client.post(REAUTHENTICATE, {"password": OTHER_PASSWORD})
    limited = client.post(REAUTHENTICATE, {"password": PASSWORD})

    assert wrong.context["form"].has_error("password")
    assert limited.status_code == 429
    assert client.get("/accounts/email/").status_code == 302


def test_a_next_url_elsewhere_is_not_followed(ddb):
    client = signed_up_client()
    age(client, 301)

    response = client.post(f"{REAUTHENTICATE}?next=https://evil.example/", {"password": PASSWORD})

    assert response["Location"] == "/accounts/profile/"


def test_a_passkey_makes_it_fresh(ddb):
    client = signed_up_client()
    credential, _ = add_passkey(client)
    age(client, 301)
    page = client.get(f"{REAUTHENTICATE}?next=/accounts/delete/").content.decode()
    assert "Confirm with a passkey" in page
    answer = authenticator.get(credential, options(client, "reauthenticate"), ORIGIN)

    response = client.post("/accounts/mfa/reauthenticate/passkey/", {"credential": answer, "next": "/accounts/delete/"})

    assert response["Location"] == "/accounts/delete/"
    assert client.get("/accounts/delete/").status_code == 200


def test_a_passkey_of_another_account_does_not_reauthenticate(ddb):
    grace = signed_up_client("grace@example.com", "grace")
    credential, _ = add_passkey(grace)
    client = signed_up_client()
    add_passkey(client)
    age(client, 301)
    answer = authenticator.get(credential, options(client, "reauthenticate"), ORIGIN)

    client.post("/accounts/mfa/reauthenticate/passkey/", {"credential": answer, "next": "/accounts/delete/"})

    assert client.get("/accounts/delete/").status_code == 302
