"""Every challenge is used once whatever its factor's counter, on DynamoDB Local: one
reauthentication answer of a passkey whose counter stays 0 (a synced passkey) sent by 16
requests of one session reauthenticates once, and a TOTP enrolment racing the account's
deletion leaves nothing in the deleted partition (it is one guarded write of the account)."""

import threading
import time

import pytest
from django.conf import settings as django_settings
from django.test import Client

from accounts import dynamo, store
from accounts.exceptions import StaleItem
from accounts.mfa import recovery_codes, totp
from accounts.mfa import store as mfa_store
from accounts.tables import PROFILE_SORT_KEY
from tests import authenticator
from tests.mfa import ORIGIN, add_passkey, options
from tests.mfa.test_mfa_reauthentication import REAUTHENTICATE, age
from tests.web import signed_up_client
from tests.web.test_login_limits import sixteen_at_once

pytestmark = pytest.mark.dynamodb_local

SENSITIVE = "/accounts/delete/"
LOGIN = "/accounts/login/"


def same_session(client):
    """A new browser holding ``client``'s session cookie: a request of the same session."""
    copy = Client()
    copy.cookies[django_settings.SESSION_COOKIE_NAME] = client.cookies[django_settings.SESSION_COOKIE_NAME].value
    return copy


def test_one_answer_of_a_counter_0_passkey_sent_16_times_reauthenticates_once(ddb):
    client = signed_up_client()
    credential, _ = add_passkey(client)
    age(client, 301)
    # A synced passkey reports 0 every time: the counter cannot tell a replay apart.
    answer = authenticator.get(credential, options(client, "reauthenticate"), ORIGIN, counter=0)
    browsers = [same_session(client) for _ in range(16)]

    answers = sixteen_at_once(
        lambda number: browsers[number].post(f"{REAUTHENTICATE}passkey/", {"credential": answer, "next": SENSITIVE})
    )

    landed = sorted(answer["Location"] for answer in answers)
    assert landed.count(SENSITIVE) == 1, landed
    # The others were cancelled whole (back to the page), or came after the winner had
    # ended the session that held the challenge (to the login page).
    assert all(location.startswith((REAUTHENTICATE, LOGIN)) for location in landed if location != SENSITIVE)


def test_a_reauthentication_answer_of_a_counter_0_passkey_is_refused_the_second_time(ddb):
    client = signed_up_client()
    credential, _ = add_passkey(client)
    age(client, 301)
    answer = authenticator.get(credential, options(client, "reauthenticate"), ORIGIN, counter=0)
    replay = same_session(client)

    first = client.post(f"{REAUTHENTICATE}passkey/", {"credential": answer, "next": SENSITIVE})
    second = replay.post(f"{REAUTHENTICATE}passkey/", {"credential": answer, "next": SENSITIVE})

    assert first["Location"] == SENSITIVE
    # The winner gave the session a new key: the replay's session is gone.
    assert second["Location"].startswith(LOGIN)
    assert client.get(SENSITIVE).status_code == 200


def partition_of(account):
    """The sort keys of the items in ``account``'s partition, but its profile (or tombstone)."""
    return sorted(raw["SK"]["S"] for raw in dynamo.query_partition(account.PK) if raw["SK"]["S"] != PROFILE_SORT_KEY)


@pytest.fixture
def ada(ddb):
    account, _ = store.signup("ada@example.com", "ada", "!")
    return account


def test_a_totp_enrolment_after_the_deletion_writes_nothing(ada):
    secret = totp.new_secret()
    read = store.get_account(ada.id)
    store.delete_account(store.get_account(ada.id))

    with pytest.raises(StaleItem):
        mfa_store.enable_totp(read, secret, totp.current_step(), recovery_codes.generate())

    assert partition_of(ada) == []


def test_the_confirming_code_of_an_enrolment_is_spent_with_it(ada):
    secret = totp.new_secret()
    step = totp.current_step()
    mfa_store.enable_totp(store.get_account(ada.id), secret, step, recovery_codes.generate())

    # The enrolment wrote only the account: the step it spent is recorded on it.
    assert partition_of(ada) == []
    assert store.get_account(ada.id).totp_step == step


@pytest.mark.parametrize("round_", range(20))
def test_a_totp_enrolment_racing_the_deletion_leaves_nothing_in_the_partition(ddb, round_):
    account, _ = store.signup(f"ada{round_}@example.com", f"ada{round_}", "!")
    enrolling, deleting = store.get_account(account.id), store.get_account(account.id)
    barrier = threading.Barrier(2)

    def enrol():
        barrier.wait()
        try:
            mfa_store.enable_totp(enrolling, totp.new_secret(), totp.current_step(), recovery_codes.generate())
        except StaleItem:
            pass

    def delete():
        barrier.wait()
        time.sleep(0.001 * (round_ % 5))
        store.delete_account(deleting)

    threads = [threading.Thread(target=enrol), threading.Thread(target=delete)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()

    assert store.get_account(account.id) is None
    assert partition_of(account) == []
