"""A login's session write racing the account's deactivation, on DynamoDB Local (issue 35,
the known gaps): staff deactivate the account (which ends its sessions: a Query, then a
BatchWriteItem) after the login read it active and before its session is written, then
reactivate it. The session write checks the account still there and active as read
(``is_active = :read``, protocol/sign_in_races.pml, A1), so nothing is left for the
reactivation to let in: a password login (with and without session slots, on the page and
in the API) and a login by code. A reauthentication that commits between ``end_sessions``'
Query and its BatchWriteItem is refused the same way: its new session key would escape the
deletion."""

import re

import pytest
from django.conf import settings as django_settings
from django.test import Client

from accounts import dynamo, sessions, store, transactions
from accounts.sessions import SESSION_SORT_PREFIX
from accounts.tables import account_pk
from tests import authenticator
from tests.headless import APIClient
from tests.mfa import ORIGIN, add_passkey, options
from tests.mfa.test_mfa_reauthentication import age
from tests.web import PASSWORD, login, signed_up_client

pytestmark = pytest.mark.dynamodb_local

PROFILE = "/accounts/profile/"


def ada():
    return store.get_by_username("ada")


def sessions_of_ada():
    return [
        item
        for item in dynamo.query_partition(account_pk(ada().id), "SESS")
        if item["SK"]["S"].startswith(SESSION_SORT_PREFIX)
    ]


def deactivated_before_the_next_transaction(monkeypatch):
    """Make staff deactivate ada (ending her sessions) just before the next transaction is
    sent, after the request read her account active. Returns the transactions sent since."""
    run_once = transactions.run_once
    sent = []

    def deactivated_first(transaction):
        if not sent:
            store.update_account(ada(), is_active=False)
        sent.append(transaction)
        return run_once(transaction)

    monkeypatch.setattr(transactions, "run_once", deactivated_first)
    return sent


def reactivated():
    store.update_account(ada(), is_active=True)


def logged_out_owner():
    owner = signed_up_client()
    owner.post("/accounts/logout/")
    return owner


@pytest.mark.parametrize("max_sessions", [20, None])
def test_a_password_login_racing_a_deactivation_leaves_no_session_for_the_reactivation(
    ddb, settings, monkeypatch, max_sessions
):
    settings.ACCOUNTS_MAX_SESSIONS = max_sessions
    logged_out_owner()
    browser = Client()
    sent = deactivated_before_the_next_transaction(monkeypatch)

    response = login(browser, "ada")
    reactivated()

    assert response.status_code == 400
    assert (
        django_settings.SESSION_COOKIE_NAME not in browser.cookies
        or not browser.cookies[django_settings.SESSION_COOKIE_NAME].value
    )
    assert sessions_of_ada() == []
    assert browser.get(PROFILE).status_code == 302
    # An inactive account is no slot conflict: one transaction, no retry.
    assert len(sent) == 1


def test_an_api_login_racing_a_deactivation_leaves_no_session_for_the_reactivation(ddb, monkeypatch):
    logged_out_owner()
    api = APIClient("app")
    deactivated_before_the_next_transaction(monkeypatch)

    response = api.login("ada")
    reactivated()

    assert response.status_code == 410
    assert response.json()["meta"]["is_authenticated"] is False
    assert "session_token" not in response.json()["meta"]
    assert sessions_of_ada() == []


def test_a_code_login_racing_a_deactivation_leaves_no_session_for_the_reactivation(ddb, monkeypatch, mailoutbox):
    logged_out_owner()
    browser = Client()
    mailoutbox.clear()
    browser.post("/accounts/code/", {"login": "ada"})
    code = re.search(r"log in: (\w{8})", mailoutbox[-1].body).group(1)
    deactivated_before_the_next_transaction(monkeypatch)

    browser.post("/accounts/code/confirm/", {"code": code})
    reactivated()

    assert sessions_of_ada() == []
    assert browser.get(PROFILE).status_code == 302


def test_a_login_after_a_reactivation_logs_in(ddb):
    logged_out_owner()
    store.update_account(ada(), is_active=False)
    reactivated()

    browser = Client()

    assert login(browser, "ada")["Location"] == PROFILE
    assert browser.get(PROFILE).status_code == 200


def deactivated_around_the_next_transaction(monkeypatch):
    """Make staff deactivate ada while the next transaction is on its way: the deactivation
    commits and ``end_sessions`` Queries her sessions before it, and sends its
    BatchWriteItem after it."""
    run_once, batch_write = transactions.run_once, dynamo.batch_write

    def inside_end_sessions(transaction):
        monkeypatch.setattr(transactions, "run_once", run_once)
        deferred = []
        monkeypatch.setattr(dynamo, "batch_write", lambda *args, **kwargs: deferred.append((args, kwargs)))
        store.update_account(ada(), is_active=False)
        monkeypatch.setattr(dynamo, "batch_write", batch_write)
        assert deferred, "end_sessions found no session to delete"
        try:
            return run_once(transaction)
        finally:
            for args, kwargs in deferred:
                batch_write(*args, **kwargs)

    monkeypatch.setattr(transactions, "run_once", inside_end_sessions)


def test_a_passkey_reauthentication_between_end_sessions_query_and_its_deletion_is_refused(ddb, monkeypatch):
    browser = signed_up_client()
    credential, _ = add_passkey(browser)
    age(browser, 301)
    answer = authenticator.get(credential, options(browser, "reauthenticate"), ORIGIN)
    deactivated_around_the_next_transaction(monkeypatch)

    browser.post("/accounts/mfa/reauthenticate/passkey/", {"credential": answer})
    reactivated()

    assert sessions_of_ada() == []
    assert browser.get(PROFILE).status_code == 302


def test_a_mailed_code_reauthentication_between_end_sessions_query_and_its_deletion_is_refused(
    ddb, monkeypatch, mailoutbox
):
    browser = signed_up_client()
    age(browser, 301)
    mailoutbox.clear()
    browser.post("/accounts/mfa/reauthenticate/code/send/")
    code = re.search(r"confirm it is you: (\w{8})", mailoutbox[-1].body).group(1)
    deactivated_around_the_next_transaction(monkeypatch)

    browser.post("/accounts/mfa/reauthenticate/code/", {"code": code})
    reactivated()

    assert sessions_of_ada() == []
    assert browser.get(PROFILE).status_code == 302


def test_a_password_login_between_end_sessions_query_and_its_deletion_is_refused(ddb, monkeypatch):
    signed_up_client()
    browser = Client()
    deactivated_around_the_next_transaction(monkeypatch)

    login(browser, "ada")
    reactivated()

    assert sessions_of_ada() == []
    assert browser.get(PROFILE).status_code == 302


def test_the_session_check_costs_no_request_more(proxy):
    from tests.web.test_web_round_trips import counted

    logged_out_owner()
    browser = Client()

    response, requests = counted(proxy, lambda: login(browser, "ada", PASSWORD))

    assert response.status_code == 302
    assert requests["TransactWriteItems"] == 1
    assert sessions.SessionStore(browser.cookies[django_settings.SESSION_COOKIE_NAME].value).load()
