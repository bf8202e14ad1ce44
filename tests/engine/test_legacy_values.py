"""Data the rules never saw: an account with a value that cannot be locked (a blank
username from before the rule existed), keys too long to exist, and a missing table."""

import pytest
from django.test import Client
from django.urls import reverse

from accounts import store
from accounts.exceptions import InvalidUniqueValue
from accounts.tables import TableModel, create_table
from tests.seeding import new_account, read_lock, write_accounts, write_locks
from tests.staff import boss, staff_client  # noqa: F401 (fixtures)
from tests.web import PASSWORD, login, signed_up_client

pytestmark = pytest.mark.dynamodb_local


@pytest.fixture
def nameless(ddb):
    """An account with a blank username and its email lock, written behind the engine."""
    account = new_account("old@example.com", "")
    write_accounts([account], with_locks=False)
    write_locks({"UNIQ#EMAIL#old@example.com": account.PK})
    return store.get_account(account.id)


def test_a_password_change_does_not_touch_the_blank_username(nameless):
    store.set_password_hash(nameless, "!new-hash")
    assert store.get_account(nameless.id).password == "!new-hash"


def test_deactivating_does_not_touch_the_blank_username(nameless):
    store.update_account(nameless, is_active=False)
    assert store.get_account(nameless.id).is_active is False


def test_an_email_change_moves_the_email_lock_and_leaves_the_username_alone(nameless):
    store.change_email(nameless, "new@example.com")
    assert read_lock("UNIQ#EMAIL#new@example.com") == (True, nameless.PK)
    assert read_lock("UNIQ#EMAIL#old@example.com") == (False, None)


def test_giving_the_account_a_username_takes_its_lock(nameless):
    store.change_username(nameless, "named")
    assert read_lock("UNIQ#HANDLE#named") == (True, nameless.PK)


def test_setting_the_username_blank_again_is_a_field_error(nameless):
    with pytest.raises(InvalidUniqueValue) as raised:
        store.change_username(nameless, " ")
    assert raised.value.fields == {"username"}


def test_the_staff_flag_view_deactivates_it_without_a_500(nameless, staff_client):
    url = reverse("staff:flag", args=[nameless.id])
    response = staff_client.post(url, {"flag": "is_active", "value": "0"}, follow=True)
    assert response.status_code == 200
    assert store.get_account(nameless.id).is_active is False


def test_the_staff_account_page_of_an_id_too_long_for_a_key_is_404(staff_client):
    for name in ("account", "flag", "delete"):
        url = reverse(f"staff:{name}", args=["x" * 3000])
        response = staff_client.get(url) if name == "account" else staff_client.post(url, {})
        assert response.status_code == 404, name


def test_an_id_too_long_for_a_key_is_no_account(ddb):
    assert store.get_account("x" * 3000) is None
    assert store.get_account("\udcff") is None


def test_logging_in_when_the_table_does_not_exist_shows_the_unavailable_page(ddb):
    client = signed_up_client()
    client.logout()
    TableModel.delete_table()
    try:
        response = login(Client(), "ada", PASSWORD)
        assert response.status_code == 503
        assert "Temporarily unavailable" in response.content.decode()
    finally:
        create_table(wait=True)
