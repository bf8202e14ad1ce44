"""Ending sessions that changes nothing of the account, racing a reauthentication, on
DynamoDB Local (issue 35, the known gaps): "log out other sessions" (the page),
``DELETE auth/sessions`` (the API) and staff's "end sessions" read the account's sessions,
then delete them. A reauthentication by passkey or by mailed code of one of them commits
between the two: it deletes that session and puts its successor under a new key, which
the read did not name. The deletion is ONE transaction, each session's Delete guarded by
the session still being there as read (``attribute_exists(PK)``, protocol/sign_in_races.pml's
ENDS scenario): it is cancelled, the sessions are read again, and the successor (the same
session, by its id) is ended with the rest. A reauthentication keeps the session's id and
its creation, so its absolute lifetime too."""

import re
import threading

import pytest
from django.conf import settings as django_settings
from django.test import Client

from accounts import dynamo, sessions, store, transactions
from accounts.sessions import SESSION_SORT_PREFIX
from accounts.tables import account_pk
from tests import authenticator
from tests.headless import APIClient
from tests.mfa import ORIGIN, add_passkey, options, passkey_login
from tests.mfa.test_mfa_reauthentication import age
from tests.staff import client_as, make_account
from tests.web import OTHER_PASSWORD, PASSWORD, login, signed_up_client

pytestmark = pytest.mark.dynamodb_local

PROFILE = "/accounts/profile/"
WAYS = ["passkey", "code"]


def ada():
    return store.get_by_username("ada")


def keys_of_adas_sessions():
    return sorted(
        item["SK"]["S"]
        for item in dynamo.query_partition(account_pk(ada().id), SESSION_SORT_PREFIX)
        if item["SK"]["S"].startswith(SESSION_SORT_PREFIX)
    )


def key_of(client):
    return SESSION_SORT_PREFIX + client.cookies[django_settings.SESSION_COOKIE_NAME].value.rpartition(".")[2]


def owner_and_other_browser(way, mailoutbox):
    """Ada's first browser (``owner``, with a passkey when ``way`` is one) and another browser
    of hers (``other``, logged in with the passkey or her password, its proof old), and the
    request with which ``other`` reauthenticates by ``way``, prepared (its challenge or code
    asked for)."""
    owner = signed_up_client()
    credential = add_passkey(owner)[0] if way == "passkey" else None
    other = Client()
    assert (passkey_login(other, credential) if credential else login(other, "ada")).status_code == 302
    age(other, 301)
    if way == "passkey":
        answer = authenticator.get(credential, options(other, "reauthenticate"), ORIGIN)
        return owner, other, lambda: other.post("/accounts/mfa/reauthenticate/passkey/", {"credential": answer})
    mailoutbox.clear()
    other.post("/accounts/mfa/reauthenticate/code/send/")
    code = re.search(r"confirm it is you: (\w{8})", mailoutbox[-1].body).group(1)
    return owner, other, lambda: other.post("/accounts/mfa/reauthenticate/code/", {"code": code})


def deletes_sessions_only(puts, deletes):
    return any(key["SK"]["S"].startswith(SESSION_SORT_PREFIX) for key in deletes) and not any(
        item["SK"]["S"].startswith(SESSION_SORT_PREFIX) for item in puts
    )


def reauthenticated_before_the_deletion(monkeypatch, reauthenticate):
    """Make ``reauthenticate`` (another browser's request) commit after the sessions were
    read and before the request deleting them is sent: it runs, as a request of its own in
    a thread of its own, when the first request that deletes sessions and puts none (a
    BatchWriteItem or a TransactWriteItems) is about to go. Returns its answers (a list that
    fills)."""
    answers, started = [], []
    batch_write, run_once = dynamo.batch_write, transactions.run_once

    def reauthenticated_first(puts, deletes):
        if not started and deletes_sessions_only(puts, deletes):
            started.append(True)
            thread = threading.Thread(target=lambda: answers.append(reauthenticate()))
            thread.start()
            thread.join()

    def batch_write_after_it(puts=(), deletes=()):
        puts, deletes = list(puts), list(deletes)
        reauthenticated_first(puts, deletes)
        return batch_write(puts=puts, deletes=deletes)

    def run_once_after_it(transaction):
        puts = [action.body["Item"] for action in transaction.actions if action.kind == "Put"]
        deletes = [action.body["Key"] for action in transaction.actions if action.kind == "Delete"]
        reauthenticated_first(puts, deletes)
        return run_once(transaction)

    monkeypatch.setattr(dynamo, "batch_write", batch_write_after_it)
    monkeypatch.setattr(transactions, "run_once", run_once_after_it)
    return answers


def assert_reauthenticated_then_ended(answers, other):
    (answer,) = answers
    assert answer.status_code == 302 and "/reauthenticate" not in answer["Location"], "it did not reauthenticate"
    assert other.get(PROFILE).status_code == 302


@pytest.mark.parametrize("way", WAYS)
def test_a_reauthentication_between_log_out_other_sessions_read_and_its_deletion_is_logged_out(
    ddb, monkeypatch, mailoutbox, way
):
    owner, other, reauthenticate = owner_and_other_browser(way, mailoutbox)
    answers = reauthenticated_before_the_deletion(monkeypatch, reauthenticate)

    response = owner.post("/accounts/sessions/logout-others/")

    assert response.status_code == 302
    assert_reauthenticated_then_ended(answers, other)
    assert keys_of_adas_sessions() == [key_of(owner)]
    assert owner.get(PROFILE).status_code == 200


