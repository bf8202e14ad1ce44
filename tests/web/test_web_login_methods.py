"""``ACCOUNTS_LOGIN_METHODS``: what a login may name an account by, on the login page and in
Django's ``authenticate()``, whatever the sign-up asked for."""

import pytest
from django.contrib.auth import authenticate
from django.test import Client

from accounts.models import User
from tests.web import PASSWORD, login, signed_up_client

pytestmark = pytest.mark.dynamodb_local


def login_form(response):
    return response.context["form"]


def test_by_default_a_login_is_by_username_or_address(ddb):
    signed_up_client()

    assert login_form(Client().get("/accounts/login/")).fields["username"].label == "Username or email address"
    assert login(Client(), "ada").status_code == 302
    assert login(Client(), "ada@example.com").status_code == 302
    assert (User.USERNAME_FIELD, User.REQUIRED_FIELDS) == ("username", ["email"])


def test_by_username_only_an_address_names_nobody(ddb, settings):
    signed_up_client()
    settings.ACCOUNTS_LOGIN_METHODS = {"username"}

    refused = login(Client(), "ada@example.com")

    assert login_form(Client().get("/accounts/login/")).fields["username"].label == "Username"
    assert login_form(refused).non_field_errors() == [
        "Please enter a correct username and password. Note that the password is case-sensitive."
    ]
    assert login(Client(), "ADA").status_code == 302
    assert authenticate(username="ada@example.com", password=PASSWORD) is None


def test_by_address_only_a_username_names_nobody_though_accounts_have_one(ddb, settings):
    signed_up_client()
    settings.ACCOUNTS_LOGIN_METHODS = {"email"}

    refused = login(Client(), "ada")

    assert login_form(refused).has_error("username", "invalid")
    assert login(Client(), "ada@example.com").status_code == 302
    assert authenticate(username="ada", password=PASSWORD) is None
    # Django's natural key is the address every account has; createsuperuser asks for the name too.
    assert (User.USERNAME_FIELD, User.REQUIRED_FIELDS) == ("email", ["username"])
    assert User.objects.get_by_natural_key("ada@example.com").username == "ada"


def test_login_by_code_looks_the_account_up_by_the_login_methods(ddb, settings, mailoutbox):
    signed_up_client()
    settings.ACCOUNTS_LOGIN_METHODS = {"email"}

    Client().post("/accounts/code/", {"login": "ada"})
    assert mailoutbox == []
    Client().post("/accounts/code/", {"login": "ada@example.com"})
    assert [message.to for message in mailoutbox] == [["ada@example.com"]]
