"""The audit as one join over rows read once: on a table with damage of every kind the
audit knows, it finds what reading each item's locks by key found, with the same JSON."""

import time

import pytest
import sqlglot

from accounts import audit, store
from accounts.audit import joining
from accounts.audit.records import report_document
from accounts.mfa import store as mfa_store
from accounts.tables import STAFF_REGISTRY, dynamodb_client, get_account_model, passkey_sort_key
from tests.mfa.test_mfa_deletion_audit import new_credential
from tests.seeding import (
    delete_lock,
    new_account,
    overwrite,
    seed_accounts,
    write_accounts,
    write_locks,
    write_ownerless_lock,
)

pytestmark = pytest.mark.dynamodb_local


def operator_sets(pk, sort_key, **values):
    """A raw ``UpdateItem SET`` of attribute values as DynamoDB spells them (damage)."""
    names = {f"#a{index}": name for index, name in enumerate(values)}
    dynamodb_client().update_item(
        TableName=get_account_model().Meta.table_name,
        Key={"PK": {"S": pk}, "SK": {"S": sort_key}},
        UpdateExpression="SET " + ", ".join(f"#a{index} = :v{index}" for index in range(len(values))),
        ExpressionAttributeNames=names,
        ExpressionAttributeValues={f":v{index}": value for index, value in enumerate(values.values())},
    )


@pytest.fixture
def every_kind(ddb):
    """Thirty accounts and damage of every kind of finding, spread over the table."""
    accounts = seed_accounts(30)
    delete_lock(f"UNIQ#EMAIL#{accounts[0].email}")  # missing
    write_locks({"UNIQ#HANDLE#ghost": "ACCT#nobody", "UNIQ#HANDLE#user2": accounts[3].PK})  # orphan, wrong owner
    write_ownerless_lock("UNIQ#EMAIL#nobody@example.com")  # orphan naming nobody
    overwrite(accounts[1], email="moved@example.com")  # an orphan and a missing lock
    twin = new_account(accounts[4].email.upper(), "twin", lock_keys={"HANDLE": "UNIQ#HANDLE#twin"})
    write_accounts([twin], with_locks=False)  # a duplicate, and unrecorded skeleton lock
    write_locks({"UNIQ#HANDLE#twin": twin.PK, "UNIQ#HANDLE_SKEL#twin": twin.PK})
    legacy = new_account("legacy@example.com", "legacy")
    write_accounts([legacy], with_locks=False)  # holds its locks, records none
    write_locks(dict.fromkeys(("UNIQ#EMAIL#legacy@example.com", "UNIQ#HANDLE#legacy"), legacy.PK))
    write_locks({"UNIQ#HANDLE_SKEL#legacy": legacy.PK})
    blank = new_account("blank@example.com", "   ", lock_keys={"EMAIL": "UNIQ#EMAIL#blank@example.com"})
    write_accounts([blank], with_locks=False)  # invalid
    write_locks({"UNIQ#EMAIL#blank@example.com": blank.PK})
    write_locks({"UNIQ#UNIFORM#team-1#18": "TEAM#1", "UNIQ#UNIFORM#team-1#7": "TEAM#1"})  # undeclared
    operator_sets("UNIQ#HANDLE#user5", "LOCK", expires={"S": "soon"})  # malformed lock
    operator_sets("UNIQ#HANDLE#user6", "LOCK", owner={"N": "5"})  # malformed owner
    operator_sets(accounts[7].PK, "PROFILE", username={"N": "12345"})  # malformed item
    gone, _ = store.signup("gone@example.org", "gone", "!hash")
    store.delete_account(gone)  # a tombstone, and a lock naming it
    write_locks({"UNIQ#HANDLE#gone": gone.PK})
    # A duplicate one holder of which expires within the clock-skew margin: transient.
    [carol] = write_accounts([new_account("carol@example.org", "carol")])
    dora = new_account("dora@example.org", "carol", expires=int(time.time()) + 60, lock_keys={})
    write_accounts([dora], with_locks=False)
    # An account past its expiry holding a lock: absent, so its lock is an orphan.
    expired = new_account("old@example.com", "old", expires=int(time.time()) - 3600)
    write_accounts([expired], with_locks=False)
    write_locks({"UNIQ#HANDLE#elder": expired.PK})
    # Second factors: a damaged TOTP secret, a stray credential item, a listed and locked
    # credential whose item is gone.
    operator_sets(accounts[8].PK, "PROFILE", totp_secret={"L": [{"S": "JBSWY3DPEHPK3PXP"}]})
    operator_sets(accounts[9].PK, passkey_sort_key("cred9"), credential_id={"S": "cred9"}, public_key={"B": b"k"})
    mfa_store.add_passkey(store.get_account(accounts[10].id), new_credential("cred10"), "cred10")
    dynamodb_client().delete_item(
        TableName=get_account_model().Meta.table_name,
        Key={"PK": {"S": accounts[10].PK}, "SK": {"S": passkey_sort_key("cred10")}},
    )
    # The staff registry: an entry of an account that is no staff, a staff account with none.
    dynamodb_client().put_item(TableName=get_account_model().Meta.table_name, Item=STAFF_REGISTRY.key(accounts[11].PK))
    operator_sets(accounts[12].PK, "PROFILE", is_staff={"BOOL": True})
    return {
        **{f"user{n}": account for n, account in enumerate(accounts)},
        "twin": twin,
        "legacy": legacy,
        "blank": blank,
        "gone": gone,
        "dora": dora,
        "carol": carol,
        "expired": expired,
    }


