"""``manage.py accounts_explain``: the exact request of an operation, printed and never sent."""

import io
import json
import os
import subprocess
import sys
from pathlib import Path

import botocore.session
import botocore.validate
import pytest
from django.core.management import CommandError, call_command

from accounts import identifiers, store
from accounts.tables import Account, account_pk, dynamodb_client
from tests.support import RequestCounter

BASE_DIR = Path(__file__).resolve().parents[2]


def explain(*args):
    out = io.StringIO()
    call_command("accounts_explain", *args, stdout=out)
    return out.getvalue()


def table_items():
    """The table's items by key, but the one recording its key version."""
    items = dynamodb_client().scan(TableName=Account.Meta.table_name, ConsistentRead=True)["Items"]
    return {(item["PK"]["S"], item["SK"]["S"]): item for item in items if item["SK"]["S"] != "META"}


def lock_owner(key):
    item = table_items().get((key, "LOCK"))
    return item and item["owner"]["S"]


def send(output):
    dynamodb_client().transact_write_items(**json.loads(output))


@pytest.fixture
def ada(ddb):
    account, _ = store.signup("Ada@X.io", "Ada", "hash")
    return account


def test_signup_prints_four_guarded_puts_and_sends_nothing(ddb):
    with RequestCounter() as counter:
        output = explain("signup", "--email", "Ada@X.io", "--username", "Ada")
    assert counter.total == 0
    assert table_items() == {}
    request = json.loads(output)
    assert set(request) == {"TransactItems", "ClientRequestToken"}
    puts = [entry["Put"] for entry in request["TransactItems"]]
    assert len(puts) == len(request["TransactItems"]) == 4
    account, email_lock, username_lock, skeleton_lock = puts
    assert {put["TableName"] for put in puts} == {Account.Meta.table_name}
    assert account["Item"]["email"] == {"S": "Ada@X.io"}
    assert account["Item"]["password"]["S"].startswith("!")  # unusable
    assert email_lock["Item"]["PK"] == {"S": "UNIQ#EMAIL#ada@x.io"}
    assert username_lock["Item"]["PK"] == {"S": "UNIQ#HANDLE#ada"}
    assert skeleton_lock["Item"]["PK"] == {"S": "UNIQ#HANDLE_SKEL#ada"}
    assert {lock["Item"]["owner"]["S"] for lock in puts[1:]} == {account["Item"]["PK"]["S"]}
    assert account["ConditionExpression"] == "attribute_not_exists (#0)"
    assert account["ExpressionAttributeNames"] == {"#0": "PK"}
    for put in puts[1:]:
        # A lock is free when absent, or expired longer ago than the clock-skew margin (TTL
        # deletes lazily).
        assert put["ConditionExpression"] == "(attribute_not_exists (#0) OR #1 < :0)"
        assert put["ExpressionAttributeNames"] == {"#0": "PK", "#1": "expires"}
        assert put["Item"]["key_version"] == {"S": identifiers.KEY_VERSION}


def test_printed_signup_sent_as_is_creates_the_account_and_its_locks(ddb):
    send(explain("signup", "--email", "Ada@X.io", "--username", "Ada"))
    account = store.get_by_email("ada@x.io")
    assert account is not None
    assert (account.email, account.username) == ("Ada@X.io", "Ada")
    assert store.get_by_username("ADA").PK == account.PK
    assert set(table_items()) == {
        (account.PK, "PROFILE"),
        ("UNIQ#EMAIL#ada@x.io", "LOCK"),
        ("UNIQ#HANDLE#ada", "LOCK"),
        ("UNIQ#HANDLE_SKEL#ada", "LOCK"),
    }


def test_printed_request_is_valid_aws_cli_input(ddb):
    # The AWS CLI validates --cli-input-json against this same botocore service model.
    output = explain("signup", "--email", "ada@x.io", "--username", "ada")
    model = botocore.session.get_session().get_service_model("dynamodb")
    shape = model.operation_model("TransactWriteItems").input_shape
    botocore.validate.validate_parameters(json.loads(output), shape)


def test_signup_with_token_targets_the_account_the_form_would_create(ddb):
    request = json.loads(explain("signup", "--email", "ada@x.io", "--username", "ada", "--token", "form-token-1"))
    assert request["ClientRequestToken"] == "form-token-1"
    expected_pk = account_pk(store.account_id_for_token("form-token-1"))
    assert request["TransactItems"][0]["Put"]["Item"]["PK"] == {"S": expected_pk}


def test_signup_with_empty_email_is_an_error_naming_the_field(ddb):
    with pytest.raises(CommandError, match=r"Invalid email: This field is required"):
        explain("signup", "--email", "  ", "--username", "ada")


def test_signup_with_too_long_username_is_an_error_naming_the_field(ddb):
    with pytest.raises(CommandError, match=r"Invalid username: This value is too long"):
        explain("signup", "--email", "ada@x.io", "--username", "a" * 3000)


def test_token_over_36_characters_is_an_invalid_transaction(ddb):
    with pytest.raises(CommandError, match=r"Invalid transaction: .*1 to 36 characters"):
        explain("signup", "--email", "ada@x.io", "--username", "ada", "--token", "t" * 37)


