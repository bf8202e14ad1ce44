"""Races on a real AWS DynamoDB Local: the lock items, not luck, decide who wins."""

from concurrent.futures import ThreadPoolExecutor
from threading import Barrier

import pytest

from accounts import store
from accounts.exceptions import StaleItem, UniqueViolation
from tests.test_engine import locks, signup, table_items

pytestmark = pytest.mark.dynamodb_local


def race(count, attempt):
    """Run ``attempt(i)`` in ``count`` threads released at once; return results/exceptions."""
    barrier = Barrier(count)

    def start(index):
        barrier.wait()
        try:
            return attempt(index)
        except Exception as error:  # the outcome under test
            return error

    with ThreadPoolExecutor(max_workers=count) as pool:
        return list(pool.map(start, range(count)))


def test_32_concurrent_signups_with_one_email_exactly_one_wins(ddb):
    outcomes = race(32, lambda i: signup("race@example.org", f"racer{i}"))
    winners = [outcome for outcome in outcomes if not isinstance(outcome, Exception)]
    losers = [outcome for outcome in outcomes if isinstance(outcome, Exception)]
    assert len(winners) == 1
    assert all(isinstance(loser, UniqueViolation) and loser.fields == {"email"} for loser in losers)
    assert locks()["UNIQ#EMAIL#race@example.org"] == winners[0].PK
    assert len(table_items()) == 4


def test_16_accounts_changing_to_one_new_email_exactly_one_wins(ddb):
    accounts = [signup(f"user{i}@example.org", f"user{i}") for i in range(16)]
    outcomes = race(16, lambda i: store.change_email(accounts[i], "wanted@example.org"))
    winners = [outcome for outcome in outcomes if not isinstance(outcome, Exception)]
    assert len(winners) == 1
    assert all(isinstance(o, UniqueViolation) and o.fields == {"email"} for o in outcomes if o not in winners)
    current = locks()
    assert current["UNIQ#EMAIL#wanted@example.org"] == winners[0].PK
    email_locks = {key for key in current if key.startswith("UNIQ#EMAIL#")}
    assert len(email_locks) == 16
    for account in accounts:
        fresh = store.get_account(account.id)
        assert current[f"UNIQ#EMAIL#{fresh.email.casefold()}"] == fresh.PK


def test_one_account_changing_its_email_8_ways_at_once_keeps_exactly_one_matching_lock(ddb):
    account = signup("ada@example.org", "ada")
    copies = [store.get_account(account.id) for _ in range(8)]
    outcomes = race(8, lambda i: store.change_email(copies[i], f"choice{i}@example.org"))
    winners = [outcome for outcome in outcomes if not isinstance(outcome, Exception)]
    assert len(winners) == 1
    assert all(isinstance(o, StaleItem) for o in outcomes if o not in winners)
    final = store.get_account(account.id)
    email_locks = {key: owner for key, owner in locks().items() if key.startswith("UNIQ#EMAIL#")}
    assert email_locks == {f"UNIQ#EMAIL#{final.email}": account.PK}