def comparable(report):
    """A report's JSON document without what differs from run to run: its time, its id, and
    the ``updated`` the items read are given when serialized (the audit does not read it)."""
    document = report_document(report)
    document["scanned"].pop("seconds")
    document.pop("report")
    for finding in document["findings"]:
        for item in finding["items"].values():
            item.pop("updated", None)
    return document


def planted(named):
    """What reading every item's locks by key found on the ``every_kind`` table (the audit
    before the join, run on it, with the second factors' rules of :mod:`accounts.audit.factors`):
    ``(kind, key, holders, owner, owner status, malformed attributes, count)``, items by
    their names."""
    return {
        ("orphaned", "UNIQ#EMAIL#nobody@example.com", (), None, "no_owner", (), 1),
        ("orphaned", "UNIQ#EMAIL#user1@example.com", (), "user1", "owner_changed", (), 1),
        ("orphaned", "UNIQ#HANDLE#elder", (), "expired", "owner_gone", (), 1),
        ("orphaned", "UNIQ#HANDLE#ghost", (), "ACCT#nobody", "owner_gone", (), 1),
        ("orphaned", "UNIQ#HANDLE#gone", (), "gone", "owner_gone", (), 1),
        ("orphaned", "UNIQ#HANDLE#user7", (), "user7", "owner_changed", (), 1),
        ("orphaned", "UNIQ#HANDLE_SKEL#user7", (), "user7", "owner_changed", (), 1),
        ("missing", "UNIQ#EMAIL#dora@example.org", ("dora",), None, None, (), 1),
        ("missing", "UNIQ#EMAIL#moved@example.com", ("user1",), None, None, (), 1),
        ("missing", "UNIQ#EMAIL#user0@example.com", ("user0",), None, None, (), 1),
        ("missing", "UNIQ#HANDLE#12345", ("user7",), None, None, (), 1),
        ("missing", "UNIQ#HANDLE_SKEL#l2345", ("user7",), None, None, (), 1),
        ("wrong_owner", "UNIQ#HANDLE#user2", ("user2",), "user3", "owner_changed", (), 1),
        ("duplicate", "UNIQ#EMAIL#user4@example.com", ("twin", "user4"), "user4", None, (), 1),
        ("transient", "UNIQ#HANDLE#carol", ("carol", "dora"), "carol", None, (), 1),
        ("transient", "UNIQ#HANDLE_SKEL#carol", ("carol", "dora"), "carol", None, (), 1),
        ("malformed", "user7", ("user7",), None, None, ("username",), 1),
        ("malformed", "UNIQ#HANDLE#user5", ("user5",), "user5", None, ("expires",), 1),
        ("malformed", "UNIQ#HANDLE#user6", ("user6",), None, None, ("owner",), 1),
        ("unrecorded", "twin", ("twin",), None, None, (), 1),
        ("unrecorded", "legacy", ("legacy",), None, None, (), 1),
        ("invalid", None, ("blank",), None, None, (), 1),
        ("undeclared", "UNIQ#UNIFORM#team-1#18", (), None, None, (), 2),
        ("damaged", "user8", ("user8",), None, None, ("totp_secret",), 1),
        ("stray_credential", f"{named['user9'].PK}|{passkey_sort_key('cred9')}", ("user9",), None, None, (), 1),
        ("no_credential", "UNIQ#WEBAUTHN#cred10", ("user10",), "user10", None, (), 1),
        ("stray_entry", "user11", (), None, None, (), 1),
        ("missing_entry", "user12", ("user12",), None, None, (), 1),
    }


