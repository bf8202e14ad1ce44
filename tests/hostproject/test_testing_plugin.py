"""The pytest plugin host projects get (accounts.testing): accounts_table and its helpers.

The host-project runs start a pytest of their own, under tests/hostproject's settings, in
a directory of their own, as a project that installed the app would.
"""

import os
import re
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest
from django.conf import settings as django_settings

from accounts import store
from accounts.app_settings import app_settings
from accounts.models import User
from accounts.tables import KEY_VERSION_ITEM, TableModel, create_table, dynamodb_client
from accounts.testing import is_aws_endpoint, unique_fields
from tests.web import PASSWORD

ROOT = Path(__file__).resolve().parents[2]

HOST_TESTS = textwrap.dedent(
    """
    from accounts import store
    from accounts.testing import unique_fields

    PASSWORD = "Tangerine-Sky-Runner-7"


    def test_signup_page_stores_an_account_in_the_table(accounts_table, client, settings):
        page = client.get("/members/signup/")
        data = {"email": "ada@example.com", "username": "ada", "password1": PASSWORD, "password2": PASSWORD,
                "phone": "+1 555 010 9999", "token": page.context["form"]["token"].value()}
        response = client.post("/members/signup/", data)
        assert response.status_code == 302, response.content
        assert settings.ACCOUNTS_TABLE_NAME == accounts_table.name
        print("TABLE", accounts_table.name, accounts_table.endpoint_url)
        assert store.get_by_username("ADA").phone == "+1 555 010 9999"


    def test_each_test_starts_empty_and_force_login_works(accounts_table, client, django_user_model):
        print("TABLE", accounts_table.name, accounts_table.endpoint_url)
        assert store.get_by_username("ada") is None
        user = django_user_model.objects.create_user("ada", "ada@example.com", PASSWORD, phone="+15550109999")
        client.force_login(user)
        assert client.get("/members/profile/").status_code == 200
        assert user.phone == "+15550109999"


    def test_client_login_and_admin_client_need_no_sql_database(admin_client, client, django_user_model, accounts_table):
        django_user_model.objects.create_user("ada", "ada@example.com", PASSWORD)
        assert client.login(username="ada", password=PASSWORD)
        assert client.get("/members/profile/").status_code == 200
        assert admin_client.get("/backoffice/").status_code == 200


    @unique_fields(nickname={"namespace": "NICK"}, account_model="tests.hostproject.tables.MemberAccount")
    def test_unique_fields_declares_one_for_this_test(settings):
        assert set(settings.ACCOUNTS_UNIQUE_FIELDS) == {"email", "username", "phone", "nickname"}
    """
)
HOST_TEST_COUNT = 4
FORGETFUL_TESTS = textwrap.dedent(
    """
    from accounts import store
    from accounts.models import User


    def test_reads_without_the_fixture():
        store.get_by_username("ada")


    def test_writes_without_the_fixture(client):
        User.objects.create_user("ada", "ada@example.com", "a password")
    """
)


def run_host_tests(tmp_path, endpoint_url=None, tests=HOST_TESTS):
    """``(exit code, output)`` of pytest on ``tests`` under the members site's settings."""
    (tmp_path / "test_host.py").write_text(tests)
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    env.pop("MEMBERS_DYNAMODB_ENDPOINT_URL", None)
    if endpoint_url:
        env["MEMBERS_DYNAMODB_ENDPOINT_URL"] = endpoint_url
    command = [sys.executable, "-m", "pytest", "-p", "accounts.testing", "--ds", "tests.hostproject.settings"]
    result = subprocess.run(
        [*command, "-p", "no:cacheprovider", "-q", "-s", "--rootdir", str(tmp_path), str(tmp_path / "test_host.py")],
        cwd=tmp_path,
        env=env,
        capture_output=True,
        text=True,
        timeout=300,
    )
    return result.returncode, result.stdout + result.stderr


def tables_used(output):
    """The ``(name, endpoint)`` each host test printed."""
    return re.findall(r"TABLE (\S+) (\S+)", output)


def table_names():
    return set(dynamodb_client().list_tables()["TableNames"])


