"""The system checks of ``ACCOUNTS_SIGNUP_FIELDS`` and ``ACCOUNTS_LOGIN_METHODS`` (accounts.E030
-E035, W030, W031): each fires on its misconfiguration and only then, as django-allauth's
``settings_check`` refuses what cannot work together; E031: phone numbers need an adapter
that texts their codes."""

import pytest
from django.core import checks

from accounts.checks import check_account_model, check_default_fields_kept, check_unique_fields
from accounts.phones.checks import check_phone_adapter
from accounts.signup_fields import check_signup_fields

EMAIL_ONLY = ["email*", "password1*"]


def ids(issues):
    return [issue.id for issue in issues]


def messages(issues):
    return " ".join(issue.msg for issue in issues)


def test_the_defaults_pass():
    assert check_signup_fields(None) == []


@pytest.mark.parametrize(
    ("fields", "methods"),
    [
        (EMAIL_ONLY, {"email"}),
        (("email*", "password1*", "password2*"), ["email"]),
        (["email*", "username", "password1*"], {"email", "username"}),
        (["email*", "username*", "password1*"], {"username"}),
        (["username*", "email*", "password1*", "password2"], {"email"}),
    ],
)
def test_workable_combinations_pass(settings, fields, methods):
    settings.ACCOUNTS_SIGNUP_FIELDS = fields
    settings.ACCOUNTS_LOGIN_METHODS = methods

    assert check_signup_fields(None) == []


def test_an_email_only_site_passes_the_unique_field_checks_too(settings):
    settings.ACCOUNTS_SIGNUP_FIELDS = EMAIL_ONLY
    settings.ACCOUNTS_LOGIN_METHODS = {"email"}

    assert check_unique_fields(None) + check_account_model(None) + check_default_fields_kept(None) == []


@pytest.mark.parametrize(
    ("fields", "problem"),
    [
        ("email*", "not a list"),
        (["email*", 7], "not a list"),
        (["email*", "password*"], "use 'password1*'"),
        (["email*", "password", "password1*"], "use 'password1'"),
        (["email*", "nickname", "password1*"], "'nickname'"),
        (["email*", "username*x", "password1*"], "'username*x'"),
        (["email*", "username*", "username", "password1*"], "more than once"),
    ],
)
def test_e030_an_entry_that_is_not_a_signup_field(settings, fields, problem):
    settings.ACCOUNTS_SIGNUP_FIELDS = fields

    issues = check_signup_fields(None)

    assert "accounts.E030" in ids(issues)
    assert problem in messages(issues)


PHONE_FIELDS = ["email*", "phone*", "password1*"]


@pytest.mark.parametrize(
    ("fields", "methods"),
    [
        (["email*", "phone", "password1*"], {"email"}),
        (PHONE_FIELDS, {"email", "phone"}),
        (PHONE_FIELDS, {"phone"}),
        (["email*", "username*", "phone", "password1*"], {"email", "username", "phone"}),
    ],
)
def test_e031_a_site_with_phone_numbers_needs_an_adapter_that_texts_codes(settings, fields, methods):
    settings.ACCOUNTS_ADAPTER = "accounts.adapter.DefaultAccountAdapter"
    settings.ACCOUNTS_SIGNUP_FIELDS = fields
    settings.ACCOUNTS_LOGIN_METHODS = methods

    issues = check_phone_adapter(None)

    assert check_signup_fields(None) == []
    assert ids(issues) == ["accounts.E031"]
    assert "does not implement send_verification_code_sms" in messages(issues)
    assert "accounts.E031" in ids(checks.run_checks(tags=[checks.Tags.compatibility]))

    settings.ACCOUNTS_ADAPTER = "tests.sms.SmsAdapter"

    assert check_phone_adapter(None) == []


def test_without_phone_numbers_the_default_adapter_passes(settings):
    settings.ACCOUNTS_ADAPTER = "accounts.adapter.DefaultAccountAdapter"

    assert check_phone_adapter(None) == []


