"""Passkeys' locks on DynamoDB Local: deleting an account deletes its credentials and their
locks in the same transaction, a deletion planned before a registration is refused, and the
audit checks the credential locks like every other namespace (orphans, wrong owners,
missing locks) and repairs them with guarded transactions."""

import pytest

from accounts import audit, store
from accounts.exceptions import StaleItem
from accounts.mfa import passkeys
from accounts.mfa import store as mfa_store
from tests.invariants import scan_everything, violations
from tests.mfa import add_passkey
from tests.seeding import delete_lock, overwrite, read_lock, write_locks
from tests.web import PASSWORD, signed_up_client

pytestmark = pytest.mark.dynamodb_local


def credential_items_and_locks():
    """Every credential item and credential lock in the table."""
    return [
        raw["PK"]["S"] + " " + raw["SK"]["S"]
        for raw in scan_everything()
        if raw["SK"]["S"].startswith("WEBAUTHN#") or raw["PK"]["S"].startswith("UNIQ#WEBAUTHN#")
    ]


def new_credential(credential_id):
    """A checked credential, as registration stores it (no browser needed here)."""
    return passkeys.NewCredential(credential_id, b"key", 0, False, False, [], "0" * 32)


def test_deleting_an_account_deletes_every_credential_and_lock_in_one_transaction(ddb, count_requests):
    client = signed_up_client()
    for name in ("Laptop", "Phone", "Key"):
        add_passkey(client, name)
    assert len(credential_items_and_locks()) == 6
    count_requests.reset()

    client.post("/accounts/delete/", {"password": PASSWORD})

    assert count_requests.counts["TransactWriteItems"] == 1
    assert credential_items_and_locks() == []
    assert store.get_by_username("ada") is None
    assert violations() == []


def test_a_deletion_planned_before_a_registration_is_refused(ddb):
    ada, _ = store.signup("ada@example.com", "ada", "!")
    read_for_deletion = store.get_account(ada.id)
    mfa_store.add_passkey(store.get_account(ada.id), new_credential("cred1"), "Laptop")

    with pytest.raises(StaleItem):
        store.delete_account(read_for_deletion)

    assert read_lock("UNIQ#WEBAUTHN#cred1") == (True, ada.PK)
    store.delete_account(store.get_account(ada.id))
    assert credential_items_and_locks() == [] and violations() == []


def test_a_registration_on_a_deleted_account_writes_nothing(ddb):
    ada, _ = store.signup("ada@example.com", "ada", "!")
    read = store.get_account(ada.id)
    store.delete_account(store.get_account(ada.id))

    with pytest.raises(StaleItem):
        mfa_store.add_passkey(read, new_credential("cred1"), "Laptop")

    assert credential_items_and_locks() == []


def test_the_audit_finds_and_releases_an_orphaned_credential_lock(ddb):
    write_locks({"UNIQ#WEBAUTHN#stray": "ACCT#gone"})

    report = audit.run_audit()

    (finding,) = report.findings
    assert (finding.kind, finding.namespace, finding.owner_status) == ("orphaned", "WEBAUTHN", "owner_gone")
    assert [repair.outcome for repair in audit.repair_all(report)] == ["repaired"]
    assert read_lock("UNIQ#WEBAUTHN#stray") == (False, None)


def test_the_audit_finds_a_credential_lock_of_the_wrong_owner_and_gives_it_back(ddb):
    ada, _ = store.signup("ada@example.com", "ada", "!")
    grace, _ = store.signup("grace@example.com", "grace", "!")
    mfa_store.add_passkey(ada, new_credential("cred1"), "Laptop")
    write_locks({"UNIQ#WEBAUTHN#cred1": grace.PK})

    report = audit.run_audit()

    (finding,) = report.findings
    assert (finding.kind, finding.holder, finding.owner) == ("wrong_owner", ada.PK, grace.PK)
    audit.repair_all(report)
    assert read_lock("UNIQ#WEBAUTHN#cred1") == (True, ada.PK)
    assert violations() == []


def test_the_audit_finds_a_missing_credential_lock_and_claims_it(ddb):
    ada, _ = store.signup("ada@example.com", "ada", "!")
    mfa_store.add_passkey(ada, new_credential("cred1"), "Laptop")
    delete_lock("UNIQ#WEBAUTHN#cred1")

    report = audit.run_audit()

    assert [(finding.kind, finding.key) for finding in report.findings] == [("missing", "UNIQ#WEBAUTHN#cred1")]
    audit.repair_all(report)
    assert read_lock("UNIQ#WEBAUTHN#cred1") == (True, ada.PK) and violations() == []


def test_a_credential_taken_out_of_the_account_behind_the_engine_leaves_an_orphan(ddb):
    ada, _ = store.signup("ada@example.com", "ada", "!")
    mfa_store.add_passkey(ada, new_credential("cred1"), "Laptop")
    overwrite(store.get_account(ada.id), passkeys={"cred2"})

    kinds = sorted((finding.kind, finding.key) for finding in audit.run_audit().findings)

    assert kinds == [("missing", "UNIQ#WEBAUTHN#cred2"), ("orphaned", "UNIQ#WEBAUTHN#cred1")]


def test_the_staff_account_page_shows_its_credential_locks(ddb):
    from tests.staff import client_as, make_account

    client = signed_up_client()
    credential, _ = add_passkey(client, "Laptop")
    boss = make_account("boss@example.com", "boss", staff=True)

    page = client_as(boss).get(f"/staff/accounts/{store.get_by_username('ada').id}/").content.decode()

    assert f"UNIQ#WEBAUTHN#{credential.b64_id}" in page
    assert "Laptop" in page


def test_a_stale_deletion_from_the_page_is_refused_kindly(ddb, monkeypatch):
    client = signed_up_client()
    # The deletion reads the account; a passkey is registered before its transaction.
    original = store.delete_account

    def registering_first(account, **options):
        mfa_store.add_passkey(store.get_account(account.id), new_credential("cred9"), "Late")
        return original(account, **options)

    monkeypatch.setattr(store, "delete_account", registering_first)
    response = client.post("/accounts/delete/", {"password": PASSWORD})

    assert response.status_code == 200
    assert response.context["form"].has_error("__all__", "stale")
    assert read_lock("UNIQ#WEBAUTHN#cred9")[0] is True
    assert violations() == []
