"""ACCOUNTS_* settings: documented defaults, and every one read when used (never cached)."""

import json
import subprocess
import sys
from datetime import timedelta
from pathlib import Path

import pytest
from django import forms
from django.core.exceptions import ImproperlyConfigured
from django.test import Client, override_settings

from accounts import store
from accounts.adapter import DefaultAccountAdapter, get_adapter
from accounts.app_settings import DEFAULT_FORMS, DEFAULT_UNIQUE_FIELDS, RESERVED_USERNAMES, app_settings
from accounts.forms import LoginForm, SignupForm
from accounts.tables import Account, TableModel, account_constraints, dynamodb_client
from accounts.uniqueness import normalize_exact, normalize_text
from tests.web import PASSWORD, login, signed_up_client, signup

ROOT = Path(__file__).resolve().parents[2]
NAMES = [
    "USERNAME_BLACKLIST",
    "TABLE_NAME",
    "ENDPOINT_URL",
    "REGION",
    "CONNECT_TIMEOUT",
    "READ_TIMEOUT",
    "UNIQUE_FIELDS",
    "ACCOUNT_MODEL",
    "ADAPTER",
    "FORMS",
    "LOGIN_URL",
    "LOGIN_REDIRECT_URL",
    "SIGNUP_REDIRECT_URL",
    "LOGOUT_REDIRECT_URL",
    "DELETE_REDIRECT_URL",
]


class NewsletterSignupForm(SignupForm):
    """A host's signup form: the app's, with a field of its own."""

    newsletter = forms.BooleanField(required=False)


class HostAdapter(DefaultAccountAdapter):
    """A host adapter that picks its signup form in code instead of ACCOUNTS_FORMS."""

    def get_form_class(self, name):
        return NewsletterSignupForm if name == "signup" else super().get_form_class(name)


def app_settings_in_a_project(**project_settings):
    """Every app setting, as a fresh process configured with only ``project_settings`` reads it.

    A fresh process, because the test settings set LOGIN_URL and friends and Django cannot
    un-set a setting in a running process.
    """
    script = (
        "import json, sys\n"
        "from django.conf import settings\n"
        "settings.configure(**json.loads(sys.argv[1]))\n"
        "from accounts.app_settings import app_settings\n"
        f"print(json.dumps({{name: getattr(app_settings, name) for name in {NAMES!r}}}))\n"
    )
    result = subprocess.run(
        [sys.executable, "-c", script, json.dumps(project_settings)],
        cwd=ROOT,
        capture_output=True,
        text=True,
        check=True,
    )
    return json.loads(result.stdout)


def test_every_setting_has_its_documented_default_in_a_project_that_sets_none():
    assert app_settings_in_a_project() == {
        "TABLE_NAME": "accounts",
        "ENDPOINT_URL": None,
        "REGION": "us-east-1",
        "CONNECT_TIMEOUT": 2,
        "READ_TIMEOUT": 10,
        "UNIQUE_FIELDS": {
            "email": {"namespace": "EMAIL", "normalizer": "accounts.identifiers.normalize_email_key"},
            "username": {
                "namespace": "HANDLE",
                "normalizer": "accounts.identifiers.normalize_username_key",
                "skeleton_namespace": "HANDLE_SKEL",
            },
        },
        "USERNAME_BLACKLIST": list(RESERVED_USERNAMES),
        "ACCOUNT_MODEL": "accounts.tables.Account",
        "ADAPTER": "accounts.adapter.DefaultAccountAdapter",
        "FORMS": DEFAULT_FORMS,
        "LOGIN_URL": "accounts:login",
        "LOGIN_REDIRECT_URL": "accounts:profile",
        "SIGNUP_REDIRECT_URL": "accounts:profile",
        "LOGOUT_REDIRECT_URL": "/",
        "DELETE_REDIRECT_URL": "/",
    }


def test_django_login_settings_of_the_project_are_the_defaults_of_the_app():
    read = app_settings_in_a_project(LOGIN_URL="/signin/", LOGIN_REDIRECT_URL="/home/", LOGOUT_REDIRECT_URL="/bye/")

    assert (read["LOGIN_URL"], read["LOGIN_REDIRECT_URL"]) == ("/signin/", "/home/")
    assert read["SIGNUP_REDIRECT_URL"] == "/home/"
    assert (read["LOGOUT_REDIRECT_URL"], read["DELETE_REDIRECT_URL"]) == ("/bye/", "/bye/")


def test_accounts_settings_win_over_djangos():
    read = app_settings_in_a_project(
        LOGIN_URL="/signin/", ACCOUNTS_LOGIN_URL="/members/login/", ACCOUNTS_SIGNUP_REDIRECT_URL="/welcome/"
    )

    assert (read["LOGIN_URL"], read["SIGNUP_REDIRECT_URL"], read["LOGIN_REDIRECT_URL"]) == (
        "/members/login/",
        "/welcome/",
        "accounts:profile",
    )


