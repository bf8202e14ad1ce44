"""Account ids never come back: a deleted account leaves a tombstone at its key, which every
read treats as absent and which refuses a sign-up form posted again (its token derives the
id), whatever the form's age, with a form error rather than a 500."""

import uuid

import pytest
from django.test import Client

from accounts import audit, lookups, store, transactions
from accounts.exceptions import ItemDeleted, StaleItem
from accounts.staff import scans
from accounts.tables import TOMBSTONE_LIFETIME, Account, dynamodb_client
from tests.engine.test_engine import table_items
from tests.invariants import violations
from tests.seeding import read_lock, write_locks
from tests.web import signup_data, stored_accounts

pytestmark = pytest.mark.dynamodb_local

HASH = "argon2$not-a-real-hash"


@pytest.fixture
def forgotten_tokens(ddb):
    """DynamoDB as it is 10 minutes after a request: it no longer knows its token (each
    TransactWriteItems goes with a fresh one), so a form posted again is evaluated afresh."""

    def forget(params, **kwargs):
        params["ClientRequestToken"] = uuid.uuid4().hex

    dynamodb_client().meta.events.register("provide-client-params.dynamodb.TransactWriteItems", forget)


def test_a_deleted_account_leaves_a_tombstone_that_every_read_treats_as_absent(ddb):
    ada, _ = store.signup("ada@example.org", "ada", HASH)

    store.delete_account(ada)

    tombstone = table_items()[ada.PK]
    assert set(tombstone) == {"PK", "SK", "deleted", "expires"}
    assert int(tombstone["expires"]) - int(tombstone["deleted"]) == TOMBSTONE_LIFETIME.total_seconds()
    assert store.get_account(ada.id) is None
    assert store.get_by_username("ada") is None
    assert stored_accounts() == []
    assert scans.account_page().accounts == []
    report = audit.run_audit()
    assert report.consistent and report.accounts == 0
    assert violations() == []


def test_a_sign_up_replayed_after_dynamodbs_idempotency_window_cannot_bring_a_deleted_id_back(forgotten_tokens):
    token = uuid.uuid4().hex
    ada, created = store.signup("ada@example.org", "ada", HASH, token=token)
    assert created
    store.delete_account(ada)

    with pytest.raises(ItemDeleted):
        store.signup("ada@example.org", "ada", HASH, token=token)

    assert store.get_account(ada.id) is None
    assert read_lock("UNIQ#HANDLE#ada") == (False, None)


def test_a_sign_up_replayed_within_the_window_is_refused_as_well(ddb):
    token = uuid.uuid4().hex
    ada, _ = store.signup("ada@example.org", "ada", HASH, token=token)
    store.delete_account(ada)

    with pytest.raises(ItemDeleted):
        store.signup("ada@example.org", "ada", HASH, token=token)


def test_a_stale_sign_up_form_gets_a_form_error_and_a_new_form(forgotten_tokens):
    first = Client()
    data = signup_data(first)
    assert first.post("/accounts/signup/", data).status_code == 302
    [ada] = stored_accounts()
    store.delete_account(ada)

    response = Client().post("/accounts/signup/", data)

    assert response.status_code == 200
    assert response.context["form"].has_error("__all__", "signup_stale")
    assert "already used for an account that has been deleted since" in response.content.decode()
    assert response.context["form"]["token"].value() != data["token"]
    assert stored_accounts() == []


def test_a_lock_naming_a_deleted_account_is_released_by_the_audit(ddb):
    ada, _ = store.signup("ada@example.org", "ada", HASH)
    store.delete_account(ada)
    write_locks({"UNIQ#HANDLE#ghost": ada.PK})

    [finding] = audit.run_audit().findings
    assert (finding.kind, finding.owner_status) == (audit.ORPHANED, audit.OWNER_GONE)
    [result] = audit.repair_all(audit.run_audit())

    assert result.outcome == audit.REPAIRED
    assert read_lock("UNIQ#HANDLE#ghost") == (False, None)


def test_a_tombstone_is_never_changed_back_into_an_account(ddb):
    ada, _ = store.signup("ada@example.org", "ada", HASH)
    as_read = store.get_account(ada.id)
    store.delete_account(ada)

    for change in ({"pending_email": "new@example.org"}, {"username": "ada2"}):
        with pytest.raises(StaleItem):
            transactions.change(as_read, change)

    assert set(table_items()[ada.PK]) == {"PK", "SK", "deleted", "expires"}
    assert lookups.was_deleted(Account, ada.PK)
