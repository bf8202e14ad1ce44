"""The audit knows phone numbers as it knows any declared constraint (issue 37): on a site with
them, the ``PHONE`` lock of every verified number is expected, found missing, orphaned or
naming the wrong account, and repaired; an unverified number holds none, and is expected to
hold none."""

import pytest

from accounts import audit
from accounts.phones import store as phone_store
from tests.phones import with_number
from tests.seeding import delete_lock, overwrite, read_lock, write_locks
from tests.sms import NUMBER, NUMBER_E164, OTHER, OTHER_E164, phone_site  # noqa: F401

pytestmark = pytest.mark.dynamodb_local

LOCK = f"UNIQ#PHONE#{NUMBER_E164}"


def test_verified_numbers_hold_a_lock_each_and_unverified_ones_none(phone_site):
    with_number()
    with_number("bob@example.com", OTHER, verified=False)

    report = audit.run_audit()

    assert report.consistent, [finding.describe() for finding in report.findings]
    assert report.locks == 2 + 1  # two addresses, ada's number


def test_a_missing_number_lock_is_found_and_claimed_back(phone_site):
    ada = with_number()
    delete_lock(LOCK)

    [finding] = audit.run_audit().findings
    [result] = audit.repair_all(audit.run_audit())

    assert (finding.kind, finding.namespace, finding.holders) == (audit.MISSING, "PHONE", (ada.PK,))
    assert result.action == audit.CLAIMED
    assert read_lock(LOCK) == (True, ada.PK)
    assert phone_store.get_by_phone(NUMBER).id == ada.id


def test_the_lock_of_a_number_nobody_verified_is_an_orphan_released(phone_site):
    bob = with_number("bob@example.com", OTHER, verified=False)
    write_locks({f"UNIQ#PHONE#{OTHER_E164}": bob.PK})

    [finding] = audit.run_audit().findings
    [result] = audit.repair_all(audit.run_audit())

    assert (finding.kind, finding.owner_status) == (audit.ORPHANED, audit.OWNER_CHANGED)
    assert result.action == audit.RELEASED
    assert read_lock(f"UNIQ#PHONE#{OTHER_E164}") == (False, None)
    assert audit.run_audit().consistent


def test_a_number_lock_naming_the_wrong_account_is_transferred_to_its_holder(phone_site):
    ada = with_number()
    bob = with_number("bob@example.com", OTHER)
    write_locks({LOCK: bob.PK})

    [finding] = audit.run_audit().findings
    [result] = audit.repair_all(audit.run_audit())

    assert (finding.kind, finding.owner, finding.holder) == (audit.WRONG_OWNER, bob.PK, ada.PK)
    assert result.action == audit.TRANSFERRED
    assert read_lock(LOCK) == (True, ada.PK)
    assert audit.run_audit().consistent


def test_a_number_changed_behind_the_engine_leaves_an_orphan_and_a_missing_lock(phone_site):
    ada = with_number()
    overwrite(ada, phone=OTHER_E164)

    report = audit.run_audit()
    audit.repair_all(report)

    assert sorted(finding.kind for finding in report.findings) == sorted([audit.ORPHANED, audit.MISSING])
    assert (read_lock(LOCK), read_lock(f"UNIQ#PHONE#{OTHER_E164}")) == ((False, None), (True, ada.PK))
    assert audit.run_audit().consistent
