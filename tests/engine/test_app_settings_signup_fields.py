"""``ACCOUNTS_SIGNUP_FIELDS`` and ``ACCOUNTS_LOGIN_METHODS`` as the app reads them
(django-allauth's notation and meaning), and what they make of ``ACCOUNTS_UNIQUE_FIELDS``:
a site without usernames declares no username constraint, an optional username one that
an empty value passes without a lock."""

import pytest
from django.core.exceptions import ImproperlyConfigured

from accounts.app_settings import app_settings
from accounts.tables import account_constraints
from tests.hostproject.test_production import SHOW, demo_settings


def namespaces():
    return [constraint.namespace for constraint in account_constraints()]


def username_constraints():
    return [constraint for constraint in account_constraints() if constraint.fields == ("username",)]


def test_by_default_a_sign_up_asks_for_todays_fields_all_required():
    assert app_settings.SIGNUP_FIELDS == {
        "email": {"required": True},
        "username": {"required": True},
        "password1": {"required": True},
        "password2": {"required": True},
    }
    assert app_settings.LOGIN_METHODS == frozenset({"email", "username"})


def test_a_star_marks_a_required_field_in_the_order_given(settings):
    settings.ACCOUNTS_SIGNUP_FIELDS = ("username", "email*", "password1*")

    assert list(app_settings.SIGNUP_FIELDS.items()) == [
        ("username", {"required": False}),
        ("email", {"required": True}),
        ("password1", {"required": True}),
    ]


def test_login_methods_are_read_as_a_set_from_any_collection(settings):
    settings.ACCOUNTS_LOGIN_METHODS = ["email", "email"]

    assert app_settings.LOGIN_METHODS == frozenset({"email"})


@pytest.mark.parametrize(
    ("setting", "value"),
    [
        ("ACCOUNTS_SIGNUP_FIELDS", "email*"),
        ("ACCOUNTS_SIGNUP_FIELDS", {"email": True}),
        ("ACCOUNTS_SIGNUP_FIELDS", ["email*", None]),
        ("ACCOUNTS_LOGIN_METHODS", "email"),
        ("ACCOUNTS_LOGIN_METHODS", 1),
    ],
)
def test_a_value_of_the_wrong_shape_is_improperly_configured(settings, setting, value):
    setattr(settings, setting, value)

    with pytest.raises(ImproperlyConfigured, match=setting):
        getattr(app_settings, setting.removeprefix("ACCOUNTS_"))


def test_without_username_the_site_declares_no_username_constraint(settings):
    settings.ACCOUNTS_SIGNUP_FIELDS = ["email*", "password1*"]

    assert "username" not in app_settings.UNIQUE_FIELDS
    assert namespaces() == ["EMAIL", "WEBAUTHN", "OIDC"]


def test_without_username_the_hosts_username_options_are_ignored(settings):
    settings.ACCOUNTS_SIGNUP_FIELDS = ["email*", "password1*"]
    settings.ACCOUNTS_UNIQUE_FIELDS = {"username": {"namespace": "NAME"}, "phone": {"namespace": "PHONE"}}

    assert set(app_settings.UNIQUE_FIELDS) == {"email", "phone"}


def test_an_optional_username_lets_an_empty_one_take_no_lock(settings):
    settings.ACCOUNTS_SIGNUP_FIELDS = ["email*", "username", "password1*"]

    assert [constraint.allow_empty for constraint in username_constraints()] == [True, True]
    assert namespaces()[:3] == ["EMAIL", "HANDLE", "HANDLE_SKEL"]


def test_a_required_username_is_declared_as_today(settings):
    assert [constraint.allow_empty for constraint in username_constraints()] == [False, False]
    settings.ACCOUNTS_UNIQUE_FIELDS = {"username": {"allow_empty": True}}

    assert [constraint.allow_empty for constraint in username_constraints()] == [True, True]


def test_settings_are_read_when_used(settings):
    assert len(username_constraints()) == 2
    settings.ACCOUNTS_SIGNUP_FIELDS = ["email*", "password1*"]
    assert username_constraints() == []


def test_the_demo_reads_both_settings_from_the_environment_as_json():
    environment = {"ACCOUNTS_SIGNUP_FIELDS": '["email*", "password1*"]', "ACCOUNTS_LOGIN_METHODS": '["email"]'}

    assert demo_settings(SHOW.format("ACCOUNTS_SIGNUP_FIELDS"), **environment) == "['email*', 'password1*']"
    assert demo_settings(SHOW.format("ACCOUNTS_LOGIN_METHODS"), **environment) == "['email']"
    assert demo_settings(SHOW.format("ACCOUNTS_SIGNUP_FIELDS")) == "unset"
    read = "import django; django.setup(); from accounts.app_settings import app_settings as s"
    assert demo_settings(f"{read}; print(sorted(s.LOGIN_METHODS))", **environment) == "['email']"
