"""System checks: each accounts.E00x / W00x fires on its misconfiguration and only then."""

import uuid
from io import StringIO

import pytest
from django.core.management import call_command, execute_from_command_line

from accounts.app_settings import app_settings
from accounts.backends import AccountBackend
from accounts.checks import (
    check_account_model,
    check_auth_settings,
    check_default_fields_kept,
    check_site_url,
    check_table,
    check_transaction_sizes,
    check_unique_fields,
    check_unique_models,
)
from accounts.identifiers import normalize_email_key
from accounts.tables import dynamodb_client

DEFAULT_FIELDS = {"email": {"namespace": "EMAIL"}, "username": {"namespace": "HANDLE"}}
FIX = "python manage.py accounts_createtable"


class StaffBackend(AccountBackend):
    """A host's backend built on the app's."""


class NoAccount:
    """Not a PynamoDB account model."""


def ids(issues):
    return [issue.id for issue in issues]


def test_test_settings_pass_every_configuration_check():
    assert (
        check_auth_settings(None)
        + check_unique_fields(None)
        + check_account_model(None)
        + check_default_fields_kept(None)
        == []
    )


def test_e001_auth_user_model_other_than_accounts_user(settings):
    settings.AUTH_USER_MODEL = "myproject.Person"

    [issue] = check_auth_settings(None)

    assert issue.id == "accounts.E001"
    assert 'AUTH_USER_MODEL = "accounts.User"' in issue.hint


def test_e002_authentication_backends_without_the_account_backend(settings):
    settings.AUTHENTICATION_BACKENDS = ["django.contrib.auth.backends.ModelBackend"]

    [issue] = check_auth_settings(None)

    assert issue.id == "accounts.E002"
    assert "accounts.backends.AccountBackend" in issue.hint


def test_e002_accepts_a_subclass_of_the_account_backend(settings):
    settings.AUTHENTICATION_BACKENDS = [f"{__name__}.StaffBackend"]

    assert check_auth_settings(None) == []


SQL_ENGINES = ["django.contrib.sessions.backends.db", "django.contrib.sessions.backends.cached_db"]


@pytest.mark.parametrize("engine", SQL_ENGINES)
def test_e003_session_engine_that_needs_a_sql_database(settings, engine):
    settings.SESSION_ENGINE = engine

    [issue] = check_auth_settings(None)

    assert issue.id == "accounts.E003"
    assert issue.hint.startswith('Use "accounts.sessions"')


def test_e003_not_raised_for_a_cache_session_engine(settings):
    settings.SESSION_ENGINE = "django.contrib.sessions.backends.cache"

    assert check_auth_settings(None) == []


def test_unique_fields_setting_cannot_drop_email_or_username(settings):
    settings.ACCOUNTS_UNIQUE_FIELDS = {"phone": {"namespace": "PHONE"}}

    assert {"email", "username", "phone"} <= app_settings.UNIQUE_FIELDS.keys()
    assert check_unique_fields(None) == []


def test_w010_not_raised_for_a_declaration_that_names_the_defaults_namespaces_and_adds_a_field(settings):
    settings.ACCOUNTS_UNIQUE_FIELDS = {**DEFAULT_FIELDS, "phone": {"namespace": "PHONE"}}

    assert check_default_fields_kept(None) == []


def test_w010_not_raised_for_the_default_normalizer_given_as_a_function(settings):
    settings.ACCOUNTS_UNIQUE_FIELDS = {"email": {"normalizer": normalize_email_key}}

    assert check_default_fields_kept(None) == []


@pytest.mark.parametrize(
    "declared, field, lost",
    [
        ({"username": {"skeleton_namespace": None}}, "username", "look-alike usernames"),
        ({"email": {"normalizer": "accounts.uniqueness.normalize_text"}}, "email", "normalizer"),
        ({"username": {"normalizer": "accounts.uniqueness.normalize_exact"}}, "username", "normalizer"),
    ],
    ids=["no look-alike lock", "email normalizer", "username normalizer"],
)
def test_w010_email_or_username_losing_its_normalizer_or_look_alike_lock(settings, declared, field, lost):
    settings.ACCOUNTS_UNIQUE_FIELDS = declared

    [issue] = check_default_fields_kept(None)

    assert issue.id == "accounts.W010"
    assert f"ACCOUNTS_UNIQUE_FIELDS[{field!r}]" in issue.msg
    assert lost in issue.msg
    assert "SILENCED_SYSTEM_CHECKS" in issue.hint


@pytest.mark.parametrize(
    "phone",
    [
        {},
        {"namespace": ""},
        {"namespace": "PHONE#1"},
        {"namespace": "EMAIL"},
        {"namespace": 7},
        "PHONE",
    ],
    ids=["no namespace", "empty", "with #", "another field's", "not text", "not a dict"],
)
def test_e005_unique_field_without_a_namespace_of_its_own(settings, phone):
    settings.ACCOUNTS_UNIQUE_FIELDS = {**DEFAULT_FIELDS, "phone": phone}

    issues = check_unique_fields(None)

    assert set(ids(issues)) == {"accounts.E005"}
    assert any("'phone'" in issue.msg for issue in issues)


