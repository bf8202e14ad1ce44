"""Races on a real AWS DynamoDB Local: the lock items, not luck, decide who wins."""

from concurrent.futures import ThreadPoolExecutor
from threading import Barrier

import pytest

from accounts import lookups, store, transactions
from accounts.examples import Player
from accounts.exceptions import StaleItem, UniqueViolation
from tests.engine.test_engine import locks, signup, table_items
from tests.invariants import violations

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


PLAYERS_PER_ROUND = 8
ROUNDS = 5


def test_team_and_number_changed_at_once_never_leave_a_lock_behind(ddb):
    # A number change must be guarded by the team as read (every attribute of the key):
    # else it moves the lock inside a team the player has just left (I2 and I3 break).
    for round_number in range(ROUNDS):
        players = [
            transactions.create(
                Player(PK=f"PLAYER#{round_number}-{i}", team="team-001", name="P", number=round_number * 100 + i)
            )
            for i in range(PLAYERS_PER_ROUND)
        ]
        copies = [(lookups.get_item(Player, p.PK), lookups.get_item(Player, p.PK)) for p in players]

        def attempt(index, copies=copies, round_number=round_number):
            first, second = copies[index // 2]
            if index % 2:
                return transactions.change(first, {"team": f"team-{round_number}-moved"})
            return transactions.change(second, {"number": round_number * 100 + 50 + index})

        outcomes = race(2 * PLAYERS_PER_ROUND, attempt)
        assert all(not isinstance(o, Exception) or isinstance(o, StaleItem) for o in outcomes), outcomes
        assert violations([Player]) == []


def test_a_number_change_from_a_copy_read_before_a_team_change_is_stale(ddb):
    alice = transactions.create(Player(PK="PLAYER#alice", team="team-001", name="Alice", number=18))
    earlier = lookups.get_item(Player, alice.PK)
    transactions.change(alice, {"team": "team-002"})
    with pytest.raises(StaleItem):
        transactions.change(earlier, {"number": 7})
    assert violations([Player]) == []
