"""Damage is a finding, never a crash: items written with raw boto3, as an operator might
(``expires`` as a decimal or a string, ``owner`` as a number, a username as a number), are
read by every lookup, login, change, deletion and staff page without an error; the audit
reports each as ``malformed`` and its guarded repair writes it again as it is read."""

import time
from decimal import Decimal

import boto3
import pytest
from django.contrib.auth import authenticate
from django.urls import reverse

from accounts import audit, identifiers, lookups, sessions, store
from accounts.exceptions import UniqueViolation
from accounts.tables import Account, TableModel, malformed_attributes
from tests.engine.test_engine import locks, table_items
from tests.invariants import violations
from tests.staff import boss, run_command, staff_client  # noqa: F401 (fixtures)

pytestmark = pytest.mark.dynamodb_local

PASSWORD = "correct horse battery staple"


@pytest.fixture
def table(ddb, settings):
    """The accounts table, as an operator reaches it: boto3's resource API."""
    resource = boto3.resource(
        "dynamodb",
        endpoint_url=settings.ACCOUNTS_ENDPOINT_URL,
        region_name="us-east-1",
        aws_access_key_id="local",
        aws_secret_access_key="local",
    )
    return resource.Table(TableModel.Meta.table_name)


def operator_sets(table, pk, sk, **values):
    """``UpdateItem SET`` of ``values`` on item ``(pk, sk)``, as boto3 serializes them."""
    names = {f"#a{index}": name for index, name in enumerate(values)}
    table.update_item(
        Key={"PK": pk, "SK": sk},
        UpdateExpression="SET " + ", ".join(f"#a{index} = :v{index}" for index in range(len(values))),
        ExpressionAttributeNames=names,
        ExpressionAttributeValues={f":v{index}": value for index, value in enumerate(values.values())},
    )


def signup(email, username, **values):
    return store.signup(email, username, make_password(), **values)[0]


def make_password():
    from django.contrib.auth.hashers import make_password as hashed

    return hashed(PASSWORD)


def test_a_decimal_expires_on_an_account_is_a_time_like_any_other(table, settings):
    carol = signup("carol@example.org", "carol", email_verified=False)
    operator_sets(table, carol.PK, "PROFILE", expires=Decimal(str(time.time() + 3600)))

    assert store.get_account(carol.id).expires == pytest.approx(time.time() + 3600, abs=60)
    assert store.get_by_username("carol").PK == carol.PK
    assert audit.run_audit().findings == []


def test_a_lock_whose_expires_is_a_string_is_read_found_and_rewritten(table, staff_client):
    bob = signup("bob@example.org", "bob")
    operator_sets(table, "UNIQ#HANDLE#bob", "LOCK", expires="tomorrow")

    assert store.get_by_username("bob").PK == bob.PK
    page = staff_client.get(reverse("staff:locks"))
    assert page.status_code == 200
    [finding] = audit.run_audit().findings
    assert (finding.kind, finding.key, finding.malformed) == (audit.MALFORMED, "UNIQ#HANDLE#bob", ("expires",))
    status, out, _ = run_command("accounts_audit")
    assert status == 1 and "malformed" in out

    [result] = audit.repair_all(audit.run_audit())

    assert (result.outcome, result.action) == (audit.REPAIRED, audit.TRANSFERRED)
    assert table_items()["UNIQ#HANDLE#bob"] == {
        "PK": "UNIQ#HANDLE#bob",
        "SK": "LOCK",
        "owner": bob.PK,
        "key_version": identifiers.KEY_VERSION,
    }
    assert audit.run_audit().consistent


def test_a_damaged_lock_nobody_holds_blocks_its_value_only_until_the_audit_releases_it(table):
    table.put_item(Item={"PK": "UNIQ#HANDLE#ghost", "SK": "LOCK", "owner": "ACCT#gone", "expires": "soon"})
    table.put_item(Item={"PK": "UNIQ#HANDLE_SKEL#ghost", "SK": "LOCK", "owner": "ACCT#gone", "expires": "soon"})
    with pytest.raises(UniqueViolation):
        signup("new@example.org", "ghost")

    results = audit.repair_all(audit.run_audit())

    assert {(result.outcome, result.action) for result in results} == {(audit.REPAIRED, audit.RELEASED)}
    assert signup("new@example.org", "ghost").username == "ghost"