@pytest.mark.parametrize("skeleton_namespace", ["HANDLE", "EMAIL", "", "SKEL#1"])
def test_e005_skeleton_namespace_must_be_a_namespace_of_its_own(settings, skeleton_namespace):
    settings.ACCOUNTS_UNIQUE_FIELDS = {
        "email": {"namespace": "EMAIL"},
        "username": {"namespace": "HANDLE", "skeleton_namespace": skeleton_namespace},
    }

    issues = check_unique_fields(None)

    assert set(ids(issues)) == {"accounts.E005"}
    assert any("skeleton_namespace" in issue.msg for issue in issues)


def test_the_default_unique_fields_with_their_skeleton_namespace_pass_the_checks(settings):
    assert check_unique_fields(None) == []


@pytest.mark.parametrize(
    "normalizer, problem",
    [
        ("myproject.phones.normalize", "cannot be imported"),
        ("accounts.uniqueness.no_such_function", "cannot be imported"),
        ("accounts.uniqueness.LOCK_PREFIX", "is not callable"),
        (42, "is not callable"),
    ],
)
def test_e006_normalizer_that_cannot_be_used(settings, normalizer, problem):
    settings.ACCOUNTS_UNIQUE_FIELDS = {**DEFAULT_FIELDS, "phone": {"namespace": "PHONE", "normalizer": normalizer}}

    [issue] = check_unique_fields(None)

    assert issue.id == "accounts.E006"
    assert problem in issue.msg


def test_e006_not_raised_for_a_dotted_path_or_a_callable(settings):
    settings.ACCOUNTS_UNIQUE_FIELDS = {
        "email": {"namespace": "EMAIL", "normalizer": "accounts.uniqueness.normalize_text"},
        "username": {"namespace": "HANDLE", "normalizer": str.casefold},
    }

    assert check_unique_fields(None) == []


@pytest.mark.parametrize("model", ["myproject.tables.Member", f"{__name__}.NoAccount"])
def test_e007_account_model_that_is_not_an_account(settings, model):
    settings.ACCOUNTS_ACCOUNT_MODEL = model

    [issue] = check_account_model(None)

    assert issue.id == "accounts.E007"
    assert model in issue.msg


def test_e008_unique_field_the_account_model_has_no_attribute_for(settings):
    # (The account model has a phone number now: accounts.phones.)
    settings.ACCOUNTS_UNIQUE_FIELDS = {**DEFAULT_FIELDS, "nickname": {"namespace": "NICK"}}

    [issue] = check_account_model(None)

    assert issue.id == "accounts.E008"
    assert "'nickname'" in issue.msg
    assert "ACCOUNTS_ACCOUNT_MODEL" in issue.hint


def test_e008_not_raised_when_the_account_model_has_the_attribute(settings):
    settings.ACCOUNTS_UNIQUE_FIELDS = {**DEFAULT_FIELDS, "phone": {"namespace": "PHONE"}}
    settings.ACCOUNTS_ACCOUNT_MODEL = "tests.hostproject.tables.MemberAccount"

    assert check_account_model(None) == []


@pytest.mark.dynamodb_local
def test_no_table_warning_for_the_table_accounts_createtable_made(ddb):
    assert check_table(None) == []


def test_w001_dynamodb_that_cannot_be_reached(settings):
    settings.ACCOUNTS_ENDPOINT_URL = "http://127.0.0.1:9"

    [issue] = check_table(None)

    assert issue.id == "accounts.W001"
    assert "cannot be reached" in issue.msg
    assert "ACCOUNTS_ENDPOINT_URL" in issue.hint
    assert FIX in issue.hint


@pytest.fixture
def local_endpoint(dynamodb_local, settings):
    """DynamoDB Local, with no accounts table created (ACCOUNTS_TABLE_NAME is for the test to set)."""
    settings.ACCOUNTS_ENDPOINT_URL = dynamodb_local.endpoint_url


@pytest.mark.dynamodb_local
def test_w001_table_that_does_not_exist(local_endpoint, settings):
    settings.ACCOUNTS_TABLE_NAME = "never-created"

    [issue] = check_table(None)

    assert issue.id == "accounts.W001"
    assert "'never-created'" in issue.msg
    assert "does not exist" in issue.msg
    assert issue.hint == f"Create it with: {FIX}"


def create_raw_table(keys):
    """A table made with botocore, keyed ``keys``: ``[(name, key type, attribute type)]``."""
    name = f"wrong-{uuid.uuid4().hex[:12]}"
    client = dynamodb_client()
    client.create_table(
        TableName=name,
        KeySchema=[{"AttributeName": attribute, "KeyType": key_type} for attribute, key_type, _ in keys],
        AttributeDefinitions=[{"AttributeName": attribute, "AttributeType": kind} for attribute, _, kind in keys],
        BillingMode="PAY_PER_REQUEST",
    )
    return name


