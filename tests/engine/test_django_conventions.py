"""Django's user conventions on DynamoDB: User.objects, createsuperuser, changepassword,
extra attributes on the user, force_login."""

import pytest
from django.contrib.auth import authenticate
from django.contrib.auth.management.commands import changepassword
from django.core.exceptions import ValidationError
from django.core.management import CommandError, call_command
from django.db import NotSupportedError
from django.test import Client

from accounts import store
from accounts.models import User
from tests.web import OTHER_PASSWORD, PASSWORD

pytestmark = pytest.mark.dynamodb_local

PHONE_FIELDS = {
    "email": {"namespace": "EMAIL"},
    "username": {"namespace": "HANDLE"},
    "phone": {"namespace": "PHONE", "normalizer": "tests.hostproject.phones.normalize_phone", "allow_empty": True},
}


def test_create_user_stores_an_account_with_its_locks_and_returns_its_user(ddb):
    user = User.objects.create_user("ada", "Ada@EXAMPLE.com", PASSWORD)

    account = store.get_by_email("ada@example.com")
    assert user.pk == account.id and user.account.PK == account.PK
    assert (account.email, account.username, account.is_staff, account.is_active) == (
        "Ada@example.com",
        "ada",
        False,
        True,
    )
    assert store.get_by_username("ADA").id == account.id
    assert authenticate(username="ada", password=PASSWORD).pk == account.id


def test_create_user_without_a_password_stores_an_unusable_one(ddb):
    user = User.objects.create_user("ada", "ada@example.com")

    assert not user.has_usable_password()
    assert authenticate(username="ada", password="") is None


def test_create_user_with_a_taken_email_raises_the_forms_error_and_writes_nothing(ddb):
    User.objects.create_user("ada", "ada@example.com", PASSWORD)

    with pytest.raises(ValidationError) as raised:
        User.objects.create_user("grace", "ADA@example.com", PASSWORD)

    assert [error.code for error in raised.value.error_dict["email"]] == ["email_taken"]
    assert raised.value.message_dict == {"email": ["This email address is already in use."]}
    assert store.get_by_username("grace") is None


def test_create_user_applies_the_signup_forms_username_rules(ddb):
    with pytest.raises(ValidationError) as raised:
        User.objects.create_user("ada@home", "ada@example.com", PASSWORD)

    assert [error.code for error in raised.value.error_dict["username"]] == ["username_at"]
    assert store.get_by_email("ada@example.com") is None


def test_create_user_normalizes_a_full_width_username_as_the_form_does(ddb):
    user = User.objects.create_user("ａｄａ", "ada@example.com", PASSWORD)

    assert user.username == "ada"


def test_create_superuser_makes_a_staff_account(ddb):
    user = User.objects.create_superuser("boss", "boss@example.com", PASSWORD)

    assert user.is_staff and store.get_account(user.pk).is_staff


def test_get_by_natural_key_finds_the_username_in_any_case_and_raises_does_not_exist(ddb):
    created = User.objects.create_user("Ada", "ada@example.com", PASSWORD)

    assert User.objects.get_by_natural_key("ADA").pk == created.pk
    with pytest.raises(User.DoesNotExist):
        User.objects.get_by_natural_key("grace")


def test_get_by_pk_or_email(ddb):
    created = User.objects.create_user("ada", "ada@example.com", PASSWORD)

    assert User.objects.get(pk=created.pk).username == "ada"
    assert User.objects.get(email="ADA@example.com").pk == created.pk
    with pytest.raises(User.DoesNotExist):
        User.objects.get(pk="nobody")


def test_other_lookups_and_querysets_are_refused_with_a_pointer_to_the_store(ddb):
    with pytest.raises(NotSupportedError, match="accounts.store"):
        User.objects.get(is_staff=True)
    with pytest.raises(NotSupportedError, match="accounts.store"):
        User.objects.all()


