"""The last-staff rule is a guard in the transaction, not a count read before it: two staff
taking each other's access away at the same instant leave one staff account, never none
(issue 30, point 2). Races on DynamoDB Local, through the staff pages."""

import threading
from concurrent.futures import ThreadPoolExecutor

import pytest
from django.contrib.auth.hashers import make_password
from django.urls import reverse

from accounts import dynamo, store, transactions
from accounts.exceptions import LastMember, StaleItem
from accounts.tables import STAFF_REGISTRY
from tests.staff import client_as, make_account, messages_of
from tests.web import PASSWORD

pytestmark = pytest.mark.dynamodb_local

ROUNDS = 30


def registered():
    """The account PKs the staff registry lists."""
    items, _ = dynamo.query_page(STAFF_REGISTRY.partition, limit=100)
    return {item["SK"]["S"] for item in items}


def empty_registry():
    """Take every entry out of the staff registry (the accounts stay as they are), so that
    a round starts with exactly the two staff accounts it makes."""
    dynamo.batch_write(deletes=[STAFF_REGISTRY.key(pk) for pk in registered()])


def both_at_once(first, second):
    """Run ``first()`` and ``second()`` in two threads released together; their results."""
    barrier = threading.Barrier(2)

    def start(send):
        barrier.wait()
        return send()

    with ThreadPoolExecutor(max_workers=2) as pool:
        return list(pool.map(start, (first, second)))


def active_staff(*accounts):
    """Of ``accounts``, those that are active staff now (consistent reads)."""
    return [
        account
        for account in accounts
        if (now := store.get_account(account.id)) is not None and now.is_staff and now.is_active
    ]


def staff_pair(round_number):
    empty_registry()
    ada = make_account(f"ada{round_number}@example.com", f"ada{round_number}", staff=True)
    bob = make_account(f"bob{round_number}@example.com", f"bob{round_number}", staff=True)
    return ada, bob


def post_flag(client, account, flag):
    return lambda: client.post(reverse("staff:flag", args=[account.id]), {"flag": flag, "value": "0"})


def post_delete(client, account):
    return lambda: client.post(reverse("staff:delete", args=[account.id]))


@pytest.mark.parametrize("flag", ["is_staff", "is_active"])
def test_two_staff_revoking_each_other_at_once_leave_one_staff_account_every_round(ddb, flag):
    survivors = []
    for round_number in range(ROUNDS):
        ada, bob = staff_pair(round_number)
        both_at_once(post_flag(client_as(ada), bob, flag), post_flag(client_as(bob), ada, flag))
        left = active_staff(ada, bob)
        survivors.append(len(left))
        assert registered() == {account.PK for account in left}
    assert survivors == [1] * ROUNDS, f"{survivors.count(0)} of {ROUNDS} rounds ended with no staff account"


def test_two_staff_deleting_each_other_at_once_leave_one_staff_account_every_round(ddb):
    survivors = []
    for round_number in range(ROUNDS):
        ada, bob = staff_pair(round_number)
        both_at_once(post_delete(client_as(ada), bob), post_delete(client_as(bob), ada))
        left = active_staff(ada, bob)
        survivors.append(len(left))
        assert registered() == {account.PK for account in left}
    assert survivors == [1] * ROUNDS, f"{survivors.count(0)} of {ROUNDS} rounds ended with no staff account"


def test_the_refused_revocation_says_the_account_is_the_last_staff_and_writes_nothing(ddb):
    ada, bob = staff_pair(0)
    client_as(ada).post(reverse("staff:flag", args=[bob.id]), {"flag": "is_staff", "value": "0"})

    revoke = {"flag": "is_staff", "value": "0"}
    response = client_as(ada).post(reverse("staff:flag", args=[ada.id]), revoke, follow=True)

    assert messages_of(response) == ["ada0 is the last active staff account: make another staff account first."]
    assert store.get_account(ada.id).is_staff is True
    assert registered() == {ada.PK}


def test_a_revocation_whose_checked_member_left_meanwhile_checks_another_one(ddb, monkeypatch):
    """The member the registry named left between the Query and the transaction: the
    transaction is cancelled by its check, the registry is read again, and the third staff
    account it lists is checked instead."""
    ada, bob = staff_pair(0)
    carol = make_account("carol@example.com", "carol", staff=True)
    named = iter([bob.PK])
    query = transactions.running.another_member

    def bob_first(registry, model, pk):
        chosen = next(named, None)
        if chosen is None:
            return query(registry, model, pk)
        store.update_account(store.get_account(bob.id), is_staff=False)
        return chosen

    monkeypatch.setattr(transactions.running, "another_member", bob_first)

    store.update_account(ada, is_staff=False)

    assert registered() == {carol.PK}


def test_the_owner_deleting_their_own_account_as_the_last_staff_gets_a_form_error(ddb):
    ada = make_account("ada@example.com", "ada", staff=True, password=make_password(PASSWORD))
    client = client_as(ada)

    response = client.post(reverse("accounts:delete"), {"password": PASSWORD})

    assert response.status_code == 200
    assert response.context["form"].has_error("__all__", "last_staff")
    assert store.get_account(ada.id) is not None


def test_a_deletion_of_the_last_staff_account_through_the_store_raises_last_member(ddb):
    ada = make_account("ada@example.com", "ada", staff=True)

    with pytest.raises(LastMember):
        store.delete_account(ada)

    assert store.get_account(ada.id) is not None


def test_a_deletion_of_an_account_made_staff_since_it_was_read_is_stale(ddb):
    """Read as no staff member, the account was made staff before the deletion: deleting it
    unchecked could take the last staff account's company away, so the deletion's guard
    (``is_staff`` as read) cancels it and nothing is written."""
    ada, _ = staff_pair(0)
    bob = make_account("bob@example.com", "bob")
    read_before = store.get_account(bob.id)
    store.update_account(store.get_account(bob.id), is_staff=True)

    with pytest.raises(StaleItem):
        store.delete_account(read_before)

    assert store.get_account(bob.id).is_staff is True
    assert bob.PK in registered()


def test_a_flag_change_from_a_stale_read_leaves_the_registry_exact(ddb):
    """A grant and a deactivation of one account, the second from a read before the first:
    the second is stale (the account as read), so the registry never lists an inactive
    account."""
    staff_pair(0)
    bob = make_account("bob@example.com", "bob")
    read_before = store.get_account(bob.id)
    store.update_account(store.get_account(bob.id), is_staff=True)

    with pytest.raises(StaleItem):
        store.update_account(read_before, is_active=False)

    now = store.get_account(bob.id)
    assert (bob.PK in registered()) == bool(now.is_staff and now.is_active)
