"""The username change and account deletion flows, called as the front ends call them, on
DynamoDB Local: each outcome, the taken name from the cancelled transaction's reasons."""

import pytest
from django.core import mail

from accounts import store
from accounts.exceptions import StaleItem, UniqueViolation
from accounts.form_errors import field_errors
from accounts.internal.flows import delete, username_change
from tests.engine.test_engine import locks
from tests.flow_requests import flow_request, stored_account
from tests.mail import mails_to

pytestmark = pytest.mark.dynamodb_local


def test_a_new_username_moves_the_locks_and_tells_the_address_as_it_was(ddb):
    account = stored_account()

    changing = username_change.change_username(flow_request(account), account=account, username="countess")

    assert changing.refusal is None and changing.account.username == "countess"
    assert store.get_by_username("countess").id == account.id and store.get_by_username("ada") is None
    (notice,) = mails_to("ada@example.com")
    assert "countess" in notice.body


def test_a_taken_username_gives_the_username_error_from_the_cancelled_transaction(ddb):
    stored_account("grace@example.com", "grace")
    account = stored_account()

    changing = username_change.change_username(flow_request(account), account=account, username="grace")

    assert changing.account is None
    assert isinstance(changing.refusal, UniqueViolation) and changing.refusal.fields == {"username"}
    assert field_errors(changing.refusal)["username"].code == "username_taken"
    assert store.get_account(account.id).username == "ada" and mail.outbox == []


def test_a_look_alike_of_a_taken_username_is_refused_as_similar(ddb):
    stored_account("grace@example.com", "grace")
    account = stored_account()

    changing = username_change.change_username(flow_request(account), account=account, username="GRACE")

    assert isinstance(changing.refusal, UniqueViolation)
    assert field_errors(changing.refusal)["username"].code in {"username_taken", "username_similar"}


def test_the_same_username_changes_nothing_and_mails_nobody(ddb):
    account = stored_account()

    changing = username_change.change_username(flow_request(account), account=account, username="ada")

    assert changing.refusal is None and mail.outbox == []


def test_deletion_releases_every_value_and_logs_the_session_out(ddb):
    account = stored_account()
    request = flow_request(account)
    request.session["kept"] = "until logout"

    deleting = delete.delete_account(request, account=account)

    assert deleting.refusal is None
    assert store.get_account(account.id) is None and locks() == {}
    assert not request.user.is_authenticated and "kept" not in request.session
    assert stored_account().id != account.id


def test_deletion_of_an_account_changed_since_it_was_read_is_refused_and_deletes_nothing(ddb):
    account = stored_account()
    request = flow_request(account)
    store.change_username(store.get_account(account.id), "countess")

    deleting = delete.delete_account(request, account=account)

    assert isinstance(deleting.refusal, StaleItem)
    assert store.get_account(account.id) is not None and request.user.is_authenticated
