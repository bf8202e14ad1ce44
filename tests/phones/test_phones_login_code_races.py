"""A login code dies with the phone number it was judged against, whatever the timing: a
number changed, removed or added between the confirmation's read of the account and its
sign-in's transaction cancels the sign-in whole (the transaction checks the account's
``phone`` as read: ``phone = :read``, or ``attribute_not_exists(phone)`` when it had none),
on the pages and through the API. The change is injected right after the confirmation's read, as in
``tests/security/test_security_login_code_bound.py``."""

import re

import pytest
from django.contrib.auth.hashers import make_password
from django.test import Client

from accounts import store
from accounts.phones import store as phone_store
from accounts.phones.numbers import parse_phone
from tests.headless import APIClient
from tests.phones import with_number
from tests.security.test_security_login_code_bound import (  # noqa: F401 (fixture)
    CONFIRM,
    REQUEST,
    changed_after_the_read,
    refused,
)
from tests.sms import NUMBER, NUMBER_E164, OTHER, phone_site, texts_to  # noqa: F401
from tests.web import PASSWORD

pytestmark = pytest.mark.dynamodb_local


def texted_code(client):
    """Ask, by number, for a code texted to ada's number; the code texted."""
    assert client.post(REQUEST, {"login": NUMBER})["Location"] == CONFIRM
    (text,) = texts_to(NUMBER_E164)
    return text.code


def mailed_code(client, mailoutbox):
    """Ask, by address, for a code mailed to ada; the code mailed."""
    assert client.post(REQUEST, {"login": "ada@example.com"})["Location"] == CONFIRM
    return re.search(r"log in: (\w{8})", mailoutbox[-1].body).group(1)


def without_number():
    """A new account (address verified) with no phone number."""
    account, _ = store.signup("ada@example.com", "", make_password(PASSWORD), email_verified=True)
    return account


def new_number(account):
    phone_store.set_phone(account, parse_phone(OTHER), True)


def no_number(account):
    phone_store.remove(account)


@pytest.mark.parametrize("change", [new_number, no_number], ids=["changed", "removed"])
def test_a_texted_code_whose_sign_in_follows_a_change_of_its_number_is_cancelled(
    phone_site, changed_after_the_read, change
):
    account = with_number()
    browser = Client()
    code = texted_code(browser)

    changed_after_the_read(change)
    response = browser.post(CONFIRM, {"code": code})

    assert refused(browser, response)["Location"] == REQUEST
    assert store.get_account(account.id).phone != NUMBER_E164  # the change committed
    # Typed again, the code is judged against the account as it is now: wrong, or gone.
    refused(browser, browser.post(CONFIRM, {"code": code}))


def test_a_mailed_code_whose_sign_in_follows_a_number_added_is_cancelled(
    phone_site, mailoutbox, changed_after_the_read
):
    account = without_number()
    browser = Client()
    code = mailed_code(browser, mailoutbox)

    changed_after_the_read(lambda read: phone_store.set_phone(read, parse_phone(NUMBER), True))
    response = browser.post(CONFIRM, {"code": code})

    assert refused(browser, response)["Location"] == REQUEST
    assert store.get_account(account.id).phone == NUMBER_E164


@pytest.mark.parametrize("number", [NUMBER, None], ids=["texted to a number", "mailed, no number"])
def test_a_code_whose_number_is_unchanged_logs_in_past_the_injected_read(
    phone_site, mailoutbox, changed_after_the_read, number
):
    account = with_number(phone=number) if number else without_number()
    browser = Client()
    code = texted_code(browser) if number else mailed_code(browser, mailoutbox)

    changed_after_the_read(lambda read: None)
    response = browser.post(CONFIRM, {"code": code})

    assert response.status_code == 302 and response["Location"] != REQUEST
    assert browser.get("/accounts/profile/").context["user"].pk == account.id


def test_a_texted_code_whose_sign_in_follows_a_change_of_its_number_is_cancelled_through_the_api(
    phone_site, changed_after_the_read
):
    with_number()
    api = APIClient("app")
    api.post("auth/code/request", {"phone": NUMBER})
    (text,) = texts_to(NUMBER_E164)

    changed_after_the_read(new_number)
    response = api.post("auth/code/confirm", {"code": text.code})

    assert response.status_code == 409
    assert api.get("auth/session").status_code == 401
