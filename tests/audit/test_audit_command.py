"""``manage.py accounts_audit`` on DynamoDB Local: exit status, JSON document, repair."""

import json

import pytest
from django.core.management import CommandError

from accounts import audit, store
from tests.seeding import delete_lock, new_account, read_lock, seed_accounts, write_accounts, write_locks
from tests.staff import run_command

pytestmark = pytest.mark.dynamodb_local


def run_audit_command(*args):
    return run_command("accounts_audit", *args)


@pytest.fixture
def damaged(ddb):
    """Three accounts and three kinds of damage: a deleted lock, an orphan, a wrong owner."""
    ada, bob, eve = (store.signup(f"{name}@example.com", name, "!hash")[0] for name in ("ada", "bob", "eve"))
    delete_lock("UNIQ#EMAIL#ada@example.com")
    write_locks({"UNIQ#HANDLE#ghost": "ACCT#nobody", "UNIQ#HANDLE#eve": bob.PK})
    return ada, bob, eve


def test_consistent_table_exits_zero(ddb):
    seed_accounts(3)

    status, out, err = run_audit_command()

    assert status == 0
    assert "Consistent" in out
    assert "Scanned 13 items" in err  # with the item recording the table's key version


def test_planted_damage_is_listed_and_exits_one(damaged):
    status, out, _ = run_audit_command()

    assert status == 1
    assert "UNIQ#EMAIL#ada@example.com" in out
    assert "UNIQ#HANDLE#ghost" in out
    assert "UNIQ#HANDLE#eve" in out
    assert "3 problem(s) remain" in out
    assert read_lock("UNIQ#HANDLE#ghost") == (True, "ACCT#nobody")


def test_json_lists_every_orphaned_and_missing_key(damaged):
    status, out, err = run_audit_command("--json")

    document = json.loads(out)
    assert status == 1
    assert document["consistent"] is False
    assert document["orphaned"] == ["UNIQ#HANDLE#ghost"]
    assert document["missing"] == ["UNIQ#EMAIL#ada@example.com"]
    assert document["wrong_owner"] == ["UNIQ#HANDLE#eve"]
    assert document["repaired"] == []
    assert len(document["remaining"]) == 3
    assert document["scanned"]["accounts"] == 3
    assert "Scanned" in err


def test_repair_fixes_everything_and_a_second_run_is_clean(damaged):
    ada, bob, eve = damaged

    status, out, _ = run_audit_command("--json", "--repair", "--segments", "4")

    document = json.loads(out)
    assert status == 0
    assert document["consistent"] is True
    assert {(entry["key"], entry["action"]) for entry in document["repaired"]} == {
        ("UNIQ#EMAIL#ada@example.com", audit.CLAIMED),
        ("UNIQ#HANDLE#ghost", audit.RELEASED),
        ("UNIQ#HANDLE#eve", audit.TRANSFERRED),
    }
    assert read_lock("UNIQ#EMAIL#ada@example.com") == (True, ada.PK)
    assert read_lock("UNIQ#HANDLE#eve") == (True, eve.PK)
    assert run_audit_command()[0] == 0


def test_duplicates_remain_after_repair_and_exit_one(ddb):
    store.signup("ada@example.com", "ada", "!hash")
    twin = new_account("twin@example.com", "ADA", lock_keys={"EMAIL": "UNIQ#EMAIL#twin@example.com"})
    write_accounts([twin], with_locks=False)
    write_locks({"UNIQ#EMAIL#twin@example.com": twin.PK})

    status, out, _ = run_audit_command("--json", "--repair")

    document = json.loads(out)
    assert status == 1
    assert document["duplicate"] == ["UNIQ#HANDLE#ada", "UNIQ#HANDLE_SKEL#ada"]
    assert document["repaired"] == []
    assert [finding["kind"] for finding in document["remaining"]] == ["duplicate", "duplicate"]


def test_zero_segments_is_a_command_error(ddb):
    with pytest.raises(CommandError):
        run_audit_command("--segments", "0")


def test_json_names_the_account_whose_value_cannot_be_locked(ddb):
    blank = write_accounts([new_account("blank@example.com", " ")], with_locks=False)[0]
    write_locks({"UNIQ#EMAIL#blank@example.com": blank.PK})

    status, out, _ = run_audit_command("--json", "--repair")

    document = json.loads(out)
    assert status == 1
    assert document["invalid"] == [blank.PK]
    assert document["remaining"][0]["description"].endswith("cannot be locked: This field is required.")


def test_look_alike_locks_left_behind_by_a_configuration_that_dropped_them_are_reported(ddb, settings):
    seed_accounts(3)
    settings.ACCOUNTS_UNIQUE_FIELDS = {"username": {"skeleton_namespace": None}}

    status, out, _ = run_audit_command()

    assert status == 1
    assert "3 lock(s) in namespace HANDLE_SKEL" in out
    assert "Consistent" not in out


def test_json_counts_the_undeclared_locks_by_namespace(ddb, settings):
    seed_accounts(2)
    settings.ACCOUNTS_UNIQUE_FIELDS = {"username": {"skeleton_namespace": None}, "email": {"namespace": "MAIL"}}

    status, out, _ = run_audit_command("--json")

    data = json.loads(out)
    assert status == 1
    assert data["consistent"] is False
    undeclared = {
        finding["namespace"]: finding["count"] for finding in data["findings"] if finding["kind"] == "undeclared"
    }
    assert undeclared == {"EMAIL": 2, "HANDLE_SKEL": 2}


def test_the_audit_runs_without_the_sites_address_as_it_sends_no_mail(ddb, settings):
    seed_accounts(1)
    settings.ACCOUNTS_SITE_URL = None

    # With the system checks a shell runs first (accounts.E014 says the address is missing).
    status, out, _ = run_command("accounts_audit", skip_checks=False)

    assert status == 0
    assert "Consistent" in out