def test_a_numeric_owner_breaks_no_login_change_or_deletion(table, settings):
    bob = signup("bob@example.org", "bob")
    carol = signup("carol@example.org", "carol")
    operator_sets(table, "UNIQ#HANDLE#bob", "LOCK", owner=5)
    operator_sets(table, "UNIQ#EMAIL#carol@example.org", "LOCK", owner=7)

    # The lock names no account: the name finds nobody, the address still logs in.
    assert lookups.lock_owner(Account, "UNIQ#HANDLE#bob") is None
    assert authenticate(None, username="bob", password=PASSWORD) is None
    assert authenticate(None, username="bob@example.org", password=PASSWORD).username == "bob"
    # Each change keeps the damaged lock (checked as stored) instead of retrying until Busy.
    store.change_username(store.get_account(bob.id), "robert")
    store.delete_account(store.get_account(carol.id))

    assert locks()["UNIQ#HANDLE#robert"] == bob.PK
    assert table.get_item(Key={"PK": "UNIQ#HANDLE#bob", "SK": "LOCK"})["Item"]["owner"] == 5
    findings = {finding.key: finding for finding in audit.run_audit().findings}
    assert findings["UNIQ#HANDLE#bob"].kind == audit.MALFORMED
    assert findings["UNIQ#EMAIL#carol@example.org"].kind == audit.MALFORMED


def test_the_repair_of_a_numeric_owner_gives_the_lock_to_its_holder(table):
    bob = signup("bob@example.org", "bob")
    operator_sets(table, "UNIQ#HANDLE#bob", "LOCK", owner=5)

    [result] = audit.repair_all(audit.run_audit())

    assert (result.outcome, result.action) == (audit.REPAIRED, audit.TRANSFERRED)
    assert locks()["UNIQ#HANDLE#bob"] == bob.PK
    assert violations() == []


def test_an_account_with_a_numeric_username_is_read_reported_and_written_again(table, staff_client):
    account = signup("num@example.org", "n12345")
    operator_sets(table, account.PK, "PROFILE", username=12345)

    read = store.get_account(account.id)
    assert read.username == "12345"
    assert malformed_attributes(read) == {"username": {"N": "12345"}}
    assert staff_client.get(reverse("staff:account", args=[account.id])).status_code == 200
    kinds = {(finding.kind, finding.key) for finding in audit.run_audit().findings}
    assert (audit.MALFORMED, account.PK) in kinds

    results = {result.finding.key: result for result in audit.repair_all(audit.run_audit())}

    assert results[account.PK].action == audit.REWRITTEN
    assert table_items()[account.PK]["username"] == "12345"
    assert malformed_attributes(store.get_account(account.id)) == {}


def test_a_malformed_item_is_repaired_from_its_staff_button(table, staff_client):
    account = signup("num@example.org", "n12345")
    operator_sets(table, account.PK, "PROFILE", username=12345)

    result = audit.repair_key(audit.MALFORMED, "HANDLE", account.PK)

    assert (result.outcome, result.action) == (audit.REPAIRED, audit.REWRITTEN)


def test_an_unverified_account_whose_expires_is_a_string_can_still_be_verified(table, settings):
    settings.ACCOUNTS_EMAIL_VERIFICATION = "mandatory"
    carol = signup("carol@example.org", "carol")
    operator_sets(table, carol.PK, "PROFILE", expires="next week")

    read = store.get_account(carol.id)
    assert read.expires is None and malformed_attributes(read) == {"expires": {"S": "next week"}}
    store.verify_email(read)

    assert store.get_account(carol.id).email_verified is True
    assert "expires" not in table_items()[carol.PK]


def test_a_flag_of_the_wrong_type_reads_as_false(table):
    carol = signup("carol@example.org", "carol")
    operator_sets(table, carol.PK, "PROFILE", email_verified="yes")

    assert store.get_account(carol.id).email_verified is False
    assert store.get_by_email("carol@example.org") is None


def test_a_session_whose_expires_is_a_string_is_absent(table):
    session = sessions.SessionStore()
    session["cart"] = "tea"
    session.create()
    operator_sets(table, f"SESSION#{session.session_key}", "SESSION", expires="forever")

    assert sessions.SessionStore(session.session_key).load() == {}
    assert not sessions.SessionStore().exists(session.session_key)
