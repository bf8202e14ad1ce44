"""Signals: sent with their documented arguments, only once the transaction committed."""

import uuid

import pytest
from django.test import Client

from accounts import signals, store
from accounts.exceptions import StaleItem, UniqueViolation
from accounts.tables import Account
from tests.web import signup

pytestmark = pytest.mark.dynamodb_local

HASH = "!signals-tests"


def stored_state(name, arguments):
    """What a receiver reads from DynamoDB while the signal is being sent."""
    account = arguments["account"]
    if name == "account_created":
        return store.get_account(account.id) is not None
    if name == "email_changed":
        return store.get_by_email(arguments["new_email"]).PK == account.PK
    if name == "username_changed":
        return store.get_by_username(arguments["new_username"]).PK == account.PK
    return store.get_account(account.id) is None


@pytest.fixture
def received(ddb):
    """What receivers of all four signals heard: ``(signal name, sender, arguments other
    than ``signal``, whether DynamoDB already showed the change while it was sent)``."""
    heard = []
    receivers = {}
    for name in ("account_created", "email_changed", "username_changed", "account_deleted"):

        def receiver(sender, signal, name=name, **arguments):
            heard.append((name, sender, arguments, stored_state(name, arguments)))

        receivers[name] = receiver
        getattr(signals, name).connect(receiver)
    yield heard
    for name, receiver in receivers.items():
        getattr(signals, name).disconnect(receiver)


def test_account_created_is_sent_with_the_account_once_it_is_stored(received):
    account, _ = store.signup("ada@example.com", "ada", HASH)

    assert received == [("account_created", Account, {"account": account}, True)]


def test_email_changed_is_sent_with_old_and_new_email_once_the_lock_moved(received):
    account, _ = store.signup("ada@example.com", "ada", HASH)
    received.clear()

    store.change_email(account, "lovelace@example.com")

    assert received == [
        (
            "email_changed",
            Account,
            {"account": account, "old_email": "ada@example.com", "new_email": "lovelace@example.com"},
            True,
        )
    ]


def test_username_changed_is_sent_with_old_and_new_username_once_the_lock_moved(received):
    account, _ = store.signup("ada@example.com", "ada", HASH)
    received.clear()

    store.change_username(account, "lovelace")

    assert received == [
        ("username_changed", Account, {"account": account, "old_username": "ada", "new_username": "lovelace"}, True)
    ]


def test_account_deleted_is_sent_with_the_account_as_it_was_once_it_is_gone(received):
    account, _ = store.signup("ada@example.com", "ada", HASH)
    received.clear()

    store.delete_account(account)

    assert received == [("account_deleted", Account, {"account": account}, True)]
    assert (account.email, account.username) == ("ada@example.com", "ada")


def test_no_account_created_on_a_collision(received):
    store.signup("ada@example.com", "ada", HASH)
    received.clear()

    with pytest.raises(UniqueViolation):
        store.signup("ada@example.com", "lovelace", HASH)

    assert received == []


@pytest.mark.parametrize(
    "change, taken",
    [(store.change_email, "GRACE@example.com"), (store.change_username, "Grace")],
    ids=["email", "username"],
)
def test_no_change_signal_on_a_collision(received, change, taken):
    store.signup("grace@example.com", "grace", HASH)
    account, _ = store.signup("ada@example.com", "ada", HASH)
    received.clear()

    with pytest.raises(UniqueViolation):
        change(account, taken)

    assert received == []


def test_no_account_deleted_when_the_account_changed_since_it_was_read(received):
    account, _ = store.signup("ada@example.com", "ada", HASH)
    store.change_username(store.get_account(account.id), "lovelace")
    received.clear()

    with pytest.raises(StaleItem):
        store.delete_account(account)

    assert received == []


def test_a_replayed_signup_is_not_announced_twice(received):
    # Unique per run: DynamoDB remembers a token for 10 minutes, across tables and reruns.
    token = uuid.uuid4().hex
    first, created = store.signup("ada@example.com", "ada", HASH, token=token)
    again, created_again = store.signup("ada@example.com", "ada", HASH, token=token)

    assert (created, created_again) == (True, False)
    assert [(name, arguments["account"].PK) for name, _, arguments, _ in received] == [("account_created", first.PK)]


def test_signup_page_sends_account_created_once_and_a_refused_one_sends_nothing(received):
    signup(Client(), "ada@example.com", "ada")
    refused = signup(Client(), "ada@example.com", "lovelace")

    assert refused.status_code == 200
    assert [(name, arguments["account"].username) for name, _, arguments, _ in received] == [("account_created", "ada")]
