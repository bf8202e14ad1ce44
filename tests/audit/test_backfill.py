"""Backfill on DynamoDB Local: a table of accounts that predates the locks gets them all,
except values two accounts share, which are listed and left alone."""

import pytest

from accounts import audit, store
from tests.seeding import lock_keys, new_account, read_lock, seed_accounts, write_accounts, write_locks
from tests.staff import run_command

pytestmark = pytest.mark.dynamodb_local


@pytest.fixture
def legacy_table(ddb):
    """25 accounts without locks, two of them sharing one email in different case."""
    accounts = seed_accounts(23, with_locks=False)
    first = new_account("Ada@Example.com", "ada")
    second = new_account("ada@example.COM", "ada_two")
    write_accounts([first, second], with_locks=False)
    return accounts, first, second


def run_backfill(*args):
    return run_command("accounts_backfill", *args)


def test_backfill_creates_every_lock_but_the_duplicates(legacy_table):
    accounts, first, second = legacy_table

    report, repairs = audit.backfill()

    # Email, username and username skeleton of 23 accounts; the two "ada"s share only their email.
    claimed = [result for result in repairs if result.action == audit.CLAIMED]
    assert len(claimed) == 23 * 3 + 4
    # Then every account records the keys of the locks it now holds.
    recorded = [result for result in repairs if result.action == audit.RECORDED]
    assert {result.finding.key for result in recorded} == {account.PK for account in [*accounts, first, second]}
    assert all(result.repaired for result in repairs)
    for account in accounts:
        for key in lock_keys(account):
            assert read_lock(key) == (True, account.PK)
    assert read_lock("UNIQ#HANDLE#ada") == (True, first.PK)
    assert read_lock("UNIQ#HANDLE#ada_two") == (True, second.PK)
    assert read_lock("UNIQ#EMAIL#ada@example.com") == (False, None)
    [duplicate] = report.of_kind(audit.DUPLICATE)
    assert duplicate.holders == tuple(sorted([first.PK, second.PK]))


def test_backfill_leaves_both_duplicate_accounts_unchanged(legacy_table):
    _, first, second = legacy_table

    audit.backfill()

    assert store.get_account(first.id).email == "Ada@Example.com"
    assert store.get_account(second.id).email == "ada@example.COM"
    assert [finding.kind for finding in audit.run_audit().findings] == [audit.DUPLICATE]


def test_backfilled_accounts_are_found_by_their_lock(legacy_table):
    accounts, _, _ = legacy_table

    audit.backfill(segments=3)

    assert store.get_by_email("USER7@example.com").PK == accounts[7].PK
    assert store.get_by_username("user12").PK == accounts[12].PK


def test_backfill_command_lists_duplicates_and_exits_one(legacy_table):
    status, out, err = run_backfill()

    assert status == 1
    assert "Created 73 lock(s)." in out
    assert "cannot lock UNIQ#EMAIL#ada@example.com" in out
    assert "Scanned 26 items" in err  # with the item recording the table's key version
    assert "Repairs: 73/73" in err


def test_backfill_command_twice_creates_nothing_more(legacy_table):
    run_backfill()

    status, out, _ = run_backfill()

    assert status == 1
    assert "Created 0 lock(s)." in out


def test_dry_run_writes_nothing(legacy_table):
    accounts, _, _ = legacy_table

    status, out, _ = run_backfill("--dry-run")

    assert status == 0
    assert "73 lock(s) to create (dry run: nothing written)." in out
    assert f"would create UNIQ#HANDLE#user0  for {accounts[0].PK}" in out
    assert "cannot lock UNIQ#EMAIL#ada@example.com" in out
    assert audit.run_audit().locks == 0


def test_backfill_on_a_table_with_all_its_locks_exits_zero(ddb):
    seed_accounts(4)

    status, out, _ = run_backfill()

    assert status == 0
    assert "Created 0 lock(s)." in out


def test_backfill_leaves_orphans_to_the_audit(ddb):
    seed_accounts(2)
    write_accounts([new_account("late@example.com", "late")], with_locks=False)
    write_locks({"UNIQ#HANDLE#ghost": "ACCT#nobody"})

    status, out, _ = run_backfill()

    assert status == 0
    assert "Created 3 lock(s)." in out
    assert "run accounts_audit --repair" in out
    assert read_lock("UNIQ#HANDLE#ghost") == (True, "ACCT#nobody")