@pytest.mark.parametrize(
    "name, value",
    [
        ("TABLE_NAME", "members"),
        ("ENDPOINT_URL", "http://127.0.0.1:9"),
        ("REGION", "eu-west-3"),
        ("CONNECT_TIMEOUT", 5),
        ("READ_TIMEOUT", 30),
        ("ACCOUNT_MODEL", "tests.hostproject.tables.MemberAccount"),
        ("ADAPTER", "tests.hostproject.adapter.MemberAdapter"),
        ("LOGIN_URL", "/signin/"),
        ("LOGIN_REDIRECT_URL", "/home/"),
        ("SIGNUP_REDIRECT_URL", "/welcome/"),
        ("LOGOUT_REDIRECT_URL", "/bye/"),
        ("DELETE_REDIRECT_URL", "/farewell/"),
    ],
)
def test_each_setting_is_read_when_used(settings, name, value):
    setattr(settings, f"ACCOUNTS_{name}", value)

    assert getattr(app_settings, name) == value


def test_forms_setting_replaces_only_the_forms_it_names(settings):
    settings.ACCOUNTS_FORMS = {"signup": NewsletterSignupForm}

    assert app_settings.FORMS == {**DEFAULT_FORMS, "signup": NewsletterSignupForm}
    assert get_adapter().get_form_class("signup") is NewsletterSignupForm
    assert get_adapter().get_form_class("login") is LoginForm


def test_deleted_settings_fall_back_to_their_defaults(settings):
    del settings.ACCOUNTS_TABLE_NAME
    del settings.ACCOUNTS_REGION

    assert (app_settings.TABLE_NAME, app_settings.REGION) == ("accounts", "us-east-1")


def test_override_settings_points_the_table_models_and_the_client_elsewhere():
    with override_settings(ACCOUNTS_TABLE_NAME="elsewhere", ACCOUNTS_REGION="eu-west-3"):
        assert Account.Meta.table_name == "elsewhere"
        assert dynamodb_client().meta.region_name == "eu-west-3"

    assert TableModel.Meta.table_name == "accounts-tests"
    assert dynamodb_client().meta.region_name == "us-east-1"


def test_unique_fields_setting_adds_to_the_default_fields(settings):
    phone = {"namespace": "PHONE", "normalizer": "tests.hostproject.phones.normalize_phone", "allow_empty": True}
    settings.ACCOUNTS_UNIQUE_FIELDS = {"phone": phone}

    assert app_settings.UNIQUE_FIELDS == {**DEFAULT_UNIQUE_FIELDS, "phone": phone}
    assert [constraint.namespace for constraint in account_constraints()] == [
        "EMAIL",
        "HANDLE",
        "PHONE",
        "HANDLE_SKEL",
        "WEBAUTHN",  # the passkeys' credential ids (accounts.mfa), declared by the account model
        "OIDC",  # the OpenID Connect identities (accounts.providers), declared by the account model
    ]


def test_options_given_for_a_default_field_replace_only_those_options(settings):
    settings.ACCOUNTS_UNIQUE_FIELDS = {"email": {"namespace": "MAIL"}, "username": {"allow_empty": False}}

    assert app_settings.UNIQUE_FIELDS == {
        "email": {**DEFAULT_UNIQUE_FIELDS["email"], "namespace": "MAIL"},
        "username": {**DEFAULT_UNIQUE_FIELDS["username"], "allow_empty": False},
    }


def test_an_option_set_to_none_is_removed_so_a_default_can_really_be_replaced(settings):
    settings.ACCOUNTS_UNIQUE_FIELDS = {"username": {"skeleton_namespace": None, "normalizer": None}}

    assert app_settings.UNIQUE_FIELDS["username"] == {"namespace": "HANDLE"}
    username = store.constraint_for("username")
    assert username.normalizer is normalize_text
    assert [constraint.namespace for constraint in account_constraints()] == ["EMAIL", "HANDLE", "WEBAUTHN", "OIDC"]


def test_unique_fields_are_rebuilt_when_the_setting_changes(settings):
    settings.ACCOUNTS_UNIQUE_FIELDS = {
        "email": {"namespace": "EMAIL"},
        "username": {"namespace": "HANDLE", "normalizer": "accounts.uniqueness.normalize_exact"},
    }

    username = account_constraints()[1]
    assert (username.namespace, username.normalizer) == ("HANDLE", normalize_exact)


@pytest.mark.dynamodb_local
def test_case_sensitive_usernames_through_the_unique_fields_setting(ddb, settings):
    # The look-alike lock folds case too ("Ada" looks like "ada"): case-sensitive names
    # drop it.
    settings.ACCOUNTS_UNIQUE_FIELDS = {
        "email": {"namespace": "EMAIL"},
        "username": {"namespace": "HANDLE", "normalizer": normalize_exact, "skeleton_namespace": None},
    }

    first = signup(Client(), "ada@example.com", "Ada")
    second = signup(Client(), "grace@example.com", "ada")

    assert (first.status_code, second.status_code) == (302, 302)
    assert store.get_by_username("Ada").email == "ada@example.com"
    assert store.get_by_username("ada").email == "grace@example.com"


