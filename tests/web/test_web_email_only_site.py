"""A site without usernames (``ACCOUNTS_SIGNUP_FIELDS = ["email*", "password1*"]``,
``ACCOUNTS_LOGIN_METHODS = {"email"}``): no page asks for, shows or locks a username, and
Django's user model takes the address as its natural key."""

import os
import re
from unittest import mock

import pytest
from django.contrib.auth import authenticate
from django.core.management import CommandError, call_command
from django.test import Client

from accounts import store
from accounts.models import User
from accounts.uniqueness import LOCK_PREFIX
from tests.invariants import scan_everything, violations
from tests.mail import mails_to
from tests.signup_fields import email_only  # noqa: F401 (a fixture)
from tests.staff import run_command
from tests.web import PASSWORD, csrf_token_in, messages_of, stored_accounts
from tests.web.test_permissions import admin_site  # noqa: F401 (a fixture)

pytestmark = pytest.mark.dynamodb_local


def sign_up(client, email="ada@example.com", password=PASSWORD, **extra):
    """Post the sign-up page as a browser fills it on this site: the address, the password once."""
    page = client.get("/accounts/signup/")
    data = {"email": email, "password1": password, "token": page.context["form"]["token"].value(), **extra}
    return client.post("/accounts/signup/", data)


def signed_up(email="ada@example.com"):
    client = Client()
    response = sign_up(client, email)
    assert response.status_code == 302, response.content.decode()
    return client


def lock_keys_in_table():
    return sorted(raw["PK"]["S"] for raw in scan_everything() if raw["PK"]["S"].startswith(LOCK_PREFIX))


def input_names(html, action):
    """The names of the inputs of the form posting to ``action`` on the page ``html``."""
    form = re.search(rf'<form method="post" action="{action}".*?</form>', html, re.S).group(0)
    return re.findall(r'<input[^>]* name="([^"]+)"', form)


def visible_text(html):
    """What a page shows: its text without tags (their attributes name fields, not people)."""
    return re.sub(r"<[^>]+>", " ", html)


def test_the_signup_page_asks_for_the_address_and_the_password_once(email_only):
    page = Client().get("/accounts/signup/")

    html = page.content.decode()
    assert list(page.context["form"].fields) == ["email", "password1", "token"]
    assert input_names(html, "/accounts/signup/") == ["csrfmiddlewaretoken", "email", "password1", "token"]
    assert "sername" not in html


def test_a_sign_up_creates_an_account_without_a_username_or_its_locks(email_only):
    response = sign_up(Client(), username="ada")

    assert response.status_code == 302
    [account] = stored_accounts()
    assert account.username is None
    assert "username" not in account.serialize(null_check=False)
    assert lock_keys_in_table() == ["UNIQ#EMAIL#ada@example.com"]
    assert violations() == []


def test_the_same_address_twice_is_an_email_error_only(email_only):
    signed_up()

    form = sign_up(Client()).context["form"]

    assert form.errors.as_data()["email"][0].code == "email_taken"
    assert set(form.errors) == {"email"}


def test_a_signup_missing_the_password_says_so_on_its_one_field(email_only):
    form = sign_up(Client(), password="").context["form"]

    assert form.has_error("password1", "required")
    assert "password2" not in form.fields


def test_the_welcome_and_login_messages_name_the_address(email_only):
    client = Client()
    response = sign_up(client)
    assert messages_of(client.get(response["Location"])) == ["Welcome, ada@example.com! Your account is ready."]

    client.post("/accounts/logout/")
    logged_in = client.post("/accounts/login/", {"username": "ada@example.com", "password": PASSWORD}, follow=True)
    assert "You are logged in as ada@example.com." in messages_of(logged_in)


def test_the_login_form_asks_for_an_email_address(email_only):
    page = Client().get("/accounts/login/")

    html = page.content.decode()
    assert page.context["form"].fields["username"].label == "Email address"
    assert re.search(r'<input type="email" name="username"[^>]*autocomplete="email"', html)
    assert "sername" not in visible_text(html)


def test_login_by_address_works_and_anything_else_is_refused_naming_the_address(email_only):
    signed_up()

    assert Client().post("/accounts/login/", {"username": "ADA@example.com", "password": PASSWORD}).status_code == 302
    not_an_address = Client().post("/accounts/login/", {"username": "ada", "password": PASSWORD})
    wrong = Client().post("/accounts/login/", {"username": "ada@example.com", "password": "wrong"})

    assert not_an_address.context["form"].has_error("username", "invalid")
    assert wrong.context["form"].non_field_errors() == [
        "Please enter a correct email address and password. Note that the password is case-sensitive."
    ]


def test_the_profile_shows_no_username_and_the_username_page_is_gone(email_only):
    client = signed_up()

    profile = client.get("/accounts/profile/").content.decode()

    assert "Username" not in profile
    assert "/accounts/username/" not in profile
    assert client.get("/accounts/username/").status_code == 404
    assert client.post("/accounts/username/", {"username": "ada", "password": PASSWORD}).status_code == 404


def test_the_deletion_page_names_the_address_only(email_only):
    client = signed_up()

    page = client.get("/accounts/delete/").content.decode()

    assert "This deletes the account <strong>ada@example.com</strong> for good." in page
    assert "username" not in page


