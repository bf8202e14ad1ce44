"""The staff hierarchy (issue 35, finding 11), on DynamoDB Local: only a superuser changes a
superuser's account. A staff member who is no superuser is refused every action on one
(password, address, username, flags, sessions, verification, authenticator app, deletion) and
its confirmation pages, and nothing is written; a superuser may act, recorded, and the
owner is told. The rule is a guard in the change's transaction too: an account made a
superuser after the page read it, or a superuser demoted while acting, is refused there."""

import pytest
from django.contrib.auth import authenticate
from django.urls import reverse

from accounts import dynamo, store, timeline, transactions
from accounts.exceptions import ActorRefused, StaleItem
from accounts.staff import hierarchy
from tests.mfa import enable_totp
from tests.staff import client_as, make_account, messages_of, run_command
from tests.web import signed_up_client

pytestmark = pytest.mark.dynamodb_local

NEW_PASSWORD = "Tulip-Harbour-Sextant-81"
REFUSED = str(hierarchy.REFUSED_MESSAGE)


@pytest.fixture
def root(ddb):
    """The superuser whose account is at stake (ada, with a password and a session)."""
    signed_up_client()
    store.update_account(store.get_by_username("ada"), is_staff=True, is_superuser=True)
    return store.get_by_username("ada")


@pytest.fixture
def clerk(ddb):
    """A staff member who is no superuser."""
    return make_account("clerk@example.com", "clerk", staff=True)


@pytest.fixture
def chief(ddb):
    """Another superuser."""
    return make_account("chief@example.com", "chief", staff=True, is_superuser=True)


def url(name, account):
    return reverse(f"staff:{name}", args=[account.id])


# What each staff POST sends, and what it would change of ada's account.
ACTIONS = {
    "password": ("password", {"new_password1": NEW_PASSWORD, "new_password2": NEW_PASSWORD}),
    "email": ("email", {"email": "thief@example.com"}),
    "username": ("username", {"username": "thief"}),
    "deactivate": ("flag", {"flag": "is_active", "value": "0"}),
    "revoke staff": ("flag", {"flag": "is_staff", "value": "0"}),
    "end sessions": ("end_sessions", {}),
    "verify": ("verification", {"action": "verify"}),
    "delete": ("delete", {}),
}


def state_of(account_id):
    """What a staff action could change of the account: its item and its sessions."""
    account = store.get_account(account_id)
    if account is None:
        return None
    sessions = [item["SK"]["S"] for item in dynamo.query_partition(account.PK, "SESSION#")]
    fields = ("email", "username", "password", "is_active", "is_staff", "is_superuser", "email_verified")
    return {name: getattr(account, name) for name in fields}, sessions


@pytest.mark.parametrize("action", sorted(ACTIONS))
def test_a_staff_member_who_is_no_superuser_cannot_change_a_superusers_account(root, clerk, action, mailoutbox):
    name, data = ACTIONS[action]
    before = state_of(root.id)
    mailoutbox.clear()

    response = client_as(clerk).post(url(name, root), data, follow=True)

    assert REFUSED in messages_of(response)
    assert state_of(root.id) == before
    assert mailoutbox == []


def test_nor_remove_a_superusers_authenticator_app(root, clerk):
    enable_totp(client_as(root))
    response = client_as(clerk).post(url("totp_remove", root), follow=True)

    assert REFUSED in messages_of(response)
    assert store.get_account(root.id).totp_secret


@pytest.mark.parametrize("page", ["flag", "delete"])
def test_nor_open_a_page_confirming_a_change_of_one(root, clerk, page):
    response = client_as(clerk).get(url(page, root), {"flag": "is_active", "value": "0"}, follow=True)

    assert REFUSED in messages_of(response)
    assert response.redirect_chain[-1][0] == url("account", root)


def test_a_staff_member_who_is_no_superuser_still_sees_a_superusers_page(root, clerk):
    assert client_as(clerk).get(url("account", root)).status_code == 200


def test_a_superuser_sets_a_superusers_password_recorded_and_the_owner_told(root, chief, mailoutbox):
    mailoutbox.clear()
    data = {"new_password1": NEW_PASSWORD, "new_password2": NEW_PASSWORD}

    response = client_as(chief).post(url("password", root), data, follow=True)

    assert REFUSED not in messages_of(response)
    assert authenticate(username="ada", password=NEW_PASSWORD) is not None
    assert [mail.to for mail in mailoutbox] == [["ada@example.com"]]
    assert timeline.recent_events(root.id)[0].actor == chief.id


def test_a_superuser_deactivating_a_superuser_tells_the_owner(root, chief, mailoutbox):
    mailoutbox.clear()

    client_as(chief).post(url("flag", root), {"flag": "is_active", "value": "0"})

    assert store.get_account(root.id).is_active is False
    assert [mail.to for mail in mailoutbox] == [["ada@example.com"]]
    assert "deactivated your account" in mailoutbox[0].body


def test_a_staff_member_who_is_no_superuser_still_changes_an_ordinary_account(clerk, ddb):
    signed_up_client()
    ada = store.get_by_username("ada")

    client_as(clerk).post(url("flag", ada), {"flag": "is_active", "value": "0"})

    assert store.get_account(ada.id).is_active is False


# The rule as a guard in the transaction: races with the page's read


def test_a_deletion_of_an_account_made_a_superuser_after_it_was_read_is_stale(clerk, ddb):
    staff = make_account("ada@example.com", "ada", staff=True)
    read = store.get_account(staff.id)
    store.update_account(store.get_account(staff.id), is_superuser=True)

    with pytest.raises(StaleItem):
        store.delete_account(read, origin=timeline.Origin(actor=clerk.id))

    assert store.get_account(staff.id) is not None


def test_a_change_by_a_superuser_demoted_meanwhile_is_refused(root, chief, monkeypatch):
    change = transactions.change

    def demoted_first(*args, **kwargs):
        monkeypatch.setattr(transactions, "change", change)
        store.update_account(store.get_account(chief.id), is_superuser=False)
        return change(*args, **kwargs)

    monkeypatch.setattr(transactions, "change", demoted_first)

    response = client_as(chief).post(url("flag", root), {"flag": "is_active", "value": "0"}, follow=True)

    assert REFUSED in messages_of(response)
    assert store.get_account(root.id).is_active is True


def test_a_deletion_by_a_superuser_demoted_meanwhile_is_refused(root, chief):
    read = store.get_account(root.id)
    store.update_account(store.get_account(chief.id), is_superuser=False)

    with pytest.raises(ActorRefused):
        store.delete_account(read, origin=timeline.Origin(actor=chief.id))

    assert store.get_account(root.id) is not None


def test_a_superuser_acting_on_their_own_account_sends_no_check_of_it(root):
    client = client_as(root)

    client.post(url("username", root), {"username": "countess"})

    assert store.get_account(root.id).username == "countess"


def test_the_command_line_is_still_the_way_back_in(root, monkeypatch):
    monkeypatch.setenv("DJANGO_STAFF_PASSWORD", NEW_PASSWORD)

    status, out, _ = run_command(
        "accounts_createstaff", "--noinput", "--email", "new@example.com", "--username", "newstaff"
    )

    assert status == 0, out
    assert store.get_by_username("newstaff").is_staff