@pytest.mark.parametrize("way", WAYS)
def test_a_reauthentication_between_the_apis_read_and_its_deletion_of_that_session_is_logged_out(
    ddb, monkeypatch, mailoutbox, way
):
    owner, other, reauthenticate = owner_and_other_browser(way, mailoutbox)
    api = APIClient("browser", django_client=owner)
    other_id = id_of(other)
    assert other_id in [session["id"] for session in api.get("auth/sessions").json()["data"]]
    answers = reauthenticated_before_the_deletion(monkeypatch, reauthenticate)

    response = api.delete("auth/sessions", {"sessions": [other_id]})

    assert response.status_code == 200, response.content
    assert_reauthenticated_then_ended(answers, other)
    assert other_id not in [session["id"] for session in response.json()["data"]]
    assert keys_of_adas_sessions() == [key_of(owner)]
    assert owner.get(PROFILE).status_code == 200


@pytest.mark.parametrize("way", WAYS)
def test_a_reauthentication_between_staffs_read_and_its_deletion_is_logged_out(ddb, monkeypatch, mailoutbox, way):
    owner, other, reauthenticate = owner_and_other_browser(way, mailoutbox)
    staff = client_as(make_account("boss@example.com", "boss", staff=True))
    answers = reauthenticated_before_the_deletion(monkeypatch, reauthenticate)

    response = staff.post(f"/staff/accounts/{ada().id}/sessions/end/", follow=True)

    assert response.status_code == 200
    assert_reauthenticated_then_ended(answers, other)
    assert keys_of_adas_sessions() == []
    assert owner.get(PROFILE).status_code == 302


def password_changed_around_the_next_transaction(monkeypatch, owner):
    """Make ``owner`` (a browser of ada's) change her password while the next transaction
    is on its way (sent by a request that read the account and its session before): the
    change commits and its ``end_sessions`` Queries the sessions before it, and sends its
    BatchWriteItem after it. Returns the password change's answers (a list that fills)."""
    run_once, batch_write = transactions.run_once, dynamo.batch_write
    answers = []

    def inside_the_password_change(transaction):
        monkeypatch.setattr(transactions, "run_once", run_once)
        deferred = []
        monkeypatch.setattr(dynamo, "batch_write", lambda *args, **kwargs: deferred.append((args, kwargs)))
        answers.append(
            owner.post(
                "/accounts/password/",
                {"old_password": PASSWORD, "new_password1": OTHER_PASSWORD, "new_password2": OTHER_PASSWORD},
            )
        )
        monkeypatch.setattr(dynamo, "batch_write", batch_write)
        assert deferred, "the password change ended no session"
        try:
            return run_once(transaction)
        finally:
            for args, kwargs in deferred:
                batch_write(*args, **kwargs)

    monkeypatch.setattr(transactions, "run_once", inside_the_password_change)
    return answers


@pytest.mark.parametrize("way", WAYS)
def test_a_reauthentication_racing_a_password_change_leaves_its_session_logged_out(ddb, monkeypatch, mailoutbox, way):
    # A password change ends the sessions with a Query and a BatchWriteItem (no guard): a
    # reauthentication that read the session before the change and commits after it keeps a
    # session item, but one carrying the old password's session hash, refused when it is used.
    owner, other, reauthenticate = owner_and_other_browser(way, mailoutbox)
    changes = password_changed_around_the_next_transaction(monkeypatch, owner)

    answer = reauthenticate()

    assert answer.status_code == 302 and "/reauthenticate" not in answer["Location"], "it did not reauthenticate"
    assert key_of(other) in keys_of_adas_sessions(), "its new key was not written after the change"
    (change,) = changes
    assert change.status_code == 302 and change["Location"] != "/accounts/password/", "the password did not change"
    assert other.get(PROFILE).status_code == 302
    assert owner.get(PROFILE).status_code == 200


def id_of(client):
    """The id ``auth/sessions`` gives the session of ``client`` (a browser of ada's)."""
    from accounts.headless.responses import session_id

    key = client.cookies[django_settings.SESSION_COOKIE_NAME].value
    (info,) = [info for info in sessions.list_sessions(ada().id, key) if info.current]
    return session_id(info.id)


def stored(client):
    """The raw item of ``client``'s session."""
    key = client.cookies[django_settings.SESSION_COOKIE_NAME].value
    (item,) = dynamo.batch_get([sessions.raw_key(key)])
    return item


def made_older(client, seconds):
    """Move the creation of ``client``'s session ``seconds`` back, as if it had logged in
    then; returns its new ``created``."""
    item = stored(client)
    item["created"] = {"N": str(int(item["created"]["N"]) - seconds)}
    dynamo.call("put_item", TableName=dynamo.table_name(), Item=item)
    return int(item["created"]["N"])


@pytest.mark.parametrize("way", WAYS)
def test_a_reauthentication_keeps_the_sessions_creation_and_id_so_its_absolute_lifetime(
    ddb, monkeypatch, mailoutbox, way
):
    _, other, reauthenticate = owner_and_other_browser(way, mailoutbox)
    created = made_older(other, django_settings.SESSION_COOKIE_AGE - 3600)
    before = (key_of(other), id_of(other))

    assert reauthenticate().status_code == 302

    item = stored(other)
    assert key_of(other) != before[0]
    assert int(item["created"]["N"]) == created
    assert int(item["expires"]["N"]) <= created + django_settings.SESSION_COOKIE_AGE
    assert id_of(other) == before[1]
