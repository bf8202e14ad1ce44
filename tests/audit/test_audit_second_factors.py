"""The audit of second factors on DynamoDB Local: the account's ``totp_secret``,
``recovery_codes`` and ``passkeys`` are checked against the partition's credential items
(``WEBAUTHN#``), TOTP records (``TOTP#``) and the credential locks, each damage reported in
its own namespace; a damaged ``passkeys`` is rebuilt from the credential items and their
locks, never dropped."""

import pytest

from accounts import audit, dynamo, store
from accounts.mfa import store as mfa_store
from accounts.tables import account_pk, passkey_sort_key
from tests.invariants import violations
from tests.mfa.test_mfa_deletion_audit import new_credential
from tests.seeding import read_lock

pytestmark = pytest.mark.dynamodb_local


@pytest.fixture
def ada(ddb):
    account, _ = store.signup("ada@example.com", "ada", "!")
    return account


def with_passkeys(account, *credential_ids):
    for credential_id in credential_ids:
        mfa_store.add_passkey(store.get_account(account.id), new_credential(credential_id), credential_id)
    return store.get_account(account.id)


def set_raw(pk, sk, **values):
    """Write raw attribute values behind the engine (planted damage)."""
    names = {f"#a{index}": name for index, name in enumerate(values)}
    placeholders = {f":v{index}": value for index, value in enumerate(values.values())}
    dynamo.call(
        "update_item",
        TableName=dynamo.table_name(),
        Key=dynamo.key(pk, sk),
        UpdateExpression="SET " + ", ".join(f"#a{index} = :v{index}" for index in range(len(values))),
        ExpressionAttributeNames=names,
        ExpressionAttributeValues=placeholders,
    )


def found(report):
    return sorted((finding.kind, finding.namespace, finding.key) for finding in report.findings)


def test_a_damaged_passkeys_is_reported_under_webauthn_and_its_lock_not_orphaned(ada):
    with_passkeys(ada, "cred1")
    set_raw(ada.PK, "PROFILE", passkeys={"S": "cred1"})

    report = audit.run_audit()

    assert found(report) == [("malformed", "WEBAUTHN", ada.PK)]


def test_the_repair_rebuilds_a_damaged_passkeys_from_the_credential_items_and_locks(ada):
    with_passkeys(ada, "cred1", "cred2")
    set_raw(ada.PK, "PROFILE", passkeys={"S": "cred1"})

    repairs = audit.repair_all(audit.run_audit())

    assert [repair.outcome for repair in repairs] == ["repaired"]
    assert store.get_account(ada.id).passkeys == {"cred1", "cred2"}
    assert read_lock("UNIQ#WEBAUTHN#cred1") == (True, ada.PK)
    assert read_lock("UNIQ#WEBAUTHN#cred2") == (True, ada.PK)
    assert audit.run_audit().findings == [] and violations() == []


@pytest.mark.parametrize(
    "attribute, damage, namespace",
    [
        ("totp_secret", {"L": [{"S": "JBSWY3DPEHPK3PXP"}]}, "TOTP"),
        ("recovery_codes", {"S": "digest"}, "RECOVERY"),
    ],
)
def test_a_damaged_totp_secret_or_recovery_codes_is_reported_and_left_for_a_person(ada, attribute, damage, namespace):
    set_raw(ada.PK, "PROFILE", **{attribute: damage})

    report = audit.run_audit()

    assert found(report) == [("damaged", namespace, ada.PK)]
    (finding,) = report.findings
    assert not finding.repairable and attribute in finding.malformed
    assert attribute in finding.as_dict()["description"]


def test_a_listed_and_locked_credential_without_its_item_is_reported(ada):
    with_passkeys(ada, "cred1")
    dynamo.call("delete_item", TableName=dynamo.table_name(), Key=dynamo.key(ada.PK, passkey_sort_key("cred1")))

    report = audit.run_audit()

    assert found(report) == [("no_credential", "WEBAUTHN", "UNIQ#WEBAUTHN#cred1")]
    assert report.findings[0].holders == (ada.PK,)


def test_an_orphan_credential_item_with_no_lock_and_no_ttl_is_reported(ada):
    with_passkeys(ada, "cred1")
    stray = {**dynamo.key(ada.PK, passkey_sort_key("cred9")), "credential_id": {"S": "cred9"}}
    stray.update(name={"S": "Old"}, public_key={"B": b"key"}, sign_count={"N": "0"})
    dynamo.call("put_item", TableName=dynamo.table_name(), Item=stray)

    report = audit.run_audit()

    assert found(report) == [("stray_credential", "WEBAUTHN", f"{ada.PK}|{passkey_sort_key('cred9')}")]


@pytest.mark.parametrize("attribute, damage", [("sign_count", {"S": "5"}), ("public_key", {"S": "key"})])
def test_a_credential_item_with_a_value_of_the_wrong_type_is_reported(ada, attribute, damage):
    with_passkeys(ada, "cred1")
    set_raw(ada.PK, passkey_sort_key("cred1"), **{attribute: damage})

    report = audit.run_audit()

    assert found(report) == [("damaged", "WEBAUTHN", f"{ada.PK}|{passkey_sort_key('cred1')}")]
    assert report.findings[0].malformed == (attribute,)


def test_a_totp_record_with_a_string_expires_is_reported(ada):
    item = {**dynamo.key(account_pk(ada.id), "TOTP#123"), "expires": {"S": "soon"}}
    dynamo.call("put_item", TableName=dynamo.table_name(), Item=item)

    report = audit.run_audit()

    assert found(report) == [("damaged", "TOTP", f"{ada.PK}|TOTP#123")]


def test_a_sound_table_with_second_factors_has_no_finding(ada):
    with_passkeys(ada, "cred1", "cred2")
    mfa_store.enable_totp(store.get_account(ada.id), "JBSWY3DPEHPK3PXP", 5, ["aaaa-bbbb-cccc"])

    assert audit.run_audit().findings == []
