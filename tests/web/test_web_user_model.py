"""The unmanaged User model: built from the account item, written only through the store."""

import pytest
from django.conf import settings
from django.contrib.auth import get_user_model
from django.contrib.auth.hashers import get_hasher, make_password
from django.db import NotSupportedError
from django.test import Client

import project.settings
from accounts import store
from accounts.models import User
from accounts.tables import dynamodb_client
from tests.support import answer_before_call, cancellation
from tests.web import OTHER_PASSWORD, PASSWORD, login


@pytest.fixture
def account(ddb):
    account, _ = store.signup("ada@example.com", "Ada", make_password(PASSWORD))
    return account


def test_auth_user_model_is_the_unmanaged_accounts_user():
    assert settings.AUTH_USER_MODEL == "accounts.User"
    assert get_user_model() is User
    assert User._meta.managed is False
    assert User._meta.pk.name == "id"


def test_user_has_no_last_login_field():
    assert "last_login" not in [field.name for field in User._meta.get_fields()]


def test_from_account_mirrors_the_account_item(account):
    user = User.from_account(account)

    assert user.pk == account.id
    assert (user.email, user.username, user.password) == ("ada@example.com", "Ada", account.password)
    assert user.is_active is True and user.is_staff is False
    assert user.account is account
    assert user.check_password(PASSWORD)


def test_orm_queries_are_refused_with_a_pointer_to_the_store():
    with pytest.raises(NotSupportedError, match="accounts.store"):
        User.objects.filter(username="ada").first()


def test_saving_a_user_not_read_from_dynamodb_is_refused():
    with pytest.raises(NotSupportedError, match="accounts.store.signup"):
        User(id="x", email="ada@example.com", username="ada").save()


def test_save_stores_staff_status_through_the_store(account):
    user = User.from_account(account)
    user.is_staff = True

    user.save()

    assert store.get_account(account.id).is_staff is True


def test_save_refuses_an_email_change(account):
    user = User.from_account(account)
    user.email = "new@example.com"

    with pytest.raises(NotSupportedError, match="change_email"):
        user.save()
    assert store.get_account(account.id).email == "ada@example.com"


def test_set_password_and_save_changes_the_session_hash(account):
    user = User.from_account(account)
    before = user.get_session_auth_hash()

    user.set_password(OTHER_PASSWORD)
    user.save(update_fields=["password"])

    assert user.get_session_auth_hash() != before
    assert User.from_account(store.get_account(account.id)).check_password(OTHER_PASSWORD)


def test_delete_removes_the_account_and_frees_its_values(account):
    User.from_account(account).delete()

    assert store.get_account(account.id) is None
    assert store.get_by_email("ada@example.com") is None
    assert store.get_by_username("ada") is None


@pytest.mark.argon2
def test_argon2_is_the_default_hasher_and_pbkdf2_still_verifies():
    assert project.settings.PASSWORD_HASHERS[:2] == [
        "django.contrib.auth.hashers.Argon2PasswordHasher",
        "django.contrib.auth.hashers.PBKDF2PasswordHasher",
    ]
    assert settings.PASSWORD_HASHERS == project.settings.PASSWORD_HASHERS
    assert get_hasher().algorithm == "argon2"


@pytest.mark.argon2
def test_login_with_an_old_pbkdf2_hash_upgrades_it_to_argon2(ddb):
    account, _ = store.signup("ada@example.com", "ada", make_password(PASSWORD, hasher="pbkdf2_sha256"))

    response = login(Client(), "ada")

    assert response.status_code == 302
    assert store.get_account(account.id).password.startswith("argon2$")


def test_hash_upgrade_that_loses_a_race_still_logs_in_and_keeps_the_session(ddb):
    account, _ = store.signup("ada@example.com", "ada", make_password(PASSWORD, hasher="pbkdf2_sha256"))
    answer_before_call(dynamodb_client(), [cancellation("ConditionalCheckFailed")])
    client = Client()

    response = login(client, "ada")

    assert response.status_code == 302
    assert store.get_account(account.id).password.startswith("pbkdf2_sha256$")
    assert client.get("/accounts/profile/").status_code == 200
