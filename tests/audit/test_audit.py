"""The lock audit on DynamoDB Local: planted damage is found, repaired by guarded
transactions, and a repair loses to any concurrent legitimate change."""

import pytest

from accounts import audit, store
from accounts.exceptions import InvalidTransaction
from accounts.transactions import plan_claim_lock
from accounts.uniqueness import UniqueConstraint
from tests.seeding import (
    delete_lock,
    new_account,
    overwrite,
    read_lock,
    seed_accounts,
    write_accounts,
    write_locks,
    write_ownerless_lock,
)

pytestmark = pytest.mark.dynamodb_local

HASH = "!not-a-real-hash"


def signup(email, username):
    account, _ = store.signup(email, username, HASH)
    return account


def only_finding(report):
    assert len(report.findings) == 1, [finding.describe() for finding in report.findings]
    return report.findings[0]


def test_table_written_by_the_engine_is_consistent(ddb):
    for n in range(5):
        signup(f"person{n}@example.com", f"person{n}")

    report = audit.run_audit()

    assert report.consistent
    assert report.accounts == 5
    assert report.locks == 15  # email, username and username skeleton
    assert report.scanned == 21  # and the item recording the table's key version


def test_lock_deleted_behind_the_engine_is_missing_and_claimed_back(ddb):
    ada = signup("ada@example.com", "ada")
    delete_lock("UNIQ#EMAIL#ada@example.com")

    finding = only_finding(audit.run_audit())
    assert finding.kind == audit.MISSING
    assert finding.key == "UNIQ#EMAIL#ada@example.com"
    assert finding.holders == (ada.PK,)

    [result] = audit.repair_all(audit.run_audit())

    assert result.outcome == audit.REPAIRED
    assert result.action == audit.CLAIMED
    assert read_lock("UNIQ#EMAIL#ada@example.com") == (True, ada.PK)
    assert audit.run_audit().consistent


def test_lock_whose_owner_does_not_exist_is_orphaned_and_released(ddb):
    signup("ada@example.com", "ada")
    write_locks({"UNIQ#HANDLE#ghost": "ACCT#nobody"})

    finding = only_finding(audit.run_audit())
    assert finding.kind == audit.ORPHANED
    assert finding.owner_status == audit.OWNER_GONE
    assert finding.owner == "ACCT#nobody"

    [result] = audit.repair_all(audit.run_audit())

    assert result.action == audit.RELEASED
    assert read_lock("UNIQ#HANDLE#ghost") == (False, None)
    assert audit.run_audit().consistent


def test_lock_naming_no_owner_is_orphaned_and_released(ddb):
    write_ownerless_lock("UNIQ#EMAIL#nobody@example.com")

    finding = only_finding(audit.run_audit())
    assert (finding.kind, finding.owner_status, finding.owner) == (audit.ORPHANED, audit.NO_OWNER, None)

    [result] = audit.repair_all(audit.run_audit())

    assert result.outcome == audit.REPAIRED
    assert audit.run_audit().consistent


def test_value_changed_behind_the_engine_leaves_an_orphan_and_a_missing_lock(ddb):
    ada = signup("ada@example.com", "ada")
    overwrite(ada, email="ada@new.example")

    report = audit.run_audit()

    [orphan] = report.of_kind(audit.ORPHANED)
    [missing] = report.of_kind(audit.MISSING)
    assert (orphan.key, orphan.owner_status) == ("UNIQ#EMAIL#ada@example.com", audit.OWNER_CHANGED)
    assert missing.key == "UNIQ#EMAIL#ada@new.example"

    results = audit.repair_all(report)

    assert {result.action for result in results} == {audit.RELEASED, audit.CLAIMED}
    assert read_lock("UNIQ#EMAIL#ada@example.com") == (False, None)
    assert read_lock("UNIQ#EMAIL#ada@new.example") == (True, ada.PK)
    assert audit.run_audit().consistent
    assert store.get_by_email("ADA@new.example").PK == ada.PK