def test_mails_greet_the_person_by_their_address(email_only):
    signed_up()

    Client().post("/accounts/password/reset/", {"email": "ada@example.com"})

    [reset] = mails_to("ada@example.com")
    assert reset.body.startswith("Hello ada@example.com,")
    assert "None" not in reset.body


def test_the_login_code_page_asks_for_an_email_address(email_only):
    page = Client().get("/accounts/code/")

    assert page.context["form"].fields["login"].label == "Email address"


def test_djangos_user_model_takes_the_address_as_its_natural_key(email_only):
    signed_up()

    assert (User.USERNAME_FIELD, User.REQUIRED_FIELDS) == ("email", [])
    user = User.objects.get_by_natural_key("ADA@example.com")
    assert (user.get_username(), str(user), user.display_name) == ("ada@example.com",) * 3
    assert authenticate(username="ada@example.com", password=PASSWORD).pk == user.pk
    assert authenticate(email="ada@example.com", password=PASSWORD).pk == user.pk
    assert User.objects.get(email="ada@example.com").username is None


def test_create_user_takes_an_address_and_a_password(email_only):
    user = User.objects.create_user(email="grace@example.com", password=PASSWORD)

    assert user.username is None
    assert lock_keys_in_table() == ["UNIQ#EMAIL#grace@example.com"]
    assert User.objects.get_by_natural_key("grace@example.com").pk == user.pk


def test_createsuperuser_asks_for_the_address_only(email_only):
    with mock.patch.dict(os.environ, {"DJANGO_SUPERUSER_PASSWORD": PASSWORD}):
        call_command("createsuperuser", "--noinput", "--email", "root@example.com", verbosity=0)

    boss = User.objects.get_by_natural_key("root@example.com")
    assert (boss.is_staff, boss.is_superuser, boss.username) == (True, True, None)
    assert lock_keys_in_table() == ["UNIQ#EMAIL#root@example.com"]


def test_createstaff_takes_the_address_and_refuses_a_username(email_only):
    with mock.patch.dict(os.environ, {"DJANGO_STAFF_PASSWORD": PASSWORD}):
        status, out, _ = run_command("accounts_createstaff", "--noinput", "--email", "staff@example.com")
        with pytest.raises(CommandError, match="no usernames"):
            run_command("accounts_createstaff", "--noinput", "--email", "other@example.com", "--username", "other")

    assert status == 0 and "Staff account staff@example.com created" in out
    assert [account.email for account in stored_accounts()] == ["staff@example.com"]


def test_a_csrf_protected_signup_form_carries_no_username(email_only):
    client = Client(enforce_csrf_checks=True)
    page = client.get("/accounts/signup/")
    data = {
        "csrfmiddlewaretoken": csrf_token_in(page),
        "email": "ada@example.com",
        "password1": PASSWORD,
        "token": page.context["form"]["token"].value(),
    }

    assert client.post("/accounts/signup/", data).status_code == 302
    assert store.get_by_email("ada@example.com").username is None


def test_a_sign_up_with_a_registered_address_tells_its_owner_to_log_in_with_the_address(email_only, settings):
    signed_up()
    settings.ACCOUNTS_PREVENT_ENUMERATION = True

    assert sign_up(Client()).status_code == 302

    notice = mails_to("ada@example.com")[-1]
    assert "log in with this address" in notice.body
    assert "username" not in notice.body


def test_djangos_admin_logs_staff_in_by_address(email_only, admin_site):
    User.objects.create_user(email="boss@example.com", password=PASSWORD, is_staff=True, is_superuser=True)
    client = Client()

    login_page = client.get("/admin/login/").content.decode()
    logged_in = client.post("/admin/login/?next=/admin/", {"username": "boss@example.com", "password": PASSWORD})

    assert "Email address" in login_page
    assert logged_in.status_code == 302 and logged_in["Location"] == "/admin/"
    assert "boss@example.com" in client.get("/admin/").content.decode()


def test_in_mode_optional_an_unverified_account_logs_in_again_once_verified(email_only, settings):
    # The limit accounts.W032 warns of: an unverified address is not the account's yet.
    settings.ACCOUNTS_EMAIL_VERIFICATION = "optional"
    client = Client()
    assert sign_up(client).status_code == 302
    client.post("/accounts/logout/")

    refused = client.post("/accounts/login/", {"username": "ada@example.com", "password": PASSWORD})
    store.verify_email(stored_accounts()[0])

    assert refused.status_code == 200
    assert client.post("/accounts/login/", {"username": "ada@example.com", "password": PASSWORD}).status_code == 302


def test_the_password_asked_once_meets_the_password_validators(email_only):
    too_common = sign_up(Client(), password="password").context["form"]
    like_the_address = sign_up(Client(), password="ada@example.com").context["form"]

    assert too_common.has_error("password1", "password_too_common")
    assert like_the_address.has_error("password1", "password_too_similar")
    assert stored_accounts() == []


def test_djangos_changepassword_finds_the_account_by_its_address(email_only):
    User.objects.create_user(email="ada@example.com", password=PASSWORD)

    with mock.patch("getpass.getpass", return_value="Marble-Harbor-Lantern-3"):
        call_command("changepassword", "ADA@example.com", verbosity=0)

    assert authenticate(email="ada@example.com", password="Marble-Harbor-Lantern-3") is not None
