"""Requests of second factors, counted by the proxy in front of DynamoDB Local (as
tests/web/test_web_round_trips.py counts the other flows).

Goals (issue 20): a login with a passkey at most 3 requests (the session holding the
challenge, read with the credential's lock; the account's partition: the account, its
credential item and its sessions, which ACCOUNTS_MAX_SESSIONS bounds; one transaction
spending the challenge, recording the use and writing the session); the TOTP
step at most 3 (the half-login's session; the account with the limit's counters; one
transaction, which also checks the counters are under the limit). A wrong code costs the
two reads and one guarded UpdateItem per rule of ``mfa_attempt`` (two by default): 4.
"""

import time

import pytest
from django.test import Client

from accounts.mfa import totp
from tests import authenticator
from tests.mfa import ORIGIN, add_passkey, code_of, enable_totp, options, password_login, second_step
from tests.web import signed_up_client
from tests.web.test_web_round_trips import counted

pytestmark = pytest.mark.dynamodb_local


def test_a_passkey_login_is_three_requests(proxy):
    credential, _ = add_passkey(signed_up_client())
    client = Client()
    answer = authenticator.get(credential, options(client, "login"), ORIGIN)

    response, requests = counted(proxy, lambda: client.post("/accounts/mfa/passkey/login/", {"credential": answer}))

    assert response["Location"] == "/accounts/profile/"
    # The credential's lock (an anonymous visitor's challenge is in a signed cookie: no
    # session to read with it); the account's partition (the account, its credential item,
    # its sessions); the transaction.
    assert requests == {"GetItem": 1, "Query": 1, "TransactWriteItems": 1}


def test_a_passkey_login_without_a_user_handle_finds_the_account_by_its_lock(proxy):
    credential, _ = add_passkey(signed_up_client())
    client = Client()
    answer = authenticator.get(credential, options(client, "login"), ORIGIN, user_handle=False)

    response, requests = counted(proxy, lambda: client.post("/accounts/mfa/passkey/login/", {"credential": answer}))

    assert response["Location"] == "/accounts/profile/"
    assert requests == {"GetItem": 1, "Query": 1, "TransactWriteItems": 1}


def test_asking_for_the_options_of_a_passkey_login_writes_nothing(proxy):
    response, requests = counted(proxy, lambda: Client().post("/accounts/mfa/passkey/options/login/"))

    assert response.status_code == 200
    assert requests == {}  # the challenge is signed into a cookie: no session item


def test_the_password_step_of_an_account_with_a_second_factor_costs_what_a_login_does(proxy):
    enable_totp(signed_up_client())

    response, requests = counted(proxy, lambda: password_login(Client()))

    assert response["Location"] == "/accounts/mfa/authenticate/"
    # From a new browser, as any login: the lock, the account with its sessions;
    # login_failed's two counters counted before the password check and the address's taken
    # back; the session keeping the half-login written with the account's counter deleted.
    assert requests == {"GetItem": 1, "Query": 1, "UpdateItem": 3, "BatchWriteItem": 1}


def test_the_password_step_from_a_browser_trusted_by_its_second_step_costs_what_a_login_does(proxy):
    secret, _ = enable_totp(signed_up_client())
    browser = Client()
    password_login(browser)
    second_step(browser, code_of(secret, at=time.time() + totp.STEP_SECONDS))
    browser.post("/accounts/logout/")

    response, requests = counted(proxy, lambda: password_login(browser))

    assert response["Location"] == "/accounts/mfa/authenticate/"
    # As any login from a trusted browser: the lock, the account with its sessions; its own
    # counter; the session keeping the half-login written with that counter deleted.
    assert requests == {"GetItem": 1, "Query": 1, "UpdateItem": 1, "BatchWriteItem": 1}


def test_the_totp_step_is_three_requests(proxy):
    secret, _ = enable_totp(signed_up_client())
    client = Client()
    password_login(client)
    code = code_of(secret, at=time.time() + totp.STEP_SECONDS)

    response, requests = counted(proxy, lambda: second_step(client, code))

    assert response["Location"] == "/accounts/profile/"
    # The session (the half-login); the account with the limit's counters; the transaction.
    assert requests == {"BatchGetItem": 2, "TransactWriteItems": 1}


def test_a_wrong_code_is_one_guarded_write_per_rule_more_than_the_reads(proxy):
    secret, _ = enable_totp(signed_up_client())
    client = Client()
    password_login(client)
    wrong = f"{(int(code_of(secret)) + 500_000) % 10**6:06d}"

    response, requests = counted(proxy, lambda: second_step(client, wrong))

    assert response.status_code == 200
    # Each counter of mfa_attempt (5 in 5 minutes, 20 a day) by its own guarded UpdateItem:
    # a counter is never written in a transaction.
    assert requests == {"BatchGetItem": 2, "UpdateItem": 2}


def test_a_code_the_read_counters_put_over_the_limit_writes_nothing(proxy, settings):
    settings.ACCOUNTS_RATE_LIMITS = {"mfa_attempt": "1/h/key"}
    secret, _ = enable_totp(signed_up_client())
    client = Client()
    password_login(client)
    wrong = f"{(int(code_of(secret)) + 500_000) % 10**6:06d}"
    assert second_step(client, wrong).status_code == 200

    response, requests = counted(
        proxy, lambda: second_step(client, code_of(secret, at=time.time() + totp.STEP_SECONDS))
    )

    assert response.status_code == 429
    assert requests == {"BatchGetItem": 2}
