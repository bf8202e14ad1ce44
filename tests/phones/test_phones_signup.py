"""A sign-up with a phone number (``ACCOUNTS_SIGNUP_FIELDS``' ``phone``): the number is the
account's unverified, and the sign-up waits for the code texted to it (django-allauth's
``verify_phone`` stage) before it completes; only then does the number hold its lock."""

import pytest
from django.test import Client

from accounts import store
from accounts.phones import store as phone_store
from tests.sms import NUMBER, NUMBER_E164, OTHER, code_to, outbox, phone_site, texts_to, wrong_code  # noqa: F401
from tests.web import PASSWORD, login, messages_of, signup_data

pytestmark = pytest.mark.dynamodb_local


def phone_signup(client, email="ada@example.com", phone=NUMBER):
    """Sign up on the phone site's page (address, number, password)."""
    data = signup_data(client, email, "", phone=phone)
    del data["username"], data["password2"]
    return client.post("/accounts/signup/", data)


def test_the_signup_page_asks_for_the_number(phone_site):
    form = Client().get("/accounts/signup/").context["form"]

    assert list(form.fields) == ["email", "phone", "password1", "token"]
    assert form.fields["phone"].required


def test_a_signup_waits_for_the_code_texted_to_its_number_then_logs_in(phone_site):
    client = Client()

    response = phone_signup(client)

    assert response.status_code == 302
    assert response["Location"] == "/accounts/phone/verify/"
    account = store.get_by_email("ada@example.com")
    assert (account.phone, account.phone_verified) == (NUMBER_E164, False)
    assert phone_store.get_by_phone(NUMBER) is None
    assert client.get("/accounts/profile/").status_code == 302  # not logged in yet
    (text,) = texts_to(NUMBER_E164)

    verified = client.post("/accounts/phone/verify/", {"code": text.code}, follow=True)

    assert verified.redirect_chain[0][0] == "/accounts/profile/"
    assert "Welcome, ada@example.com! Your account is ready." in messages_of(verified)
    assert phone_store.get_by_phone(NUMBER_E164).id == account.id
    assert phone_store.get_by_phone("+81 (0)90 1234 5678").id == account.id


def test_a_wrong_code_is_refused_and_the_last_try_ends_the_signups_verification(phone_site):
    client = Client()
    phone_signup(client)
    code = code_to(NUMBER_E164)

    for _ in range(2):
        refused = client.post("/accounts/phone/verify/", {"code": wrong_code(code)})
        assert refused.status_code == 400
        assert refused.context["form"].has_error("code", "incorrect_code")
    last = client.post("/accounts/phone/verify/", {"code": wrong_code(code)}, follow=True)

    assert last.redirect_chain[-1][0] == "/accounts/login/"
    assert "Too many wrong codes: this code no longer works. Ask for a new one." in messages_of(last)
    assert client.post("/accounts/phone/verify/", {"code": code}).status_code == 302
    assert phone_store.get_by_phone(NUMBER) is None


def test_a_number_a_verified_account_holds_is_refused_at_signup_by_the_condition_check(phone_site):
    first = Client()
    phone_signup(first)
    first.post("/accounts/phone/verify/", {"code": code_to(NUMBER_E164)})

    refused = phone_signup(Client(), "bob@example.com", phone="+819012345678")

    assert refused.status_code == 200
    assert refused.context["form"].has_error("phone", "phone_taken")
    assert store.get_by_email("bob@example.com") is None


def test_a_login_of_an_account_whose_number_is_unverified_waits_for_its_code(phone_site, settings):
    phone_signup(Client())  # never verified
    outbox.clear()
    settings.ACCOUNTS_RATE_LIMITS = {"verify_phone": False}  # the sign-up's code went out just now

    response = login(Client(), "ada@example.com", PASSWORD)

    assert response["Location"] == "/accounts/phone/verify/"
    assert [text.kind for text in texts_to(NUMBER_E164)] == ["code"]


def test_a_second_code_to_one_number_within_30_seconds_is_not_texted_and_the_page_says_so(phone_site):
    phone_signup(Client())
    outbox.clear()
    client = Client()

    response = login(client, "ada@example.com", PASSWORD)

    assert response["Location"] == "/accounts/phone/verify/"
    assert texts_to(NUMBER_E164) == []
    page = client.get("/accounts/phone/verify/").content.decode()
    assert "Too many texts went to +81 90-1234-5678 lately, so no code was sent." in page