@pytest.mark.dynamodb_local
def test_signup_page_uses_the_form_named_in_the_forms_setting(ddb, settings):
    settings.ACCOUNTS_FORMS = {"signup": f"{__name__}.NewsletterSignupForm"}

    response = Client().get("/accounts/signup/")

    assert type(response.context["form"]) is NewsletterSignupForm


@pytest.mark.dynamodb_local
def test_signup_page_uses_the_form_the_adapter_chooses(ddb, settings):
    settings.ACCOUNTS_ADAPTER = f"{__name__}.HostAdapter"

    response = Client().get("/accounts/signup/")

    assert type(response.context["form"]) is NewsletterSignupForm


def test_login_url_setting_is_where_pages_send_anonymous_visitors(settings):
    settings.ACCOUNTS_LOGIN_URL = "/signin/"

    response = Client().get("/accounts/email/")

    assert response["Location"] == "/signin/?next=/accounts/email/"


def test_login_url_follows_the_projects_login_url(settings):
    settings.LOGIN_URL = "/elsewhere/login/"

    response = Client().get("/accounts/profile/")

    assert response["Location"] == "/elsewhere/login/?next=/accounts/profile/"


@pytest.mark.dynamodb_local
def test_login_redirect_setting_is_where_a_login_without_next_lands(ddb, settings):
    signed_up_client("ada@example.com", "ada")
    settings.ACCOUNTS_LOGIN_REDIRECT_URL = "accounts:username_change"

    response = login(Client(), "ada", PASSWORD)

    assert response["Location"] == "/accounts/username/"


@pytest.mark.parametrize("value", ["mandatory", "optional", "none"])
def test_email_verification_modes(settings, value):
    settings.ACCOUNTS_EMAIL_VERIFICATION = value

    assert app_settings.EMAIL_VERIFICATION == value


def test_unknown_email_verification_mode_is_a_clear_configuration_error(settings):
    settings.ACCOUNTS_EMAIL_VERIFICATION = "sometimes"

    with pytest.raises(ImproperlyConfigured, match="'mandatory', 'optional' or 'none'"):
        app_settings.EMAIL_VERIFICATION


def test_verification_defaults(settings):
    del settings.ACCOUNTS_EMAIL_VERIFICATION

    assert app_settings.EMAIL_VERIFICATION == "mandatory"
    assert app_settings.UNVERIFIED_EXPIRY == timedelta(hours=24)
    settings.ACCOUNTS_UNVERIFIED_EXPIRY = 3600
    assert app_settings.UNVERIFIED_EXPIRY == timedelta(hours=1)


@pytest.mark.parametrize(
    "mode, setting, expected",
    [
        ("mandatory", None, True),
        ("optional", None, False),
        ("none", None, False),
        ("mandatory", False, False),
        ("optional", True, True),
        ("none", True, True),
    ],
)
def test_enumeration_prevention_is_on_by_default_in_mandatory_mode(settings, mode, setting, expected):
    settings.ACCOUNTS_EMAIL_VERIFICATION = mode
    if setting is None:
        del settings.ACCOUNTS_PREVENT_ENUMERATION
    else:
        settings.ACCOUNTS_PREVENT_ENUMERATION = setting

    assert app_settings.PREVENT_ENUMERATION is expected


def test_site_url_is_the_setting_or_none(settings):
    settings.ACCOUNTS_SITE_URL = "https://accounts.example.com"
    assert app_settings.SITE_URL == "https://accounts.example.com"
    settings.ACCOUNTS_SITE_URL = ""
    assert app_settings.SITE_URL is None
    del settings.ACCOUNTS_SITE_URL
    assert app_settings.SITE_URL is None


def test_clock_skew_margin_defaults_to_five_minutes_and_takes_seconds(settings):
    assert app_settings.CLOCK_SKEW_MARGIN == timedelta(minutes=5)

    settings.ACCOUNTS_CLOCK_SKEW_MARGIN = 30
    assert app_settings.CLOCK_SKEW_MARGIN == timedelta(seconds=30)


def test_the_takeover_cutoff_follows_the_clock_skew_margin_setting(settings):
    from accounts.tables import takeover_cutoff

    assert takeover_cutoff(1000) == 1000 - 300
    settings.ACCOUNTS_CLOCK_SKEW_MARGIN = 30
    assert takeover_cutoff(1000) == 970
    settings.ACCOUNTS_CLOCK_SKEW_MARGIN = timedelta(minutes=1)
    assert takeover_cutoff(1000) == 940


def test_negative_clock_skew_margin_is_a_clear_configuration_error(settings):
    settings.ACCOUNTS_CLOCK_SKEW_MARGIN = -1

    with pytest.raises(ImproperlyConfigured, match="ACCOUNTS_CLOCK_SKEW_MARGIN"):
        app_settings.CLOCK_SKEW_MARGIN