def test_lock_pointing_at_the_wrong_account_is_transferred_to_the_holder(ddb):
    ada = signup("ada@example.com", "ada")
    bob = signup("bob@example.com", "bob")
    write_locks({"UNIQ#EMAIL#ada@example.com": bob.PK})

    finding = only_finding(audit.run_audit())
    assert finding.kind == audit.WRONG_OWNER
    assert (finding.owner, finding.owner_status, finding.holder) == (bob.PK, audit.OWNER_CHANGED, ada.PK)
    assert store.get_by_email("ada@example.com") is None

    [result] = audit.repair_all(audit.run_audit())

    assert result.action == audit.TRANSFERRED
    assert read_lock("UNIQ#EMAIL#ada@example.com") == (True, ada.PK)
    assert store.get_by_email("ada@example.com").PK == ada.PK
    assert audit.run_audit().consistent


def test_two_accounts_with_one_normalized_value_are_a_duplicate_left_alone(ddb):
    ada = signup("ada@example.com", "ada")
    # The twin holds its own username's locks (and records them), and ada's address.
    handles = {"HANDLE": "UNIQ#HANDLE#twin", "HANDLE_SKEL": "UNIQ#HANDLE_SKEL#twin"}
    twin = new_account("ADA@Example.com", "twin", lock_keys=handles)
    write_accounts([twin], with_locks=False)
    write_locks({"UNIQ#HANDLE#twin": twin.PK, "UNIQ#HANDLE_SKEL#twin": twin.PK})

    report = audit.run_audit()
    finding = only_finding(report)
    assert finding.kind == audit.DUPLICATE
    assert finding.holders == tuple(sorted([ada.PK, twin.PK]))
    assert not finding.repairable

    assert audit.repair_all(report) == []
    assert read_lock("UNIQ#EMAIL#ada@example.com") == (True, ada.PK)
    assert store.get_account(twin.id).email == "ADA@Example.com"


def test_account_without_a_username_is_an_invalid_finding(ddb):
    account = new_account("blank@example.com", "   ", lock_keys={"EMAIL": "UNIQ#EMAIL#blank@example.com"})
    write_accounts([account], with_locks=False)
    write_locks({"UNIQ#EMAIL#blank@example.com": account.PK})

    finding = only_finding(audit.run_audit())

    assert finding.kind == audit.INVALID
    assert finding.holders == (account.PK,)
    assert "required" in finding.describe()


def test_locks_of_a_namespace_no_model_declares_are_one_finding_naming_it(ddb):
    signup("ada@example.com", "ada")
    write_locks({"UNIQ#UNIFORM#team-1#18": "TEAM#1", "UNIQ#UNIFORM#team-1#7": "TEAM#1"})

    finding = only_finding(audit.run_audit())

    assert (finding.kind, finding.namespace, finding.count) == (audit.UNDECLARED, "UNIFORM", 2)
    assert finding.key in {"UNIQ#UNIFORM#team-1#18", "UNIQ#UNIFORM#team-1#7"}
    assert not finding.repairable
    assert "ACCOUNTS_UNIQUE_MODELS" in finding.describe()
    assert audit.repair_all(audit.run_audit()) == []


def test_items_that_are_not_locks_nor_audited_items_are_left_alone(ddb):
    signup("ada@example.com", "ada")
    write_locks({"TEAM#1": "nobody"})  # not a lock: its key is no UNIQ# key

    assert audit.run_audit().consistent


def test_parallel_scan_reads_the_same_table(ddb):
    seed_accounts(60)
    delete_lock("UNIQ#HANDLE#user7")
    write_locks({"UNIQ#EMAIL#gone@example.com": "ACCT#gone"})
    seen = []

    single = audit.run_audit(segments=1)
    parallel = audit.run_audit(segments=4, progress=seen.append)

    assert parallel.scanned == single.scanned == 60 + 179 + 1 + 1  # ...and the key version item
    assert [finding.as_dict() for finding in parallel.findings] == [finding.as_dict() for finding in single.findings]
    assert [finding.kind for finding in parallel.findings] == [audit.ORPHANED, audit.MISSING]
    assert seen[-1] == parallel.scanned
    assert seen == sorted(seen)


def test_zero_segments_is_refused(ddb):
    with pytest.raises(ValueError):
        audit.run_audit(segments=0)


