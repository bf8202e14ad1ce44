"""A new password ends every path into the account that was begun before it (issue 26,
finding 2): a second step staged with the old password, whoever finishes it and with
whatever right code; and a verification link mailed before it."""

import time

import pytest
from django.test import Client

from accounts import store
from tests.mail import link_in, mails_to, path_of
from tests.mfa import code_of, enable_totp, password_login, second_step
from tests.web import PASSWORD, signed_up_client
from tests.web.test_web_password_reset import NEW_PASSWORD, ask_reset, set_new_password

pytestmark = pytest.mark.dynamodb_local


def change_password(client):
    response = client.post(
        "/accounts/password/",
        {"old_password": PASSWORD, "new_password1": NEW_PASSWORD, "new_password2": NEW_PASSWORD},
    )
    assert response["Location"] == "/accounts/profile/", response.content.decode()


def reset_password_by_mail():
    ask_reset(Client(), "ada@example.com")
    (reset_mail,) = [mail for mail in mails_to("ada@example.com") if "reset" in mail.subject.lower()]
    response = set_new_password(Client(), path_of(link_in(reset_mail)))
    assert response.status_code == 302


def refused_and_left_anonymous(attacker, response):
    assert response.status_code == 302 and response["Location"] == "/accounts/login/"
    assert "_auth_user_id" not in attacker.session
    assert attacker.get("/accounts/profile/").status_code == 302


def test_a_recovery_code_sent_after_the_owner_changed_the_password_is_refused(ddb):
    owner = signed_up_client()
    _, codes = enable_totp(owner)
    attacker = Client()
    assert password_login(attacker)["Location"] == "/accounts/mfa/authenticate/"

    change_password(owner)
    response = second_step(attacker, codes[0])

    refused_and_left_anonymous(attacker, response)
    assert len(store.get_by_username("ada").recovery_codes) == 10
    assert owner.get("/accounts/profile/").status_code == 200


def unspent_code(secret, enrolled_step):
    """A code the app accepts now that enrolment did not spend (its step is used once)."""
    now = time.time()
    return code_of(secret, at=now + 30 if int(now // 30) == enrolled_step else now)


def test_a_totp_code_sent_after_the_owner_reset_the_password_by_mail_is_refused(ddb):
    enrolled_step = int(time.time() // 30)
    secret, _ = enable_totp(signed_up_client())
    attacker = Client()
    assert password_login(attacker)["Location"] == "/accounts/mfa/authenticate/"

    reset_password_by_mail()
    response = second_step(attacker, unspent_code(secret, enrolled_step))

    refused_and_left_anonymous(attacker, response)


def test_a_second_step_staged_with_the_new_password_still_signs_in(ddb):
    owner = signed_up_client()
    _, codes = enable_totp(owner)
    change_password(owner)
    browser = Client()
    browser.post("/accounts/login/", {"username": "ada", "password": NEW_PASSWORD})

    assert second_step(browser, codes[0])["Location"] == "/accounts/profile/"


def test_a_verification_link_mailed_before_a_password_change_no_longer_verifies(ddb, settings):
    settings.ACCOUNTS_EMAIL_VERIFICATION = "optional"
    owner = signed_up_client()
    (verification_mail,) = mails_to("ada@example.com")
    change_password(owner)

    Client().post(path_of(link_in(verification_mail)))

    assert store.get_by_username("ada").email_verified is False
