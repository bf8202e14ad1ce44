"""An optional username (``ACCOUNTS_SIGNUP_FIELDS = ["email*", "username", "password1*"]``):
an account may have none, and then holds no lock for it (the constraint's ``allow_empty``);
its owner may add one later, change it, or remove it, each move of its locks one transaction."""

import pytest
from django.test import Client

from accounts import store
from accounts.uniqueness import LOCK_PREFIX
from tests.invariants import scan_everything, violations
from tests.mail import mails_to
from tests.web import PASSWORD, login, messages_of

pytestmark = pytest.mark.dynamodb_local


@pytest.fixture
def optional_username(ddb, settings):
    settings.ACCOUNTS_SIGNUP_FIELDS = ["email*", "username", "password1*", "password2*"]
    return ddb


def sign_up(client, email="ada@example.com", username=""):
    page = client.get("/accounts/signup/")
    token = page.context["form"]["token"].value()
    data = {"email": email, "username": username, "password1": PASSWORD, "password2": PASSWORD, "token": token}
    return client.post("/accounts/signup/", data)


def lock_keys_in_table():
    return sorted(raw["PK"]["S"] for raw in scan_everything() if raw["PK"]["S"].startswith(LOCK_PREFIX))


def test_the_signup_form_says_the_username_is_optional(optional_username):
    form = Client().get("/accounts/signup/").context["form"]

    assert list(form.fields) == ["email", "username", "password1", "password2", "token"]
    assert form.fields["username"].required is False
    assert form.fields["username"].label == "Username (optional)"


def test_an_account_without_a_username_takes_no_lock_for_it(optional_username):
    assert sign_up(Client()).status_code == 302
    assert sign_up(Client(), "grace@example.com").status_code == 302

    assert store.get_by_email("ada@example.com").username is None
    assert lock_keys_in_table() == ["UNIQ#EMAIL#ada@example.com", "UNIQ#EMAIL#grace@example.com"]
    assert violations() == []


def test_a_username_given_takes_its_locks_and_logs_in(optional_username):
    assert sign_up(Client(), username="ada").status_code == 302

    assert lock_keys_in_table() == ["UNIQ#EMAIL#ada@example.com", "UNIQ#HANDLE#ada", "UNIQ#HANDLE_SKEL#ada"]
    assert login(Client(), "ada").status_code == 302
    taken = sign_up(Client(), "grace@example.com", "ADA").context["form"]
    assert taken.has_error("username", "username_taken")


def test_the_owner_adds_then_removes_a_username_each_in_one_move_of_its_locks(optional_username):
    client = Client()
    sign_up(client)

    assert client.get("/accounts/username/").context["form"].fields["username"].required is False
    added = client.post("/accounts/username/", {"username": "ada", "password": PASSWORD}, follow=True)
    assert "Your username is now ada." in messages_of(added)
    assert "UNIQ#HANDLE#ada" in lock_keys_in_table()
    assert "has a username now: ada" in mails_to("ada@example.com")[-1].body

    removed = client.post("/accounts/username/", {"username": "", "password": PASSWORD}, follow=True)

    assert "Your account has no username now." in messages_of(removed)
    assert store.get_by_email("ada@example.com").username is None
    assert lock_keys_in_table() == ["UNIQ#EMAIL#ada@example.com"]
    assert "has no username now; it was ada." in mails_to("ada@example.com")[-1].body
    assert violations() == []


def test_the_profile_shows_a_dash_for_no_username(optional_username):
    client = Client()
    sign_up(client)

    profile = client.get("/accounts/profile/").content.decode()

    assert "<dt>Username</dt>" in profile
    assert "None" not in profile


def test_a_required_username_is_still_required_by_default(ddb):
    form = sign_up(Client()).context["form"]

    assert form.has_error("username", "required")