def test_change_email_reads_the_account_and_writes_nothing(ada):
    before = table_items()
    with RequestCounter() as counter:
        output = explain("change-email", "--email", "ada@x.io", "--to", "Lovelace@X.io")
    assert dict(counter.counts) == {"GetItem": 2}  # the lock, then its owner: both consistent
    assert table_items() == before
    items = json.loads(output)["TransactItems"]
    # ... and the change's security event, last (issue 26's timeline).
    assert [next(iter(entry)) for entry in items] == ["Update", "Put", "Delete", "Put"]
    assert items[1]["Put"]["Item"]["PK"] == {"S": "UNIQ#EMAIL#lovelace@x.io"}
    assert items[2]["Delete"]["Key"]["PK"] == {"S": "UNIQ#EMAIL#ada@x.io"}
    assert items[3]["Put"]["Item"]["SK"]["S"].startswith("EVENT#")


def test_printed_change_email_sent_as_is_moves_the_email_lock(ada):
    send(explain("change-email", "--email", "ada@x.io", "--to", "Lovelace@X.io"))
    assert Account.get(ada.PK, "PROFILE").email == "Lovelace@X.io"
    assert lock_owner("UNIQ#EMAIL#lovelace@x.io") == ada.PK
    assert lock_owner("UNIQ#EMAIL#ada@x.io") is None
    assert lock_owner("UNIQ#HANDLE#ada") == ada.PK


def test_change_email_to_the_same_normalized_email_touches_no_lock(ada):
    items = json.loads(explain("change-email", "--email", "ada@x.io", "--to", "ADA@x.io"))["TransactItems"]
    assert [next(iter(entry)) for entry in items] == ["Update", "Put"]  # the address's case, and its event


def test_printed_change_username_sent_as_is_moves_the_username_locks(ada):
    output = explain("change-username", "--username", "ada", "--to", "Countess")
    kinds = [next(iter(entry)) for entry in json.loads(output)["TransactItems"]]
    assert kinds == ["Update", *["Put", "Delete"] * 2, "Put"]  # the last: the change's security event
    send(output)
    assert Account.get(ada.PK, "PROFILE").username == "Countess"
    assert lock_owner("UNIQ#HANDLE#countess") == lock_owner("UNIQ#HANDLE_SKEL#countess") == ada.PK
    assert lock_owner("UNIQ#HANDLE#ada") is lock_owner("UNIQ#HANDLE_SKEL#ada") is None


def test_change_email_to_an_empty_value_is_an_error_naming_the_field(ada):
    with pytest.raises(CommandError, match=r"Invalid email: This field is required"):
        explain("change-email", "--email", "ada@x.io", "--to", "")


def test_change_email_of_a_missing_account_is_an_error(ddb):
    with pytest.raises(CommandError, match=r"No account has email 'nobody@x.io'"):
        explain("change-email", "--email", "nobody@x.io", "--to", "new@x.io")


def test_change_username_of_a_missing_account_is_an_error(ddb):
    with pytest.raises(CommandError, match=r"No account has username 'nobody'"):
        explain("change-username", "--username", "nobody", "--to", "somebody")


def test_delete_prints_a_guarded_tombstone_put_three_guarded_deletes_and_the_staff_registry_entry(ada):
    before = table_items()
    with RequestCounter() as counter:
        output = explain("delete", "--email", "ADA@x.io")
    assert set(counter.counts) == {"GetItem"}
    assert table_items() == before
    tombstone, *deletes = json.loads(output)["TransactItems"]
    assert tombstone["Put"]["Item"]["PK"]["S"] == ada.PK
    assert set(tombstone["Put"]["Item"]) == {"PK", "SK", "deleted", "expires"}
    deletes = [entry["Delete"] for entry in deletes]
    assert [(delete["Key"]["PK"]["S"], delete["Key"]["SK"]["S"]) for delete in deletes] == [
        ("UNIQ#EMAIL#ada@x.io", "LOCK"),
        ("UNIQ#HANDLE#ada", "LOCK"),
        ("UNIQ#HANDLE_SKEL#ada", "LOCK"),
        ("STAFF", ada.PK),
    ]
    # The registry entry's delete rides on the account's guards: it may have joined since.
    assert "ConditionExpression" in tombstone["Put"]
    assert all("ConditionExpression" in delete for delete in deletes[:3])
    assert "ConditionExpression" not in deletes[3]


def test_printed_delete_sent_as_is_removes_the_account_and_its_locks(ada):
    send(explain("delete", "--username", "ada"))
    # Only the account's tombstone is left: its id never comes back.
    [(pk, sort_key)] = table_items()
    assert (pk, sort_key) == (ada.PK, "PROFILE")
    assert store.get_account(ada.id) is None


def test_delete_of_a_missing_account_is_an_error(ddb):
    with pytest.raises(CommandError, match=r"No account has email 'nobody@x.io'"):
        explain("delete", "--email", "nobody@x.io")


def test_delete_needs_an_email_or_a_username(ddb):
    with pytest.raises(CommandError, match=r"one of the arguments --email --username is required"):
        explain("delete")


def test_manage_py_prints_the_signup_request_without_reaching_dynamodb():
    # tests.settings point at a closed port: any request, even the system checks', would
    # fail or warn on stderr.
    environment = {**os.environ, "DJANGO_SETTINGS_MODULE": "tests.settings"}
    result = subprocess.run(
        [sys.executable, "manage.py", "accounts_explain", "signup", "--email", "ada@x.io", "--username", "ada"],
        cwd=BASE_DIR,
        env=environment,
        capture_output=True,
        text=True,
        timeout=60,
        check=True,
    )
    assert result.stderr == ""
    request = json.loads(result.stdout)
    assert [entry["Put"]["Item"]["PK"]["S"] for entry in request["TransactItems"]][1:] == [
        "UNIQ#EMAIL#ada@x.io",
        "UNIQ#HANDLE#ada",
        "UNIQ#HANDLE_SKEL#ada",
    ]
