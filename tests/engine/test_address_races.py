"""Races of several addresses per account on DynamoDB Local: the lock items and the guards on
the account as read, not luck, decide who holds an address."""

import pytest
from django.contrib.auth.hashers import make_password

from accounts import addresses, store
from accounts.exceptions import StaleItem, UniqueViolation
from tests.engine.test_engine import locks
from tests.engine.test_engine_concurrency import race
from tests.invariants import violations

pytestmark = pytest.mark.dynamodb_local

ROUNDS = 4


@pytest.fixture
def several(ddb, settings):
    settings.ACCOUNTS_MAX_EMAIL_ADDRESSES = 3


def account(email, username):
    return store.signup(email, username, make_password("x"), email_verified=True)[0]


def with_address(holder, email):
    """``holder`` as read after adding and verifying ``email``."""
    addresses.add_unverified(holder, email)
    addresses.verify(store.get_account(holder.id), email)
    return store.get_account(holder.id)


def test_16_accounts_adding_one_address_at_once_leave_exactly_one_holder(several):
    accounts = [account(f"user{i}@example.org", f"user{i}") for i in range(16)]

    def add_and_verify(i):
        addresses.add_unverified(accounts[i], "Wanted@Example.org")
        return addresses.verify(store.get_account(accounts[i].id), "Wanted@Example.org")

    outcomes = race(16, add_and_verify)

    winners = [outcome for outcome in outcomes if not isinstance(outcome, Exception)]
    assert len(winners) == 1
    assert all(isinstance(outcome, UniqueViolation) for outcome in outcomes if outcome not in winners)
    assert locks()["UNIQ#EMAIL#wanted@example.org"] == winners[0].PK
    holders = [each.id for each in accounts if addresses.held_address(store.get_account(each.id), "wanted@example.org")]
    assert holders == [winners[0].id]
    assert violations() == []


@pytest.mark.parametrize("step", ["add", "verify"])
def test_an_addition_or_its_verification_racing_the_owners_deletion_never_leaves_a_lock_behind(several, step):
    for round_number in range(ROUNDS):
        ada = account(f"ada{round_number}@example.org", f"ada{round_number}")
        email = f"work{round_number}@example.org"
        if step == "verify":
            addresses.add_unverified(ada, email)
        read = store.get_account(ada.id)
        copy = store.get_account(ada.id)
        send = addresses.verify if step == "verify" else addresses.add_unverified

        outcomes = race(
            2,
            lambda i, read=read, copy=copy, email=email, send=send: (
                send(read, email) if i == 0 else store.delete_account(copy)
            ),
        )

        added, deleted = outcomes
        if step == "add":
            # The addition takes no lock: the deletion, which does not read the waiting
            # addresses, wins whenever it lands; an addition landing after it is stale.
            assert deleted is None and (added is read or isinstance(added, StaleItem)), outcomes
            assert store.get_account(ada.id) is None
        else:
            # The verification takes a lock: each guards what the other changes (the
            # deletion the verified addresses as read), so exactly one commits.
            assert sum(not isinstance(outcome, Exception) for outcome in outcomes) == 1, outcomes
            assert all(isinstance(outcome, StaleItem) for outcome in outcomes if isinstance(outcome, Exception))
        assert violations() == [], round_number


@pytest.mark.parametrize("prevent_enumeration", [False, True], ids=["checked", "unchecked"])
def test_another_account_gets_a_removed_address_only_after_the_removal_committed(
    several, settings, prevent_enumeration
):
    settings.ACCOUNTS_PREVENT_ENUMERATION = prevent_enumeration
    for round_number in range(ROUNDS):
        email = f"moving{round_number}@example.org"
        ada = with_address(account(f"ada{round_number}@example.org", f"ada{round_number}"), email)
        bob = account(f"bob{round_number}@example.org", f"bob{round_number}")

        def attempt(i, ada=ada, bob=bob, email=email):
            if i == 0:
                return addresses.remove(ada, email)
            addresses.add_unverified(bob, email)
            return addresses.verify(store.get_account(bob.id), email)

        removed, taken = race(2, attempt)

        assert not isinstance(removed, Exception), removed
        owner = locks().get(f"UNIQ#EMAIL#{email}")
        if isinstance(taken, Exception):
            # Bob asked while Ada still held it: refused, and the address is free now.
            assert isinstance(taken, UniqueViolation) and owner is None
        else:
            assert owner == bob.PK and addresses.find(store.get_account(ada.id), email) is None
        assert violations() == [], round_number


def test_make_primary_racing_the_removal_of_that_address_one_wins_and_nothing_is_lost(several):
    for round_number in range(ROUNDS):
        email = f"work{round_number}@example.org"
        ada = with_address(account(f"ada{round_number}@example.org", f"ada{round_number}"), email)
        copy = store.get_account(ada.id)

        outcomes = race(
            2,
            lambda i, ada=ada, copy=copy, email=email: (
                addresses.make_primary(ada, email) if i == 0 else addresses.remove(copy, email)
            ),
        )

        assert sum(not isinstance(outcome, Exception) for outcome in outcomes) == 1, outcomes
        assert all(isinstance(outcome, StaleItem) for outcome in outcomes if isinstance(outcome, Exception))
        final = store.get_account(ada.id)
        if isinstance(outcomes[0], Exception):
            assert final.email == f"ada{round_number}@example.org" and not final.email_addresses
            assert f"UNIQ#EMAIL#{email}" not in locks()
        else:
            assert final.email == email and final.email_addresses == {f"ada{round_number}@example.org"}
            assert locks()[f"UNIQ#EMAIL#{email}"] == ada.PK
        assert violations() == [], round_number