def test_claim_loses_to_a_concurrent_email_change(ddb):
    ada = signup("ada@example.com", "ada")
    delete_lock("UNIQ#EMAIL#ada@example.com")
    report = audit.run_audit()

    store.change_email(store.get_account(ada.id), "ada@elsewhere.example")
    [result] = audit.repair_all(report)

    assert result.outcome == audit.CHANGED
    assert read_lock("UNIQ#EMAIL#ada@example.com") == (False, None)
    assert audit.run_audit().consistent


def test_claim_loses_to_a_concurrent_signup_of_the_value(ddb):
    ada = signup("ada@example.com", "ada")
    delete_lock("UNIQ#EMAIL#ada@example.com")
    report = audit.run_audit()

    # The lock is free, so a signup may take it: the engine cannot know ada holds it.
    rival = signup("ada@example.com", "rival")
    [result] = audit.repair_all(report)

    assert result.outcome == audit.CHANGED
    assert read_lock("UNIQ#EMAIL#ada@example.com") == (True, rival.PK)
    assert only_finding(audit.run_audit()).holders == tuple(sorted([ada.PK, rival.PK]))


def test_transfer_loses_when_the_holder_changed_meanwhile(ddb):
    ada = signup("ada@example.com", "ada")
    bob = signup("bob@example.com", "bob")
    write_locks({"UNIQ#EMAIL#ada@example.com": bob.PK})
    report = audit.run_audit()

    store.change_email(store.get_account(ada.id), "ada@elsewhere.example")
    [result] = audit.repair_all(report)

    assert result.outcome == audit.CHANGED
    assert read_lock("UNIQ#EMAIL#ada@example.com") == (True, bob.PK)


def test_release_loses_when_the_missing_owner_reappears(ddb):
    write_locks({"UNIQ#HANDLE#ghost": "ACCT#ghost"})
    report = audit.run_audit()

    ghost = new_account("ghost@example.com", "ghost")
    ghost.PK = "ACCT#ghost"
    write_accounts([ghost], with_locks=False)
    [result] = audit.repair_all(report)

    assert result.outcome == audit.CHANGED
    assert read_lock("UNIQ#HANDLE#ghost") == (True, "ACCT#ghost")


def test_transfer_loses_when_the_missing_owner_reappears_holding_the_value(ddb):
    ada = signup("ada@example.com", "ada")
    write_locks({"UNIQ#EMAIL#ada@example.com": "ACCT#ghost"})
    report = audit.run_audit()

    ghost = new_account("ada@example.com", "ghost")
    ghost.PK = "ACCT#ghost"
    write_accounts([ghost], with_locks=False)
    [result] = audit.repair_all(report)

    assert result.outcome == audit.CHANGED
    assert read_lock("UNIQ#EMAIL#ada@example.com") == (True, "ACCT#ghost")
    assert store.get_account(ada.id).email == "ada@example.com"


def test_transfer_loses_when_the_lock_was_taken_over(ddb):
    ada = signup("ada@example.com", "ada")
    write_locks({"UNIQ#EMAIL#ada@example.com": "ACCT#ghost"})
    report = audit.run_audit()

    write_locks({"UNIQ#EMAIL#ada@example.com": "ACCT#someone"})
    [result] = audit.repair_all(report)

    assert result.outcome == audit.CHANGED
    assert read_lock("UNIQ#EMAIL#ada@example.com") == (True, "ACCT#someone")
    assert store.get_account(ada.id).email == "ada@example.com"


def test_release_loses_when_the_owner_holds_the_value_again(ddb):
    bob = signup("bob@example.com", "bob")
    write_locks({"UNIQ#EMAIL#old@example.com": bob.PK})
    report = audit.run_audit()

    overwrite(store.get_account(bob.id), email="old@example.com")
    [result] = audit.repair_all(report)

    assert result.outcome == audit.CHANGED
    assert read_lock("UNIQ#EMAIL#old@example.com") == (True, bob.PK)


