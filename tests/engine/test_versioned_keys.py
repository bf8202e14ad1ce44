"""Versioned keys on DynamoDB Local: an upgrade of the Unicode data or a change of our folding rules
changes what some skeleton keys are. Each lock records the key version that wrote it, the
table records the version its locks are keyed with and the system check refuses another
until ``accounts_backfill`` has re-keyed them, and a rename or deletion releases the key the
account recorded, never one computed again."""

import pytest

from accounts import audit, identifiers, store
from accounts.checks import check_key_version
from accounts.tables import KEY_VERSION_ITEM, TableModel, account_constraints, dynamodb_client, recorded_key_version
from tests.engine.test_engine import table_items
from tests.invariants import violations
from tests.seeding import new_account, read_lock, write_accounts, write_locks
from tests.staff import run_command

pytestmark = pytest.mark.dynamodb_local

HASH = "argon2$not-a-real-hash"
NEW_VERSION = "rules-2+test"
# lily's skeleton lock before the upgrade ("lily"); after it, l1ly's ("llly").
LILY_BEFORE = f"UNIQ#HANDLE_SKEL#{identifiers.lookalike_key('lily')}"


@pytest.fixture
def upgrade(monkeypatch):
    """``upgrade()`` switches this server to new key data: skeletons that also fold the
    letter i into l (the skeleton of ``l1ly`` is ``llly``, of ``lily`` ``lily``; now both
    are ``llly``), and a new KEY_VERSION."""

    def switch():
        folded = identifiers.skeleton
        monkeypatch.setattr(identifiers, "skeleton", lambda text: folded(text).replace("i", "l"))
        monkeypatch.setattr(identifiers, "KEY_VERSION", NEW_VERSION)
        account_constraints.cache_clear()

    yield switch
    account_constraints.cache_clear()


def skeleton_lock(name):
    return f"UNIQ#HANDLE_SKEL#{name}"


def test_each_lock_records_the_key_version_that_wrote_it(ddb, upgrade):
    # During a rolling deploy, two servers with two key functions write locks side by side.
    old_version = identifiers.KEY_VERSION
    old, _ = store.signup("old@example.org", "alpha", HASH)
    upgrade()
    store.signup("new@example.org", "beta", HASH)

    items = table_items()
    assert items[skeleton_lock("alpha")]["key_version"] == items["UNIQ#EMAIL#old@example.org"]["key_version"]
    assert items[skeleton_lock("alpha")]["key_version"] == old_version
    assert items[skeleton_lock("beta")]["key_version"] == items["UNIQ#HANDLE#beta"]["key_version"] == NEW_VERSION
    assert table_items()[old.PK]["lock_keys"]["HANDLE_SKEL"] == {"S": skeleton_lock("alpha")}


def test_the_check_refuses_a_server_whose_keys_the_table_was_not_keyed_with_until_the_backfill(ddb, upgrade):
    store.signup("lily@example.org", "lily", HASH)
    assert check_key_version(None) == []
    upgrade()

    [error] = check_key_version(None)
    assert error.id == "accounts.E016"
    assert NEW_VERSION in error.msg and "accounts_backfill" in error.hint
    # The audit shows the re-key to do: the new key missing, the old lock orphaned.
    findings = {(finding.kind, finding.key) for finding in audit.run_audit().findings}
    assert findings == {(audit.MISSING, skeleton_lock("llly")), (audit.ORPHANED, LILY_BEFORE)}

    status, out, _ = run_command("accounts_backfill")

    assert status == 0
    assert check_key_version(None) == []
    assert recorded_key_version() == NEW_VERSION
    assert audit.run_audit().consistent


def test_a_table_written_before_keys_were_versioned_needs_the_backfill(ddb):
    dynamodb_client().delete_item(TableName=TableModel.Meta.table_name, Key=KEY_VERSION_ITEM)

    [error] = check_key_version(None)
    assert "before lock keys were versioned" in error.msg

    run_command("accounts_backfill")
    assert check_key_version(None) == []


def test_a_rename_after_an_upgrade_releases_the_key_the_account_recorded(ddb, upgrade):
    account, _ = store.signup("lily@example.org", "lily", HASH)
    upgrade()

    store.change_username(store.get_account(account.id), "carol")

    assert read_lock(LILY_BEFORE) == (False, None)
    assert read_lock(skeleton_lock("carol")) == (True, account.PK)
    assert audit.run_audit().consistent
    assert violations() == []


def test_a_deletion_after_an_upgrade_releases_the_keys_the_account_recorded(ddb, upgrade):
    account, _ = store.signup("lily@example.org", "lily", HASH)
    upgrade()

    store.delete_account(store.get_account(account.id))

    assert [key for key in table_items() if key.startswith("UNIQ#")] == []


def test_accounts_written_before_keys_were_recorded_get_them_from_the_backfill(ddb, upgrade):
    legacy = new_account("lily@example.org", "lily")
    write_accounts([legacy], with_locks=False)
    write_locks(dict.fromkeys(("UNIQ#EMAIL#lily@example.org", "UNIQ#HANDLE#lily", LILY_BEFORE), legacy.PK))
    [finding] = audit.run_audit().findings
    assert (finding.kind, finding.key) == (audit.UNRECORDED, legacy.PK)

    audit.backfill()
    upgrade()
    store.change_username(store.get_account(legacy.id), "carol")

    assert read_lock(LILY_BEFORE) == (False, None)
    assert audit.run_audit().consistent


def test_a_look_alike_made_by_the_upgrade_is_listed_by_the_backfill_and_neither_holds_the_lock(ddb, upgrade):
    l1ly, _ = store.signup("l1ly@example.org", "l1ly", HASH)
    lily, _ = store.signup("lily@example.org", "lily", HASH)
    upgrade()

    report, _ = audit.backfill()

    [duplicate] = report.of_kind(audit.DUPLICATE)
    assert duplicate.key == skeleton_lock("llly") and set(duplicate.holders) == {l1ly.PK, lily.PK}
    assert read_lock(LILY_BEFORE) == (False, None)
