"""Staff actions are sensitive actions: a staff session whose last proof of identity is
older than ``ACCOUNTS_REAUTHENTICATION_TIMEOUT`` changes nothing, on any account (its own
included), until the staff member confirms who they are on the reauthentication page; then
it comes back to the page it left."""

import time
from urllib.parse import urlencode

import pytest
from django.contrib.auth.hashers import make_password
from django.urls import reverse

from accounts import store
from tests.mfa import add_passkey
from tests.staff import client_as, make_account
from tests.web import PASSWORD

pytestmark = pytest.mark.dynamodb_local

REAUTHENTICATE = "/accounts/mfa/reauthenticate/"


def age(client, seconds):
    """Make the session's last proof of identity ``seconds`` old."""
    session = client.session
    session["accounts_authenticated_at"] = int(time.time()) - seconds
    session.save()


@pytest.fixture
def boss(ddb):
    """A staff account with a password, so that it can reauthenticate."""
    return make_account("boss@example.com", "boss", staff=True, password=make_password(PASSWORD))


@pytest.fixture
def stale_staff(boss):
    """A client logged in as :func:`boss` 301 seconds ago (the default timeout is 300)."""
    client = client_as(boss)
    age(client, 301)
    return client


@pytest.fixture
def ada(ddb):
    return make_account("ada@example.com", "ada", password=make_password(PASSWORD), totp_secret="JBSWY3DPEHPK3PXP")


def url(name, account, *args):
    return reverse(f"staff:{name}", args=[account.id, *args])


def asks_to_reauthenticate(response, back_to):
    return response.status_code == 302 and response["Location"] == f"{REAUTHENTICATE}?{urlencode({'next': back_to})}"


# Every staff POST that changes an account, with the form it sends.
CHANGES = {
    "email": {"email": "attacker@example.net"},
    "username": {"username": "mallory"},
    "password": {"new_password1": "Another-Long-Pass-42", "new_password2": "Another-Long-Pass-42"},
    "flag": {"flag": "is_active", "value": "0"},
    "end_sessions": {},
    "verification": {"action": "verify"},
    "delete": {},
    "totp_remove": {},
}


@pytest.mark.parametrize("name", sorted(CHANGES))
def test_a_stale_staff_session_changes_nothing_and_is_sent_to_reauthenticate(stale_staff, ada, name):
    before = store.get_account(ada.id)

    response = stale_staff.post(url(name, ada), CHANGES[name])

    assert asks_to_reauthenticate(response, url("account", ada))
    after = store.get_account(ada.id)
    assert after is not None
    assert (after.email, after.username, after.password, after.is_active, after.totp_secret) == (
        before.email,
        before.username,
        before.password,
        before.is_active,
        before.totp_secret,
    )


def test_a_stale_staff_session_cannot_remove_a_passkey(stale_staff, ada):
    credential, _ = add_passkey(client_as(ada))
    ada = store.get_account(ada.id)

    response = stale_staff.post(url("passkey_remove", ada, credential.b64_id))

    assert asks_to_reauthenticate(response, url("account", ada))
    assert store.get_account(ada.id).passkeys == {credential.b64_id}


@pytest.mark.parametrize("name", ["email", "password", "totp_remove"])
def test_a_stale_staff_session_cannot_change_its_own_account_either(stale_staff, boss, name):
    response = stale_staff.post(url(name, boss), CHANGES[name])

    assert asks_to_reauthenticate(response, url("account", boss))
    assert store.get_account(boss.id).password == boss.password


@pytest.mark.parametrize("name", ["flag", "delete", "totp_remove"])
def test_a_stale_staff_session_is_asked_to_reauthenticate_before_a_confirmation_page(stale_staff, ada, name):
    target = url(name, ada)
    query = "?flag=is_active&value=0" if name == "flag" else ""

    response = stale_staff.get(target + query)

    assert asks_to_reauthenticate(response, target + query)


@pytest.mark.parametrize("name", ["locks/run/", "locks/repair/", "locks/repair-all/"])
def test_a_stale_staff_session_cannot_run_or_repair_the_lock_audit(stale_staff, name):
    response = stale_staff.post(f"/staff/{name}")

    assert asks_to_reauthenticate(response, "/staff/locks/")


def test_after_reauthenticating_the_staff_member_comes_back_and_the_change_goes_through(stale_staff, ada):
    response = stale_staff.post(url("email", ada), CHANGES["email"])
    back = response["Location"]

    confirmed = stale_staff.post(back, {"password": PASSWORD})
    assert confirmed["Location"] == url("account", ada)
    changed = stale_staff.post(url("email", ada), CHANGES["email"])

    assert changed.status_code == 302 and changed["Location"] == url("account", ada)
    assert store.get_account(ada.id).email == "attacker@example.net"


def test_reading_an_account_needs_no_fresh_proof(stale_staff, ada):
    assert stale_staff.get(url("account", ada)).status_code == 200
    assert stale_staff.get("/staff/").status_code == 200
    assert stale_staff.get("/staff/locks/").status_code == 200


def test_the_staff_timeout_is_the_reauthentication_setting(settings, stale_staff, ada):
    settings.ACCOUNTS_REAUTHENTICATION_TIMEOUT = 3600

    response = stale_staff.post(url("username", ada), CHANGES["username"])

    assert response["Location"] == url("account", ada)
    assert store.get_account(ada.id).username == "mallory"
