"""With ``ACCOUNTS_PREVENT_ENUMERATION`` a number another account verified is not refused at
sign-up: the same answer and the same page as for a free number, and its owner is told
instead of being texted a code, so nobody learns whose number it is, and nobody gets it."""

import re

import pytest
from django.test import Client

from tests.phones import phone_lock_owner, with_number
from tests.sms import NUMBER_E164, OTHER, OTHER_E164, outbox, phone_site  # noqa: F401
from tests.web import signup_data

pytestmark = pytest.mark.dynamodb_local


def without_tokens(page):
    """``page`` without its CSRF tokens (each client has its own)."""
    return re.sub(r'name="csrfmiddlewaretoken" value="[^"]*"', "", page)


def phone_signup(client, email, phone):
    data = signup_data(client, email, "", phone=phone)
    del data["username"], data["password2"]
    return client.post("/accounts/signup/", data)


def test_a_registered_number_answers_as_a_free_one_and_its_owner_is_told(phone_site, settings):
    settings.ACCOUNTS_PREVENT_ENUMERATION = True
    owner = with_number("owner@example.com")
    outbox.clear()
    client = Client()

    response = phone_signup(client, "squatter@example.com", "+81 90 1234 5678")

    assert response["Location"] == "/accounts/phone/verify/"
    assert [(text.phone, text.kind) for text in outbox] == [(NUMBER_E164, "already_exists")]
    page = client.get("/accounts/phone/verify/").content.decode()
    assert "We texted a code to +81 90-1234-5678." in page
    assert client.post("/accounts/phone/verify/", {"code": "ABCDEFGH"}).status_code == 400
    assert phone_lock_owner(NUMBER_E164) == owner.PK

    free = Client()
    free_response = phone_signup(free, "newcomer@example.com", OTHER)
    assert free_response.status_code == response.status_code
    assert free_response["Location"] == response["Location"]
    free_page = free.get("/accounts/phone/verify/").content.decode()
    assert without_tokens(free_page.replace("+44 7911 123456", "+81 90-1234-5678")) == without_tokens(page)
    assert [text.kind for text in outbox if text.phone == OTHER_E164] == ["code"]
