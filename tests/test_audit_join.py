"""The audit as one join over rows read once: on a table with damage of every kind the
audit knows, it finds what reading each item's locks by key found, with the same JSON."""

import time

import pytest

from accounts import audit, store
from accounts.audit.records import report_document
from accounts.tables import dynamodb_client, get_account_model
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
    write_locks({key: legacy.PK for key in ("UNIQ#EMAIL#legacy@example.com", "UNIQ#HANDLE#legacy")})
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
    write_accounts([new_account("carol@example.org", "carol")])
    dora = new_account("dora@example.org", "carol", expires=int(time.time()) + 60, lock_keys={})
    write_accounts([dora], with_locks=False)
    # An account past its expiry holding a lock: absent, so its lock is an orphan.
    expired = new_account("old@example.com", "old", expires=int(time.time()) - 3600)
    write_accounts([expired], with_locks=False)
    write_locks({"UNIQ#HANDLE#elder": expired.PK})
    return accounts


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


@pytest.mark.parametrize("segments", [1, 3])
def test_the_join_finds_what_reads_by_key_found_on_damage_of_every_kind(every_kind, segments):
    by_key = audit.run_audit(segments=segments, _by_key=True)
    joined = audit.run_audit(segments=segments)

    assert {finding.kind for finding in by_key.findings} == set(audit.KINDS)
    assert comparable(joined) == comparable(by_key)