@pytest.mark.dynamodb_local
@pytest.mark.parametrize(
    "keys",
    [
        [("id", "HASH", "S")],
        [("PK", "HASH", "S")],
        [("PK", "HASH", "S"), ("SK", "RANGE", "N")],
        [("SK", "HASH", "S"), ("PK", "RANGE", "S")],
    ],
    ids=["other key", "no sort key", "numeric sort key", "keys swapped"],
)
def test_w002_table_with_another_key_schema(local_endpoint, settings, keys):
    settings.ACCOUNTS_TABLE_NAME = create_raw_table(keys)
    try:
        [issue] = check_table(None)
    finally:
        dynamodb_client().delete_table(TableName=settings.ACCOUNTS_TABLE_NAME)

    assert issue.id == "accounts.W002"
    assert "not PK (HASH, S) + SK (RANGE, S)" in issue.msg
    assert FIX in issue.hint


@pytest.mark.dynamodb_local
def test_check_command_shows_the_missing_table_and_the_command_to_create_it(local_endpoint, settings):
    settings.ACCOUNTS_TABLE_NAME = "never-created"
    err = StringIO()

    call_command("check", stdout=StringIO(), stderr=err)

    assert "(accounts.W001) DynamoDB table 'never-created'" in err.getvalue()
    assert FIX in err.getvalue()


@pytest.mark.dynamodb_local
def test_createtable_creates_the_table_without_first_warning_that_it_is_missing(local_endpoint, settings, capsys):
    settings.ACCOUNTS_TABLE_NAME = f"created-{uuid.uuid4().hex[:12]}"

    # As typed in a shell, where commands run the system checks first unless they opt out.
    execute_from_command_line(["manage.py", "accounts_createtable"])

    output = capsys.readouterr()
    assert output.err == ""
    assert output.out.startswith(f"Created table {settings.ACCOUNTS_TABLE_NAME!r}")
    assert check_table(None) == []
    dynamodb_client().delete_table(TableName=settings.ACCOUNTS_TABLE_NAME)


def test_e013_unique_models_that_import_and_declare_key_prefix_pass(settings):
    settings.ACCOUNTS_UNIQUE_MODELS = ["accounts.examples.Player"]
    assert check_unique_models(None) == []


@pytest.mark.parametrize("entry", ["accounts.examples.NoSuchModel", "tests.engine.test_checks.NoAccount"])
def test_e013_unique_model_that_cannot_be_imported_or_has_no_key_prefix(settings, entry):
    settings.ACCOUNTS_UNIQUE_MODELS = [entry]
    assert ids(check_unique_models(None)) == ["accounts.E013"]


def test_the_test_settings_site_url_passes():
    assert check_site_url(None) == []


@pytest.mark.parametrize(
    "value",
    [
        None,
        "",
        "accounts.example.com",
        "ftp://accounts.example.com",
        "https://",
        "https://accounts.example.com/accounts/",
        "https://accounts.example.com/?next=/",
        "http://localhost:port",
    ],
)
def test_e014_site_url_missing_or_not_a_sites_address(settings, value):
    settings.ACCOUNTS_SITE_URL = value

    assert ids(check_site_url(None)) == ["accounts.E014"]


@pytest.mark.parametrize(
    "value", ["https://accounts.example.com", "https://accounts.example.com/", "http://localhost:8000"]
)
def test_e014_not_raised_for_a_scheme_and_a_host(settings, value):
    settings.ACCOUNTS_SITE_URL = value

    assert check_site_url(None) == []


def many_fields(extra):
    """The default unique fields and ``extra`` more (three locks: email, username, its skeleton)."""
    fields = {
        "email": {"namespace": "EMAIL"},
        "username": {"namespace": "HANDLE", "skeleton_namespace": "HANDLE_SKEL"},
    }
    fields.update({f"field{n}": {"namespace": f"F{n}", "allow_empty": True} for n in range(extra)})
    return fields


def test_e015_unique_fields_whose_deletion_with_the_most_passkeys_exceeds_100_actions(settings):
    # 57 more fields: 60 locks, 20 passkey locks and 20 credential items, and the account:
    # an account with the most passkeys is deleted in 101 actions (61 without its passkeys).
    settings.ACCOUNTS_UNIQUE_FIELDS = many_fields(57)

    [issue] = check_transaction_sizes(None)

    assert issue.id == "accounts.E015"
    assert "101 actions" in issue.msg


def test_w005_unique_fields_whose_change_of_all_at_once_exceeds_100_actions(settings):
    # 27 more fields: 30 moved locks (60 actions), 40 kept passkey locks and items, the account.
    settings.ACCOUNTS_UNIQUE_FIELDS = many_fields(27)

    [issue] = check_transaction_sizes(None)

    assert issue.id == "accounts.W005"
    assert "101 actions" in issue.msg


def test_unique_fields_that_fit_a_transaction_pass(settings):
    settings.ACCOUNTS_UNIQUE_FIELDS = many_fields(26)

    assert check_transaction_sizes(None) == []