def test_transfer_loses_when_the_owner_holds_the_value_again(ddb):
    ada = signup("ada@example.com", "ada")
    bob = signup("bob@example.com", "bob")
    write_locks({"UNIQ#EMAIL#ada@example.com": bob.PK})
    report = audit.run_audit()

    overwrite(store.get_account(bob.id), email="ada@example.com")
    results = audit.repair_all(report)

    assert [result.outcome for result in results if result.finding.key == "UNIQ#EMAIL#ada@example.com"] == [
        audit.CHANGED
    ]
    assert read_lock("UNIQ#EMAIL#ada@example.com") == (True, bob.PK)
    assert store.get_account(ada.id).email == "ada@example.com"


def test_release_loses_when_the_lock_was_taken_over(ddb):
    write_locks({"UNIQ#HANDLE#ghost": "ACCT#ghost"})
    report = audit.run_audit()

    write_locks({"UNIQ#HANDLE#ghost": "ACCT#someone"})
    [result] = audit.repair_all(report)

    assert result.outcome == audit.CHANGED
    assert read_lock("UNIQ#HANDLE#ghost") == (True, "ACCT#someone")


def test_claim_for_an_account_without_the_value_is_refused_before_sending(ddb):
    account = new_account("blank@example.com", None)
    optional_handle = UniqueConstraint("username", namespace="HANDLE", allow_empty=True)

    with pytest.raises(InvalidTransaction):
        plan_claim_lock(account, optional_handle)


def test_repair_key_repairs_what_staff_saw(ddb):
    ada = signup("ada@example.com", "ada")
    delete_lock("UNIQ#HANDLE#ada")

    result = audit.repair_key(audit.MISSING, "HANDLE", "UNIQ#HANDLE#ada", [ada.id])

    assert result.outcome == audit.REPAIRED
    assert read_lock("UNIQ#HANDLE#ada") == (True, ada.PK)


def test_repair_key_does_nothing_when_the_lock_is_already_fine(ddb):
    ada = signup("ada@example.com", "ada")

    result = audit.repair_key(audit.MISSING, "HANDLE", "UNIQ#HANDLE#ada", [ada.id])

    assert result.outcome == audit.NOTHING_TO_DO


def test_repair_key_refuses_when_the_finding_changed_kind(ddb):
    ada = signup("ada@example.com", "ada")
    bob = signup("bob@example.com", "bob")
    write_locks({"UNIQ#HANDLE#ada": bob.PK})

    result = audit.repair_key(audit.MISSING, "HANDLE", "UNIQ#HANDLE#ada", [ada.id])

    assert result.outcome == audit.CHANGED
    assert result.finding.kind == audit.WRONG_OWNER
    assert read_lock("UNIQ#HANDLE#ada") == (True, bob.PK)


def test_repair_key_sees_a_duplicate_through_the_lock_owner(ddb):
    ada = signup("ada@example.com", "ada")
    twin = write_accounts([new_account("twin@example.com", "ADA")], with_locks=False)[0]

    result = audit.repair_key(audit.WRONG_OWNER, "HANDLE", "UNIQ#HANDLE#ada", [twin.id])

    assert result.outcome == audit.CHANGED
    assert result.finding.kind == audit.DUPLICATE
    assert read_lock("UNIQ#HANDLE#ada") == (True, ada.PK)


def test_repair_key_rejects_a_key_outside_the_namespace(ddb):
    with pytest.raises(KeyError):
        audit.repair_key(audit.ORPHANED, "HANDLE", "UNIQ#EMAIL#ada@example.com")


def test_lock_states_show_each_lock_of_an_account(ddb):
    ada = signup("ada@example.com", "ada")
    bob = signup("bob@example.com", "bob")
    delete_lock("UNIQ#EMAIL#ada@example.com")
    write_locks({"UNIQ#HANDLE#ada": bob.PK})

    states = {state.constraint.namespace: state for state in audit.lock_states(store.get_account(ada.id))}

    assert states["EMAIL"].status == "missing"
    assert states["EMAIL"].repair_kind == audit.MISSING
    assert (states["HANDLE"].status, states["HANDLE"].owner) == ("other_owner", bob.PK)
    assert states["HANDLE"].repair_kind == audit.WRONG_OWNER
    assert states["HANDLE_SKEL"].status == "ok"
    assert {state.status for state in audit.lock_states(store.get_account(bob.id))} == {"ok"}