@pytest.mark.dynamodb_local
def test_accounts_table_is_a_fresh_table_the_settings_point_at(accounts_table, dynamodb_local, settings):
    assert accounts_table.name.startswith("test-")
    assert accounts_table.endpoint_url == dynamodb_local.endpoint_url
    assert settings.ACCOUNTS_TABLE_NAME == accounts_table.name
    # Nothing but the item recording the key version its locks will be keyed with.
    [item] = dynamodb_client().scan(TableName=accounts_table.name)["Items"]
    assert item["PK"] == {"S": "META#KEYS"}
    User.objects.create_user("ada", "ada@example.com", PASSWORD)
    assert store.get_by_email("ada@example.com").username == "ada"


@pytest.mark.dynamodb_local
def test_host_project_tests_on_dynamodb_local_share_one_table_emptied_between_tests_and_deleted_after(
    tmp_path, ddb, dynamodb_local
):
    before = table_names()

    code, output = run_host_tests(tmp_path, dynamodb_local.endpoint_url)

    assert code == 0, output
    assert f"{HOST_TEST_COUNT} passed" in output
    [(name, endpoint), (same_name, _)] = tables_used(output)
    assert name.startswith("test-") and name == same_name
    assert endpoint == dynamodb_local.endpoint_url
    assert table_names() == before


def test_host_project_tests_without_an_endpoint_run_on_moto(tmp_path):
    code, output = run_host_tests(tmp_path)

    assert code == 0, output
    assert f"{HOST_TEST_COUNT} passed" in output
    [(name, endpoint), (same_name, _)] = tables_used(output)
    assert name == same_name and endpoint == "None"


@pytest.mark.dynamodb_local
def test_a_test_without_accounts_table_fails_naming_it_and_sends_nothing(tmp_path, dynamodb_local, settings):
    settings.ACCOUNTS_ENDPOINT_URL = dynamodb_local.endpoint_url
    settings.ACCOUNTS_TABLE_NAME = "members"
    create_table(wait=True)
    try:
        code, output = run_host_tests(tmp_path, dynamodb_local.endpoint_url, tests=FORGETFUL_TESTS)
        stored = dynamodb_client().scan(TableName="members")["Items"]
    finally:
        TableModel.delete_table()

    assert code == 1
    assert "2 failed" in output
    for operation in ("GetItem", "TransactWriteItems"):
        assert (
            f"{operation} on the accounts table 'members' from a test without the accounts_table fixture; "
            "nothing was sent. Add accounts_table to the test's arguments" in output
        ), output
    # Nothing but the key version create_table recorded.
    assert [item for item in stored if item["PK"] != KEY_VERSION_ITEM["PK"]] == []


def test_a_test_without_accounts_table_reaches_no_moto_table_either(tmp_path):
    code, output = run_host_tests(tmp_path, tests=FORGETFUL_TESTS)

    assert code == 1
    assert "2 failed" in output
    assert "TransactWriteItems on the accounts table 'members' from a test without the accounts_table fixture" in output


def test_accounts_table_refuses_aws_real_endpoint(tmp_path):
    code, output = run_host_tests(tmp_path, "https://dynamodb.eu-west-1.amazonaws.com")

    assert code != 0
    assert "refuses to create tables on AWS's real endpoint https://dynamodb.eu-west-1.amazonaws.com" in output
    assert "accounts_allow_aws" in output
    assert "1 passed" in output  # the test that asks for no table


@pytest.mark.parametrize(
    "url, aws",
    [
        ("https://dynamodb.us-east-1.amazonaws.com", True),
        ("https://dynamodb.cn-north-1.amazonaws.com.cn", True),
        ("https://dynamodb.eu-west-1.api.aws", True),
        ("http://127.0.0.1:8001", False),
        ("http://localhost:8000", False),
    ],
)
def test_is_aws_endpoint(url, aws):
    assert is_aws_endpoint(url) is aws


def test_unique_fields_adds_to_the_declared_fields_and_names_the_model():
    with unique_fields(phone={"namespace": "PHONE"}, account_model="tests.hostproject.tables.MemberAccount"):
        assert set(django_settings.ACCOUNTS_UNIQUE_FIELDS) == {"email", "username", "phone"}
        assert django_settings.ACCOUNTS_ACCOUNT_MODEL == "tests.hostproject.tables.MemberAccount"
    assert set(app_settings.UNIQUE_FIELDS) == {"email", "username"}
