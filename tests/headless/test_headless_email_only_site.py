"""The API of a site without usernames (``ACCOUNTS_SIGNUP_FIELDS = ["email*", "password1*"]``,
``ACCOUNTS_LOGIN_METHODS = {"email"}``), as django-allauth answers for one: its React app
signs up with ``{email, password}`` only, the user object has no ``username``, and ``config``
says the site logs in by email."""

import pytest

from accounts import store
from accounts.providers.forms import ProviderSignupForm
from tests.headless import APIClient
from tests.headless.test_headless_passkeys import create
from tests.invariants import violations
from tests.signup_fields import email_only  # noqa: F401 (a fixture)
from tests.web import PASSWORD

pytestmark = pytest.mark.dynamodb_local


def test_config_says_the_site_logs_in_by_email(email_only):
    account = APIClient().get("config").json()["data"]["account"]

    assert account["login_methods"] == ["email"]
    assert account["authentication_method"] == "email"
    assert account["is_open_for_signup"] is True


def test_config_by_default_lists_both_login_methods(ddb):
    account = APIClient().get("config").json()["data"]["account"]

    assert (account["login_methods"], account["authentication_method"]) == (["email", "username"], "username_email")


def test_config_of_a_site_logging_in_by_username_only(ddb, settings):
    settings.ACCOUNTS_LOGIN_METHODS = {"username"}

    account = APIClient().get("config").json()["data"]["account"]

    assert (account["login_methods"], account["authentication_method"]) == (["username"], "username")


def test_the_react_apps_sign_up_of_email_and_password_logs_in_a_user_without_username(email_only):
    signed_up = APIClient().post("auth/signup", {"email": "ada@example.com", "password": PASSWORD})

    assert signed_up.status_code == 200, signed_up.content
    user = signed_up.json()["data"]["user"]
    assert "username" not in user
    assert (user["email"], user["display"]) == ("ada@example.com", "ada@example.com")
    assert store.get_by_email("ada@example.com").username is None


def test_a_username_sent_to_sign_up_is_ignored_as_allauth_ignores_it(email_only):
    signed_up = APIClient().post("auth/signup", {"email": "ada@example.com", "username": "ada", "password": PASSWORD})

    assert signed_up.status_code == 200, signed_up.content
    assert "username" not in signed_up.json()["data"]["user"]
    assert store.get_by_email("ada@example.com").username is None


def test_a_sign_up_without_an_address_is_an_email_error(email_only):
    refused = APIClient().post("auth/signup", {"password": PASSWORD})

    assert refused.status_code == 400
    assert refused.json()["errors"] == [{"message": "This field is required.", "code": "required", "param": "email"}]


def test_login_is_by_email_and_a_username_is_not_read(email_only):
    APIClient().post("auth/signup", {"email": "ada@example.com", "password": PASSWORD})

    by_email = APIClient().post("auth/login", {"email": "ADA@example.com", "password": PASSWORD})
    by_username = APIClient().post("auth/login", {"username": "ada@example.com", "password": PASSWORD})

    assert by_email.status_code == 200, by_email.content
    assert "username" not in by_email.json()["data"]["user"]
    assert by_username.status_code == 400
    assert [(error["param"], error["code"]) for error in by_username.json()["errors"]] == [("email", "required")]


def test_a_wrong_password_names_the_address(email_only):
    APIClient().post("auth/signup", {"email": "ada@example.com", "password": PASSWORD})

    refused = APIClient().post("auth/login", {"email": "ada@example.com", "password": "wrong"})

    assert refused.status_code == 400
    assert refused.json()["errors"][0]["message"].startswith("Please enter a correct email address and password.")


def test_the_session_of_a_user_without_username_has_none(email_only):
    app = APIClient()
    app.post("auth/signup", {"email": "ada@example.com", "password": PASSWORD})

    user = app.get("auth/session").json()["data"]["user"]

    assert "username" not in user and user["display"] == "ada@example.com"


def test_a_passkey_sign_up_without_username_names_the_passkey_by_the_address(email_only, settings):
    settings.ACCOUNTS_PASSKEY_SIGNUP = True
    app = APIClient("app")
    assert app.post("auth/webauthn/signup", {"email": "ada@example.com"}).status_code == 401

    options = app.get("auth/webauthn/signup").json()
    assert options["data"]["creation_options"]["publicKey"]["user"]["name"] == "ada@example.com"
    credential, created = create(options)
    done = app.request("PUT", "auth/webauthn/signup", {"credential": created, "name": "Phone"})

    assert done.status_code == 200, done.content
    assert "username" not in done.json()["data"]["user"]
    ada = store.get_by_email("ada@example.com")
    assert (ada.username, ada.passkeys) == (None, {credential.b64_id})
    assert violations() == []


def test_the_provider_sign_up_form_asks_for_no_username(email_only):
    form = ProviderSignupForm(data={"email": "ada@example.com", "username": "ada"})

    assert form.is_valid(), form.errors
    assert list(form.fields) == ["email"]
    assert form.cleaned_data["username"] == ""
