"""``manage.py accounts_createstaff`` on DynamoDB Local: the signup page's rules, a staff flag."""

from io import StringIO

import pytest
from django import forms
from django.contrib.auth import authenticate
from django.core.management import CommandError

from accounts import store
from accounts.management.commands import accounts_createstaff
from tests.hostproject.forms import MemberSignupForm
from tests.staff import run_command
from tests.web import PASSWORD

pytestmark = pytest.mark.dynamodb_local


class Terminal(StringIO):
    """A stdin that says it is a terminal."""

    def isatty(self):
        return True


def create_staff(*args, **options):
    """``(stdout, stderr)`` of the command; a refusal raises ``CommandError``."""
    _, out, err = run_command("accounts_createstaff", *args, **options)
    return out, err


@pytest.fixture
def staff_password(monkeypatch):
    monkeypatch.setenv("DJANGO_STAFF_PASSWORD", PASSWORD)


def test_noinput_creates_a_staff_account_that_can_log_in(ddb, staff_password):
    out, _ = create_staff("--email", "Boss@Example.com", "--username", "boss", "--noinput")

    account = store.get_by_username("BOSS")
    assert account.is_staff and account.is_active
    assert account.email == "Boss@example.com"
    assert f"Staff account boss (Boss@example.com) created, id {account.id}." in out
    user = authenticate(username="boss@example.com", password=PASSWORD)
    assert user.is_staff and user.id == account.id


def test_staff_account_holds_its_address_and_logs_in_when_verification_is_mandatory(ddb, staff_password, settings):
    settings.ACCOUNTS_EMAIL_VERIFICATION = "mandatory"

    create_staff("--email", "boss@example.com", "--username", "boss", "--noinput")

    assert store.get_by_email("boss@example.com").email_verified is True
    assert authenticate(username="boss@example.com", password=PASSWORD).is_staff


def test_noinput_without_the_password_variable_is_refused(ddb, monkeypatch):
    monkeypatch.delenv("DJANGO_STAFF_PASSWORD", raising=False)

    with pytest.raises(CommandError, match="DJANGO_STAFF_PASSWORD"):
        create_staff("--email", "boss@example.com", "--username", "boss", "--noinput")
    assert store.get_by_username("boss") is None


def test_noinput_without_email_is_refused(ddb, staff_password):
    with pytest.raises(CommandError, match="--email must be given"):
        create_staff("--username", "boss", "--noinput")


def test_username_with_at_sign_gets_the_signup_message(ddb, staff_password):
    with pytest.raises(CommandError, match="Username: A username cannot contain “@”."):
        create_staff("--email", "boss@example.com", "--username", "bo@ss", "--noinput")


def test_invalid_email_gets_the_signup_message(ddb, staff_password):
    with pytest.raises(CommandError, match="Email address: Enter a valid email address."):
        create_staff("--email", "not-an-email", "--username", "boss", "--noinput")


def test_password_validators_apply(ddb, monkeypatch):
    monkeypatch.setenv("DJANGO_STAFF_PASSWORD", "password")

    with pytest.raises(CommandError, match="This password is too common."):
        create_staff("--email", "boss@example.com", "--username", "boss", "--noinput")
    assert store.get_by_username("boss") is None


def test_password_too_similar_to_the_username_is_refused(ddb, monkeypatch):
    monkeypatch.setenv("DJANGO_STAFF_PASSWORD", "bossadministrator")

    with pytest.raises(CommandError, match="too similar to the username"):
        create_staff("--email", "admin@example.com", "--username", "bossadministrator", "--noinput")


def test_taken_email_and_username_are_both_reported(ddb, staff_password):
    store.signup("boss@example.com", "boss", "!hash")

    with pytest.raises(CommandError) as raised:
        create_staff("--email", "BOSS@example.com", "--username", "Boss", "--noinput")

    assert "Email address: This email address is already in use." in str(raised.value)
    assert "Username: This username is taken." in str(raised.value)


def test_interactive_asks_again_for_what_was_refused(ddb, monkeypatch):
    store.signup("taken@example.com", "taken", "!hash")
    answers = iter(["taken@example.com", "boss", "boss@example.com"])
    passwords = iter(["first-Password-1", "different-Password-2", PASSWORD, PASSWORD])
    monkeypatch.setattr("builtins.input", lambda prompt: next(answers))
    monkeypatch.setattr(accounts_createstaff.getpass, "getpass", lambda prompt="Password: ": next(passwords))

    out, err = create_staff(stdin=Terminal())

    assert "the two passwords differ" in err
    assert "Email address: This email address is already in use." in err
    assert store.get_by_email("boss@example.com").is_staff
    assert "Staff account boss" in out


def test_interactive_without_a_terminal_is_refused(ddb):
    with pytest.raises(CommandError, match="--noinput"):
        create_staff("--email", "boss@example.com", "--username", "boss", stdin=StringIO())


def test_an_email_with_undecodable_bytes_is_a_clear_error_not_a_traceback(ddb, staff_password):
    # $'a@\xff\xffb.com' reaches Python as lone surrogates (surrogateescape).
    email = b"a@\xff\xffb.com".decode("utf-8", "surrogateescape")
    with pytest.raises(CommandError) as raised:
        create_staff("--email", email, "--username", "boss", "--noinput")
    assert "Email address" in str(raised.value)
    assert store.get_by_username("boss") is None


@pytest.fixture
def members_signup(settings):
    """The sign-up form and adapter of the README's "Adding a unique field" (a phone)."""
    settings.ACCOUNTS_ACCOUNT_MODEL = "tests.hostproject.tables.MemberAccount"
    settings.ACCOUNTS_UNIQUE_FIELDS = {
        "phone": {"namespace": "PHONE", "normalizer": "tests.hostproject.phones.normalize_phone", "allow_empty": True}
    }
    settings.ACCOUNTS_FORMS = {"signup": "tests.hostproject.forms.MemberSignupForm"}
    settings.ACCOUNTS_ADAPTER = "tests.hostproject.adapter.MemberAdapter"


def test_noinput_uses_the_projects_signup_form_and_adapter(ddb, staff_password, members_signup):
    create_staff("--email", "boss@example.com", "--username", "boss", "--noinput")

    account = store.get_by_username("boss")
    assert account.is_staff
    assert account.phone is None


def test_noinput_reports_a_field_the_projects_form_requires(ddb, staff_password, members_signup, monkeypatch):
    monkeypatch.setitem(MemberSignupForm.base_fields, "phone", forms.CharField(label="Phone number"))

    with pytest.raises(CommandError, match="Phone number: This field is required."):
        create_staff("--email", "boss@example.com", "--username", "boss", "--noinput")
    assert store.get_by_username("boss") is None


def test_interactive_asks_for_the_fields_the_projects_form_adds(ddb, members_signup, monkeypatch):
    store.signup("ada@example.com", "ada", "!hash", email_verified=True, phone="+15550109999")
    answers = iter(["boss@example.com", "boss", "+1 555 010 9999", "+44 20 7946 0000"])
    prompts = []
    passwords = iter([PASSWORD] * 4)

    def answer(prompt):
        prompts.append(prompt)
        return next(answers)

    monkeypatch.setattr("builtins.input", answer)
    monkeypatch.setattr(accounts_createstaff.getpass, "getpass", lambda prompt="Password: ": next(passwords))

    _, err = create_staff(stdin=Terminal())

    assert prompts == ["Email address: ", "Username: ", "Phone number (optional): ", "Phone number (optional): "]
    assert "Phone number: This phone number is already in use." in err
    account = store.get_by_username("boss")
    assert (account.is_staff, account.phone) == (True, "+44 20 7946 0000")
