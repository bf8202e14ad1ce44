"""A sign-in racing the account's deactivation, on DynamoDB Local: staff deactivate the
account (which ends its sessions) after the sign-in read it active and before its transaction,
then reactivate it. The sign-in's transaction checks the account still active as read, so it
is cancelled, and nothing is left for the reactivation to let in (protocol/sign_in_races.pml,
A1; without that check ``end_sessions``' Query misses the session written after it)."""

import pytest
from django.test import Client

from accounts import dynamo, store
from accounts.mfa import store as mfa_store
from accounts.sessions import SESSION_SORT_PREFIX
from accounts.tables import account_pk
from tests.mfa import add_passkey, enable_totp, passkey_login
from tests.mfa.test_mfa_limits import half_logged_in, next_code_of
from tests.mfa.test_mfa_lost_races import answer_of
from tests.web import signed_up_client

pytestmark = pytest.mark.dynamodb_local

PROFILE = "/accounts/profile/"


def deactivated_meanwhile(monkeypatch):
    """Make staff deactivate ada (ending her sessions) just before the next sign-in's
    transaction, after the sign-in read her account active."""
    sign_in = mfa_store.sign_in

    def deactivated_first(*args, **kwargs):
        store.update_account(store.get_by_username("ada"), is_active=False)
        monkeypatch.setattr(mfa_store, "sign_in", sign_in)
        return sign_in(*args, **kwargs)

    monkeypatch.setattr(mfa_store, "sign_in", deactivated_first)


def sessions_of_ada():
    account = store.get_by_username("ada")
    return [
        item
        for item in dynamo.query_partition(account_pk(account.id), "SESS")
        if item["SK"]["S"].startswith(SESSION_SORT_PREFIX)
    ]


def reactivated():
    store.update_account(store.get_by_username("ada"), is_active=True)


def test_a_totp_second_step_racing_a_deactivation_leaves_no_session_for_the_reactivation(ddb, monkeypatch):
    secret, _ = enable_totp(signed_up_client())
    browser = half_logged_in(1)
    deactivated_meanwhile(monkeypatch)

    answer_of(browser.post("/accounts/mfa/authenticate/", {"code": next_code_of(secret)}))
    reactivated()

    assert sessions_of_ada() == []
    assert browser.get(PROFILE).status_code == 302


def test_a_recovery_code_second_step_racing_a_deactivation_leaves_no_session_for_the_reactivation(ddb, monkeypatch):
    _, codes = enable_totp(signed_up_client())
    browser = half_logged_in(1)
    deactivated_meanwhile(monkeypatch)

    answer_of(browser.post("/accounts/mfa/authenticate/", {"code": codes[0]}))
    reactivated()

    assert sessions_of_ada() == []
    assert browser.get(PROFILE).status_code == 302


def test_a_passkey_login_racing_a_deactivation_leaves_no_session_for_the_reactivation(ddb, monkeypatch):
    owner = signed_up_client()
    credential, _ = add_passkey(owner)
    owner.post("/accounts/logout/")
    browser = Client()
    deactivated_meanwhile(monkeypatch)

    passkey_login(browser, credential)
    reactivated()

    assert sessions_of_ada() == []
    assert browser.get(PROFILE).status_code == 302


def test_a_second_step_after_a_reactivation_signs_in(ddb):
    # The check is of the account as the sign-in read it: active again, it signs in.
    secret, _ = enable_totp(signed_up_client())
    store.update_account(store.get_by_username("ada"), is_active=False)
    reactivated()

    assert half_logged_in(1).post("/accounts/mfa/authenticate/", {"code": next_code_of(secret)})["Location"] == PROFILE
