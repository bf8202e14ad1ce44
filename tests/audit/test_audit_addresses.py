"""The audit of an account's other addresses (a recorded unique set sharing the email's
namespace) on DynamoDB Local: every member's lock missing, orphaned, naming the wrong owner or
unrecorded is found by the join and repaired by a guarded transaction; staff repair one key."""

import pytest

from accounts import addresses, audit, store
from accounts.tables import Account
from tests.invariants import violations
from tests.seeding import delete_lock, overwrite, read_lock, write_locks

pytestmark = pytest.mark.dynamodb_local

HASH = "!not-a-real-hash"
WORK = "UNIQ#EMAIL#work@example.org"


@pytest.fixture
def ada(ddb, settings):
    """Ada, with work@example.org among her confirmed addresses."""
    settings.ACCOUNTS_MAX_EMAIL_ADDRESSES = 3
    ada, _ = store.signup("ada@example.com", "ada", HASH)
    addresses.add_unverified(ada, "work@example.org")
    addresses.verify(store.get_account(ada.id), "work@example.org")
    return store.get_account(ada.id)


def only_finding(report):
    assert len(report.findings) == 1, [finding.describe() for finding in report.findings]
    return report.findings[0]


def repaired(kind):
    report = audit.run_audit()
    finding = only_finding(report)
    assert finding.kind == kind
    [result] = audit.repair_all(report)
    assert result.outcome == audit.REPAIRED, result.detail
    return finding


def test_an_account_with_other_addresses_written_by_the_engine_is_consistent(ada):
    report = audit.run_audit()

    assert report.consistent, [finding.describe() for finding in report.findings]
    assert report.locks == 4  # both addresses, the username and its skeleton


def test_a_members_missing_lock_is_found_and_claimed_back(ada):
    delete_lock(WORK)

    finding = repaired(audit.MISSING)

    assert finding.key == WORK and finding.holders == (ada.PK,)
    assert read_lock(WORK) == (True, ada.PK)
    assert audit.run_audit().consistent
    assert violations() == []


def test_a_lock_of_an_address_nobody_holds_is_orphaned_and_released(ada):
    write_locks({"UNIQ#EMAIL#old@example.org": ada.PK})

    finding = repaired(audit.ORPHANED)

    assert finding.key == "UNIQ#EMAIL#old@example.org" and finding.owner == ada.PK
    assert read_lock("UNIQ#EMAIL#old@example.org") == (False, None)
    assert audit.run_audit().consistent


def test_a_members_lock_naming_another_account_is_transferred_to_its_holder(ada):
    bob, _ = store.signup("bob@example.com", "bob", HASH)
    write_locks({WORK: bob.PK})

    finding = repaired(audit.WRONG_OWNER)

    assert finding.key == WORK and finding.holders == (ada.PK,) and finding.owner == bob.PK
    assert read_lock(WORK) == (True, ada.PK)
    assert audit.run_audit().consistent


def test_a_member_written_behind_the_engine_is_missing_and_its_key_recorded_once_claimed(ada):
    overwrite(ada, email_addresses={"work@example.org", "home@example.org"})

    finding = repaired(audit.MISSING)

    assert finding.key == "UNIQ#EMAIL#home@example.org"
    assert read_lock("UNIQ#EMAIL#home@example.org") == (True, ada.PK)
    assert Account.get(ada.PK, "PROFILE", consistent_read=True).lock_keys.as_dict()["EMAIL#email_addresses"] == {
        "home@example.org": "UNIQ#EMAIL#home@example.org",
        "work@example.org": WORK,
    }
    assert audit.run_audit().consistent


def test_a_member_whose_key_is_not_recorded_is_unrecorded_and_recorded(ada):
    overwrite(ada, lock_keys={"EMAIL": "UNIQ#EMAIL#ada@example.com", "HANDLE": "UNIQ#HANDLE#ada"})

    finding = repaired(audit.UNRECORDED)

    assert finding.holders == (ada.PK,)
    recorded = Account.get(ada.PK, "PROFILE", consistent_read=True).lock_keys.as_dict()
    assert recorded["EMAIL#email_addresses"] == {"work@example.org": WORK}
    assert recorded["HANDLE_SKEL"] == "UNIQ#HANDLE_SKEL#ada"
    assert audit.run_audit().consistent


def test_a_member_held_by_two_accounts_is_a_duplicate_left_to_a_person(ada):
    bob, _ = store.signup("bob@example.com", "bob", HASH)
    overwrite(bob, email_addresses={"WORK@example.org"})

    finding = only_finding(audit.run_audit())

    assert finding.kind == audit.DUPLICATE and set(finding.holders) == {ada.PK, bob.PK}


def test_staff_repair_one_members_key_as_they_saw_it(ada):
    delete_lock(WORK)

    result = audit.repair_key(audit.MISSING, "EMAIL", WORK, [ada.id])

    assert result.outcome == audit.REPAIRED
    assert read_lock(WORK) == (True, ada.PK)


def test_the_lock_states_of_an_account_list_each_address(ada):
    states = {state.key: state.status for state in audit.lock_states(ada)}

    assert states["UNIQ#EMAIL#ada@example.com"] == "ok" and states[WORK] == "ok"
