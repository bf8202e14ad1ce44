"""``manage.py accounts_explain`` for an account's other addresses: each operation's one
transaction, printed from the account as read and never sent; sent as printed, it does
what the site does."""

import json

import pytest
from django.core.management import CommandError

from accounts import addresses, store
from tests.engine.test_engine import locks
from tests.engine.test_explain_command import explain, send
from tests.support import RequestCounter

pytestmark = pytest.mark.dynamodb_local


@pytest.fixture
def ada(ddb, settings):
    """ada, with work@example.org confirmed and pending@example.org waiting for its link."""
    settings.ACCOUNTS_MAX_EMAIL_ADDRESSES = 4
    ada, _ = store.signup("ada@example.com", "ada", "hash")
    addresses.add_unverified(ada, "work@example.org")
    addresses.verify(store.get_account(ada.id), "work@example.org")
    addresses.add_unverified(store.get_account(ada.id), "pending@example.org")
    return store.get_account(ada.id)


def actions(output):
    """``[(kind, PK)]`` of a printed request, the security event's Put left out."""
    request = json.loads(output)
    found = []
    for entry in request["TransactItems"]:
        ((kind, body),) = entry.items()
        pk = (body.get("Key") or body.get("Item"))["PK"]["S"]
        sort_key = (body.get("Key") or body.get("Item"))["SK"]["S"]
        if not sort_key.startswith("EVENT#"):
            found.append((kind, pk))
    return found


def test_each_operation_is_one_transaction_read_from_the_account_and_never_sent(ada):
    with RequestCounter() as counter:
        printed = {
            operation: explain(operation, "--username", "ada", "--email", email)
            for operation, email in (
                ("add-email", "home@example.org"),
                ("verify-email-address", "pending@example.org"),
                ("make-primary", "work@example.org"),
                ("remove-email", "work@example.org"),
            )
        }

    assert set(counter.counts) <= {"GetItem", "BatchGetItem", "Query"}
    assert actions(printed["add-email"]) == [("Update", ada.PK), ("ConditionCheck", "UNIQ#EMAIL#home@example.org")]
    assert actions(printed["verify-email-address"]) == [("Update", ada.PK), ("Put", "UNIQ#EMAIL#pending@example.org")]
    assert actions(printed["make-primary"]) == [("Update", ada.PK)]
    assert actions(printed["remove-email"]) == [("Update", ada.PK), ("Delete", "UNIQ#EMAIL#work@example.org")]
    assert "UNIQ#EMAIL#pending@example.org" not in locks()


def test_a_printed_verification_sent_as_printed_takes_the_lock(ada):
    send(explain("verify-email-address", "--username", "ada", "--email", "pending@example.org"))

    assert locks()["UNIQ#EMAIL#pending@example.org"] == ada.PK
    assert store.get_account(ada.id).email_addresses == {"work@example.org", "pending@example.org"}


def test_a_refused_operation_says_why_and_prints_nothing(ada):
    with pytest.raises(CommandError, match="cannot_remove_primary_email"):
        explain("remove-email", "--username", "ada", "--email", "ada@example.com")


def test_with_one_address_per_account_the_operations_are_refused(ada, settings):
    settings.ACCOUNTS_MAX_EMAIL_ADDRESSES = 1

    with pytest.raises(CommandError, match="ACCOUNTS_MAX_EMAIL_ADDRESSES is 1"):
        explain("add-email", "--username", "ada", "--email", "home@example.org")