def test_e033_logging_in_by_phone_needs_phone_among_the_signup_fields(settings):
    settings.ACCOUNTS_ADAPTER = "tests.sms.SmsAdapter"
    settings.ACCOUNTS_LOGIN_METHODS = {"email", "phone"}

    issues = check_signup_fields(None)

    assert ids(issues) == ["accounts.E033"]
    assert "ACCOUNTS_LOGIN_METHODS has 'phone', but ACCOUNTS_SIGNUP_FIELDS has no 'phone'" in messages(issues)


@pytest.mark.parametrize(
    ("methods", "problem"),
    [("email", "ACCOUNTS_LOGIN_METHODS is 'email'"), (set(), "empty"), ({"email", "login"}, "'login'")],
)
def test_e032_login_methods_that_are_not_email_and_username(settings, methods, problem):
    settings.ACCOUNTS_LOGIN_METHODS = methods

    issues = check_signup_fields(None)

    assert ids(issues) == ["accounts.E032"]
    assert problem in messages(issues)


def test_e033_login_by_username_on_a_site_without_usernames(settings):
    settings.ACCOUNTS_SIGNUP_FIELDS = EMAIL_ONLY

    issues = check_signup_fields(None)

    assert ids(issues) == ["accounts.E033"]
    assert issues[0].level == checks.ERROR


@pytest.mark.parametrize("fields", [["username*", "password1*"], ["email", "username*", "password1*"]])
def test_e034_every_account_needs_an_address(settings, fields):
    settings.ACCOUNTS_SIGNUP_FIELDS = fields

    assert ids(check_signup_fields(None)) == ["accounts.E034"]


@pytest.mark.parametrize("fields", [["email*", "username*"], ["email*", "username*", "password1", "password2"]])
def test_e035_a_sign_up_without_a_password_is_not_available(settings, fields):
    settings.ACCOUNTS_SIGNUP_FIELDS = fields

    assert ids(check_signup_fields(None)) == ["accounts.E035"]


def test_w030_no_login_method_is_a_required_field(settings):
    settings.ACCOUNTS_SIGNUP_FIELDS = ["email*", "username", "password1*"]
    settings.ACCOUNTS_LOGIN_METHODS = {"username"}

    issues = check_signup_fields(None)

    assert ids(issues) == ["accounts.W030"]
    assert issues[0].level == checks.WARNING


def test_w031_username_options_on_a_site_without_usernames_are_ignored(settings):
    settings.ACCOUNTS_SIGNUP_FIELDS = EMAIL_ONLY
    settings.ACCOUNTS_LOGIN_METHODS = {"email"}
    settings.ACCOUNTS_UNIQUE_FIELDS = {"username": {"skeleton_namespace": None}}

    assert ids(check_signup_fields(None)) == ["accounts.W031"]


def test_the_checks_run_with_manage_py_check(settings):
    settings.ACCOUNTS_SIGNUP_FIELDS = ["email*", "password1*"]

    found = checks.run_checks(tags=[checks.Tags.compatibility])

    assert "accounts.E033" in ids(found)


@pytest.mark.parametrize(
    ("fields", "methods"),
    [(EMAIL_ONLY, {"email"}), (["email*", "username", "password1*"], {"email", "username"}), (None, {"email"})],
)
def test_w032_optional_verification_where_an_account_may_have_no_username_to_log_in_with(settings, fields, methods):
    settings.ACCOUNTS_EMAIL_VERIFICATION = "optional"
    if fields is not None:
        settings.ACCOUNTS_SIGNUP_FIELDS = fields
    settings.ACCOUNTS_LOGIN_METHODS = methods

    assert ids(check_signup_fields(None)) == ["accounts.W032"]


def test_w032_not_raised_where_every_account_logs_in_with_its_username(settings):
    settings.ACCOUNTS_EMAIL_VERIFICATION = "optional"

    assert check_signup_fields(None) == []
