"""The password a half-login was begun with is a guard of its sign-in (issue 26), on DynamoDB
Local: a password change that commits after the second step read the account, and before its
sign-in's transaction, cancels that sign-in whole, whatever the factor (a TOTP code, a
recovery code, a passkey). The change is injected right after the second step's read."""

import time

import pytest
from django.contrib.auth.hashers import make_password
from django.test import Client

from accounts import store
from accounts.mfa import store as mfa_store
from tests import authenticator
from tests.mfa import ORIGIN, add_passkey, code_of, enable_totp, options, password_login, second_step
from tests.web import signed_up_client

pytestmark = pytest.mark.dynamodb_local


@pytest.fixture
def password_changed_after_the_read(monkeypatch):
    """Once armed (``arm()``), the next read of the account by the second step is followed by
    a committed change of its password: the step judges the account as it was."""
    read = mfa_store.read_account
    armed = []

    def read_then_change(account_id, *keys):
        found = read(account_id, *keys)
        if armed:
            armed.clear()
            store.set_password_hash(store.get_by_username("ada"), make_password("Brand-New-Harbor-9"))
        return found

    monkeypatch.setattr(mfa_store, "read_account", read_then_change)
    return lambda: armed.append(True)


def refused_and_left_anonymous(attacker, response):
    assert response.status_code == 302 and response["Location"] == "/accounts/login/"
    assert "_auth_user_id" not in attacker.session
    assert attacker.get("/accounts/profile/").status_code == 302


def staged_attacker():
    attacker = Client()
    assert password_login(attacker)["Location"] == "/accounts/mfa/authenticate/"
    return attacker


def test_a_totp_code_whose_sign_in_follows_a_password_change_is_cancelled(ddb, password_changed_after_the_read):
    secret, _ = enable_totp(signed_up_client())
    attacker = staged_attacker()
    code = code_of(secret, time.time() + 30)

    password_changed_after_the_read()
    response = second_step(attacker, code)

    refused_and_left_anonymous(attacker, response)
    browser = Client()
    browser.post("/accounts/login/", {"username": "ada", "password": "Brand-New-Harbor-9"})
    assert second_step(browser, code)["Location"] == "/accounts/profile/", "the cancelled sign-in spent no step"


def test_a_recovery_code_whose_sign_in_follows_a_password_change_is_cancelled(ddb, password_changed_after_the_read):
    _, codes = enable_totp(signed_up_client())
    attacker = staged_attacker()

    password_changed_after_the_read()
    response = second_step(attacker, codes[0])

    refused_and_left_anonymous(attacker, response)
    assert len(store.get_by_username("ada").recovery_codes) == 10


def test_a_passkey_whose_sign_in_follows_a_password_change_is_cancelled(ddb, password_changed_after_the_read):
    credential, _ = add_passkey(signed_up_client())
    attacker = staged_attacker()
    answer = authenticator.get(credential, options(attacker, "second_factor"), ORIGIN)

    password_changed_after_the_read()
    response = attacker.post("/accounts/mfa/authenticate/passkey/", {"credential": answer})

    refused_and_left_anonymous(attacker, response)


def test_without_a_change_the_injected_read_lets_the_second_step_in(ddb, password_changed_after_the_read):
    secret, _ = enable_totp(signed_up_client())
    attacker = staged_attacker()

    response = second_step(attacker, code_of(secret, time.time() + 30))

    assert response["Location"] == "/accounts/profile/"
