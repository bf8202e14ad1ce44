"""Logging in by phone number (``ACCOUNTS_LOGIN_METHODS``' ``phone``) on the pages: by number
and password, and by a code texted to the number; only a verified number names an account,
in any notation."""

import pytest
from django.contrib.auth import authenticate
from django.test import Client

from accounts import store
from accounts.phones import store as phone_store
from accounts.phones.numbers import parse_phone
from tests.phones import with_number
from tests.sms import NUMBER_E164, outbox, phone_site, texts_to  # noqa: F401
from tests.web import PASSWORD, login

pytestmark = pytest.mark.dynamodb_local


@pytest.mark.parametrize(
    "typed", ["+81 90-1234-5678", "+819012345678", "+81 (0)90 1234 5678", "＋８１９０１２３４５６７８"]
)
def test_a_verified_number_in_any_notation_logs_in_with_the_password(phone_site, typed):
    with_number()

    response = login(Client(), typed)

    assert (response.status_code, response["Location"]) == (302, "/accounts/profile/")


def test_an_unverified_number_names_nobody(phone_site):
    with_number(verified=False)

    refused = login(Client(), "+81 90-1234-5678")

    assert refused.status_code == 200
    assert refused.context["form"].non_field_errors() == [
        "Please enter a correct login (email address or phone number) and password. "
        "Note that the password is case-sensitive."
    ]


def test_the_login_page_asks_for_an_address_or_a_number(phone_site, settings):
    field = Client().get("/accounts/login/").context["form"].fields["username"]
    assert field.label == "Email address or phone number"

    settings.ACCOUNTS_LOGIN_METHODS = {"phone"}
    with_number()
    field = Client().get("/accounts/login/").context["form"].fields["username"]
    assert field.label == "Phone number"
    assert login(Client(), "ada@example.com").context["form"].has_error("username", "invalid_phone")
    assert login(Client(), "+819012345678").status_code == 302


def test_django_authenticate_finds_an_account_by_its_verified_number(phone_site):
    account = with_number()

    assert authenticate(username="+81 90 1234 5678", password=PASSWORD).pk == account.id


def test_a_login_code_asked_by_number_is_texted_to_it(phone_site, mailoutbox):
    account = with_number()
    client = Client()

    asked = client.post("/accounts/code/", {"login": "+81 90-1234-5678"})

    assert asked["Location"] == "/accounts/code/confirm/"
    assert mailoutbox == []
    (text,) = texts_to(NUMBER_E164)
    assert text.kwargs == {"login": True}
    confirmed = client.post("/accounts/code/confirm/", {"code": text.code})
    assert confirmed.status_code == 302
    assert client.get("/accounts/profile/").context["user"].pk == account.id


@pytest.mark.parametrize("change", ["changed", "removed"])
def test_a_texted_login_code_dies_with_the_number_it_went_to(phone_site, change):
    account = with_number()
    client = Client()
    client.post("/accounts/code/", {"login": "+81 90-1234-5678"})
    (text,) = texts_to(NUMBER_E164)

    if change == "changed":
        phone_store.set_phone(account, parse_phone("+81 90-8765-4321"), True)
    else:
        phone_store.remove(account)
    confirmed = client.post("/accounts/code/confirm/", {"code": text.code})

    assert confirmed.status_code == 200
    assert client.get("/accounts/profile/")["Location"].startswith("/accounts/login/")


def test_a_login_code_asked_by_address_is_still_mailed(phone_site, mailoutbox):
    with_number()

    Client().post("/accounts/code/", {"login": "ada@example.com"})

    assert [message.to for message in mailoutbox] == [["ada@example.com"]]
    assert outbox == []