def test_createsuperuser_noinput_reads_the_environment(ddb, monkeypatch):
    monkeypatch.setenv("DJANGO_SUPERUSER_USERNAME", "boss")
    monkeypatch.setenv("DJANGO_SUPERUSER_EMAIL", "boss@example.com")
    monkeypatch.setenv("DJANGO_SUPERUSER_PASSWORD", PASSWORD)

    call_command("createsuperuser", "--noinput", verbosity=0)

    account = store.get_by_username("boss")
    assert account.is_staff and account.email == "boss@example.com"
    assert authenticate(username="boss@example.com", password=PASSWORD).is_staff


def test_createsuperuser_with_a_taken_email_is_a_command_error_not_a_traceback(ddb, monkeypatch):
    User.objects.create_user("ada", "boss@example.com", PASSWORD)
    monkeypatch.setenv("DJANGO_SUPERUSER_PASSWORD", PASSWORD)

    with pytest.raises(CommandError, match="This email address is already in use."):
        call_command("createsuperuser", "--noinput", username="boss", email="boss@example.com", verbosity=0)


def test_createsuperuser_with_a_taken_username_says_so(ddb, monkeypatch):
    User.objects.create_user("boss", "ada@example.com", PASSWORD)
    monkeypatch.setenv("DJANGO_SUPERUSER_PASSWORD", PASSWORD)

    with pytest.raises(CommandError, match="already in use|taken"):
        call_command("createsuperuser", "--noinput", username="BOSS", email="boss@example.com", verbosity=0)


def test_changepassword_stores_the_new_hash(ddb, monkeypatch):
    User.objects.create_user("ada", "ada@example.com", PASSWORD)
    monkeypatch.setattr(changepassword.Command, "_get_pass", lambda self, prompt="": OTHER_PASSWORD)

    call_command("changepassword", "ADA", verbosity=0)

    assert authenticate(username="ada", password=OTHER_PASSWORD) is not None
    assert authenticate(username="ada", password=PASSWORD) is None


def test_changepassword_of_an_unknown_user_is_a_command_error(ddb):
    with pytest.raises(CommandError, match="does not exist"):
        call_command("changepassword", "nobody")


def test_force_login_with_a_created_user_opens_the_profile(ddb):
    client = Client()
    client.force_login(User.objects.create_user("ada", "ada@example.com", PASSWORD))

    assert "ada@example.com" in client.get("/accounts/profile/").content.decode()


def test_a_declared_extra_attribute_reads_as_an_attribute_of_the_user(ddb, settings):
    settings.ACCOUNTS_ACCOUNT_MODEL = "tests.hostproject.tables.MemberAccount"
    settings.ACCOUNTS_UNIQUE_FIELDS = PHONE_FIELDS
    user = User.objects.create_user("ada", "ada@example.com", PASSWORD, phone="+1 555 010 9999")

    assert user.phone == "+1 555 010 9999"
    store.update_account(user.account, phone="+44 20 7946 0000")
    assert User.objects.get(pk=user.pk).phone == "+44 20 7946 0000"
    with pytest.raises(AttributeError):
        user.nickname  # noqa: B018


def test_changing_an_extra_attribute_to_a_taken_value_raises_unique_violation(ddb, settings):
    from accounts.exceptions import UniqueViolation

    settings.ACCOUNTS_ACCOUNT_MODEL = "tests.hostproject.tables.MemberAccount"
    settings.ACCOUNTS_UNIQUE_FIELDS = PHONE_FIELDS
    User.objects.create_user("ada", "ada@example.com", PASSWORD, phone="+15550109999")
    grace = User.objects.create_user("grace", "grace@example.com", PASSWORD)

    with pytest.raises(UniqueViolation) as raised:
        store.update_account(grace.account, phone="+1 (555) 010-9999")

    assert raised.value.fields == {"phone"}
    assert User.objects.get(pk=grace.pk).phone is None
