"""A mailed login code dies with the password and the address it was mailed under (issue 35,
finding 4), as a half-login dies with its password: a password change, a reset or an email
change between the request and the confirmation refuses the code, and one committed between
the confirmation's read of the account and its sign-in's transaction cancels the sign-in
whole (the transaction checks the password and the address as read). The changes in the
race tests are injected right after the confirmation's read."""

import re

import pytest
from django.contrib.auth.hashers import make_password
from django.test import Client

from accounts import store
from tests.headless import APIClient
from tests.mail import link_in, mails_to, path_of
from tests.security.test_security_password_change_ends_paths import change_password, reset_password_by_mail
from tests.web import PASSWORD, signed_up_client

pytestmark = pytest.mark.dynamodb_local

REQUEST, CONFIRM = "/accounts/code/", "/accounts/code/confirm/"


def asked_code(mailoutbox):
    """A browser that asked for a code for ada, and the code mailed to her address."""
    mailoutbox.clear()
    browser = Client()
    assert browser.post(REQUEST, {"login": "ada"})["Location"] == CONFIRM
    (message,) = mailoutbox
    return browser, re.search(r"log in: (\w{8})", message.body).group(1)


def refused(browser, response):
    assert "_auth_user_id" not in browser.session
    assert browser.get("/accounts/profile/").status_code == 302
    return response


def change_email(owner):
    response = owner.post("/accounts/email/", {"email": "lovelace@example.com", "password": PASSWORD})
    assert response.status_code == 302
    assert Client().post(path_of(link_in(mails_to("lovelace@example.com")[-1]))).status_code == 200
    assert store.get_by_username("ada").email == "lovelace@example.com"


@pytest.mark.parametrize(
    "change",
    [change_password, lambda owner: reset_password_by_mail(), change_email],
    ids=["password change", "password reset", "email change"],
)
def test_a_code_mailed_before_the_owner_changed_its_password_or_address_is_refused(ddb, mailoutbox, change):
    owner = signed_up_client()
    browser, code = asked_code(mailoutbox)

    change(owner)
    response = browser.post(CONFIRM, {"code": code})

    assert refused(browser, response).context["form"].has_error("code", "wrong_code")


def test_a_code_mailed_before_a_password_change_is_refused_through_the_api(ddb, mailoutbox):
    owner = signed_up_client()
    api = APIClient("app")
    api.post("auth/code/request", {"email": "ada@example.com"})
    code = re.search(r"log in: (\w{8})", mailoutbox[-1].body).group(1)

    change_password(owner)
    response = api.post("auth/code/confirm", {"code": code})

    assert response.status_code == 400
    assert response.json()["errors"][0]["code"] == "incorrect_code"
    assert api.get("auth/session").status_code == 401


def test_a_code_asked_after_the_change_logs_in(ddb, mailoutbox):
    owner = signed_up_client()
    change_password(owner)
    browser, code = asked_code(mailoutbox)

    response = browser.post(CONFIRM, {"code": code})

    assert response.status_code == 302
    assert browser.get("/accounts/profile/").status_code == 200


@pytest.fixture
def changed_after_the_read(monkeypatch):
    """Once armed with a change (``arm(change)``), the next read of the account by a code's
    confirmation is followed by that change, committed: the code is judged against the
    account as it was."""
    read = store.read_partition
    armed = []

    def read_then_change(account_id):
        found = read(account_id)
        if armed:
            armed.pop()(store.get_account(account_id))
        return found

    monkeypatch.setattr(store, "read_partition", read_then_change)
    return armed.append


def new_password(account):
    store.set_password_hash(account, make_password("Brand-New-Harbor-9"))


def new_address(account):
    store.change_email(account, "lovelace@example.com")


@pytest.mark.parametrize("change", [new_password, new_address], ids=["password", "address"])
def test_a_code_whose_sign_in_follows_a_change_is_cancelled(ddb, mailoutbox, changed_after_the_read, change):
    signed_up_client()
    browser, code = asked_code(mailoutbox)

    changed_after_the_read(change)
    response = browser.post(CONFIRM, {"code": code})

    assert refused(browser, response)["Location"] == REQUEST
    # Typed again, the code is judged against the account as it is now: wrong, or gone.
    refused(browser, browser.post(CONFIRM, {"code": code}))


def test_a_code_whose_sign_in_follows_a_password_change_is_cancelled_through_the_api(
    ddb, mailoutbox, changed_after_the_read
):
    signed_up_client()
    api = APIClient("app")
    api.post("auth/code/request", {"email": "ada@example.com"})
    code = re.search(r"log in: (\w{8})", mailoutbox[-1].body).group(1)

    changed_after_the_read(new_password)
    response = api.post("auth/code/confirm", {"code": code})

    assert response.status_code == 409
    assert api.get("auth/session").status_code == 401


def test_without_a_change_the_injected_read_lets_the_code_in(ddb, mailoutbox, changed_after_the_read):
    signed_up_client()
    browser, code = asked_code(mailoutbox)

    changed_after_the_read(lambda account: None)
    response = browser.post(CONFIRM, {"code": code})

    assert response.status_code == 302 and response["Location"] != REQUEST
    assert browser.get("/accounts/profile/").status_code == 200
