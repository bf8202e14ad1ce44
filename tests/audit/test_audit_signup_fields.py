"""The audit of a site whose accounts have no username (``ACCOUNTS_SIGNUP_FIELDS`` without
``username``) or an optional one: an account without a username is consistent, and no
``HANDLE`` lock is expected of it."""

import pytest

from accounts import audit, store
from tests.seeding import delete_lock, write_locks
from tests.signup_fields import email_only  # noqa: F401 (a fixture)

pytestmark = pytest.mark.dynamodb_local

HASH = "!not-a-real-hash"


def signup(email, username=None):
    account, _ = store.signup(email, username, HASH)
    return account


def test_accounts_without_usernames_are_consistent_with_one_lock_each(email_only):
    for n in range(3):
        signup(f"person{n}@example.com")

    report = audit.run_audit()

    assert report.consistent, [finding.describe() for finding in report.findings]
    assert (report.accounts, report.locks) == (3, 3)


def test_a_missing_address_lock_is_still_found_and_claimed_back(email_only):
    ada = signup("ada@example.com")
    delete_lock("UNIQ#EMAIL#ada@example.com")

    [finding] = audit.run_audit().findings
    [result] = audit.repair_all(audit.run_audit())

    assert (finding.kind, finding.holders) == (audit.MISSING, (ada.PK,))
    assert result.outcome == audit.REPAIRED
    assert audit.run_audit().consistent


def test_username_locks_left_from_before_the_site_dropped_usernames_are_undeclared(ddb, settings):
    signup("ada@example.com", "ada")
    settings.ACCOUNTS_SIGNUP_FIELDS = ["email*", "password1*"]
    settings.ACCOUNTS_LOGIN_METHODS = {"email"}

    findings = audit.run_audit().findings

    assert sorted((finding.kind, finding.namespace) for finding in findings) == [
        (audit.UNDECLARED, "HANDLE"),
        (audit.UNDECLARED, "HANDLE_SKEL"),
    ]


def test_with_an_optional_username_accounts_with_and_without_one_are_consistent(ddb, settings):
    settings.ACCOUNTS_SIGNUP_FIELDS = ["email*", "username", "password1*"]
    signup("ada@example.com", "ada")
    signup("grace@example.com")

    report = audit.run_audit()

    assert report.consistent, [finding.describe() for finding in report.findings]
    assert report.locks == 4  # two addresses, ada's username and its skeleton


def test_with_an_optional_username_a_missing_username_lock_is_found(ddb, settings):
    settings.ACCOUNTS_SIGNUP_FIELDS = ["email*", "username", "password1*"]
    ada = signup("ada@example.com", "ada")
    delete_lock("UNIQ#HANDLE#ada")

    [finding] = audit.run_audit().findings

    assert (finding.kind, finding.key, finding.holders) == (audit.MISSING, "UNIQ#HANDLE#ada", (ada.PK,))


def test_a_lock_of_a_username_no_account_has_is_an_orphan(email_only, settings):
    settings.ACCOUNTS_SIGNUP_FIELDS = ["email*", "username", "password1*"]
    grace = signup("grace@example.com")
    write_locks({"UNIQ#HANDLE#grace": grace.PK})

    [finding] = audit.run_audit().findings

    assert (finding.kind, finding.key) == (audit.ORPHANED, "UNIQ#HANDLE#grace")
