"""Staff changes to an account, as issue 26 (finding 1) asks: an address set by staff is
unverified until its mailbox confirms it (or staff mark it verified), the address as it was
before each change is told, and every change is logged and signalled with the staff
member who made it."""

import logging

import pytest
from django.contrib.auth.hashers import make_password
from django.test import Client

from accounts import signals, store
from tests.mail import link_in, mails_to, path_of
from tests.mfa import enable_totp
from tests.seeding import read_lock
from tests.staff import boss, make_account, staff_client  # noqa: F401 (fixtures)
from tests.web import OTHER_PASSWORD, PASSWORD, signed_up_client

pytestmark = pytest.mark.dynamodb_local


@pytest.fixture
def ada(ddb):
    return make_account("ada@example.com", "ada", password=make_password(PASSWORD), email_verified=True)


@pytest.fixture
def staff_actions():
    """The ``staff_changed_account`` signals sent during the test: ``(staff id, account id, action)``."""
    received = []

    def receive(sender, staff, account, action, **kwargs):
        received.append((staff.pk, account.id, action))

    signals.staff_changed_account.connect(receive)
    yield received
    signals.staff_changed_account.disconnect(receive)


def url(name, account):
    return f"/staff/accounts/{account.id}/{name}/"


def test_an_address_set_by_staff_is_unverified_holds_no_lock_and_gets_a_verification_link(staff_client, ada):
    staff_client.post(url("email", ada), {"email": "mallory@example.com"})

    account = store.get_account(ada.id)
    assert account.email == "mallory@example.com" and account.email_verified is False
    assert read_lock("UNIQ#EMAIL#mallory@example.com") == (False, None)
    assert read_lock("UNIQ#EMAIL#ada@example.com") == (False, None)
    (link_mail,) = mails_to("mallory@example.com")
    assert "/accounts/verify/" in link_in(link_mail)


def test_the_new_mailbox_confirming_gives_the_address_its_lock(staff_client, ada):
    staff_client.post(url("email", ada), {"email": "lovelace@example.com"})
    (link_mail,) = mails_to("lovelace@example.com")

    Client().post(path_of(link_in(link_mail)))

    assert store.get_by_email("lovelace@example.com").PK == ada.PK


def test_the_old_address_is_told_that_staff_changed_it(staff_client, ada):
    staff_client.post(url("email", ada), {"email": "mallory@example.com"})

    (notice,) = mails_to("ada@example.com")
    assert "mallory@example.com" in notice.body and "staff" in notice.body


def test_staff_cannot_set_an_address_another_verified_account_holds(staff_client, ada, boss):
    response = staff_client.post(url("email", ada), {"email": "BOSS@example.com"})

    assert response.context["email_form"].has_error("email", "email_taken")
    assert store.get_account(ada.id).email == "ada@example.com"


def test_staff_marking_it_verified_is_recorded(staff_client, ada, boss, staff_actions, caplog):
    staff_client.post(url("email", ada), {"email": "lovelace@example.com"})

    with caplog.at_level(logging.INFO, logger="accounts.staff"):
        staff_client.post(url("verification", ada), {"action": "verify"})

    assert store.get_by_email("lovelace@example.com").PK == ada.PK
    assert (boss.id, ada.id, "email_verified") in staff_actions
    assert f"(staff id {boss.id})" in caplog.text and ada.id in caplog.text


def test_a_password_set_by_staff_is_told_to_the_address(staff_client, ada):
    staff_client.post(url("password", ada), {"new_password1": OTHER_PASSWORD, "new_password2": OTHER_PASSWORD})

    (notice,) = mails_to("ada@example.com")
    assert "password" in notice.subject.lower() and "staff" in notice.body


def test_a_username_set_by_staff_is_told_to_the_address(staff_client, ada):
    staff_client.post(url("username", ada), {"username": "lovelace"})

    (notice,) = mails_to("ada@example.com")
    assert "lovelace" in notice.body and "staff" in notice.body


@pytest.mark.parametrize(
    "name, data, action",
    [
        ("email", {"email": "lovelace@example.com"}, "email"),
        ("username", {"username": "lovelace"}, "username"),
        ("password", {"new_password1": OTHER_PASSWORD, "new_password2": OTHER_PASSWORD}, "password"),
        ("flags", {"flag": "is_active", "value": "0"}, "is_active"),
        ("sessions/end", {}, "sessions_ended"),
        ("delete", {}, "deleted"),
    ],
)
def test_every_staff_change_is_logged_and_signalled_with_the_staff_member(
    staff_client, ada, boss, staff_actions, caplog, name, data, action
):
    with caplog.at_level(logging.INFO, logger="accounts.staff"):
        response = staff_client.post(url(name, ada), data)

    assert response.status_code == 302
    assert staff_actions == [(boss.id, ada.id, action)]
    (record,) = [record for record in caplog.records if record.name == "accounts.staff"]
    assert f"(staff id {boss.id})" in record.getMessage() and ada.id in record.getMessage()


def test_a_staff_removal_of_an_authenticator_is_signalled(staff_client, boss, staff_actions):
    enable_totp(signed_up_client())
    ada = store.get_by_username("ada")

    staff_client.post(url("totp/remove", ada))

    assert staff_actions == [(boss.id, ada.id, "authenticator_removed")]