def found(report, named):
    names = {account.PK: name for name, account in named.items()}
    return {
        (
            finding.kind,
            names.get(finding.key, finding.key),
            tuple(sorted(names.get(pk, pk) for pk in finding.holders)),
            names.get(finding.owner, finding.owner),
            finding.owner_status,
            finding.malformed,
            finding.count,
        )
        for finding in report.findings
    }


def test_the_join_finds_the_damage_of_every_kind_reads_by_key_found(every_kind):
    report = audit.run_audit()

    assert found(report, every_kind) == planted(every_kind)
    assert {finding.kind for finding in report.findings} == set(audit.KINDS)
    # Neither the tombstone nor the expired account; the locks with cred10's.
    assert (report.accounts, report.locks) == (35, 103)


def test_three_segments_report_what_one_reports_json_and_all(every_kind):
    three, one = comparable(audit.run_audit(segments=3)), comparable(audit.run_audit())

    assert (three["scanned"].pop("segments"), one["scanned"].pop("segments")) == (3, 1)
    assert three == one


def test_a_slice_confirms_what_its_rows_cannot_see_with_the_lock_it_reads(every_kind):
    # A slice's rows hold some accounts without their locks (read by another slice): the
    # join makes candidates of them, the reads of their locks clear them.
    slices = [audit.run_audit(segment=index, total_segments=4) for index in range(4)]

    assert found(audit.merge_reports(slices), every_kind) == planted(every_kind)


def test_the_join_is_held_to_the_memory_limit_setting(settings, tmp_path):
    settings.ACCOUNTS_AUDIT_MEMORY_LIMIT = "300MB"
    connection = joining.connect(tmp_path)
    try:
        [(limit, spill)] = connection.execute(
            "SELECT current_setting('memory_limit'), current_setting('temp_directory')"
        ).fetchall()
    finally:
        connection.close()

    assert (limit, spill) == ("286.1 MiB", str(tmp_path))


def test_a_memory_limit_duckdb_cannot_read_is_refused(settings, tmp_path):
    settings.ACCOUNTS_AUDIT_MEMORY_LIMIT = "1GB'; SET threads = 1; --"

    with pytest.raises(ValueError, match="ACCOUNTS_AUDIT_MEMORY_LIMIT"):
        joining.connect(tmp_path)


def test_the_query_is_trino_sql_with_no_engine_s_own_function():
    # Athena runs findings.sql as it is: it must parse as Trino's SQL and call nothing but
    # the aggregates and casts every engine has.
    tree = sqlglot.parse_one(joining.findings_sql(), read="trino", error_level=sqlglot.ErrorLevel.RAISE)

    functions = {type(function).__name__ for function in tree.find_all(sqlglot.exp.Func)}
    assert functions <= {"And", "Or", "Not", "Cast", "Count", "Min"}, functions
    tables = {table.name for table in tree.find_all(sqlglot.exp.Table)} - {"declared_locks"}
    assert tables == {"held", "locks", "items", "registry", "members"}
