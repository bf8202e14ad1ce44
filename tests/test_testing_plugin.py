"""The pytest plugin host projects get (accounts.testing): accounts_table and its helpers.

The host-project runs start a pytest of their own, under tests/hostproject's settings, in
a directory of their own, as a project that installed the app would.
"""

import os
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest
from django.conf import settings as django_settings

from accounts import store
from accounts.app_settings import app_settings
from accounts.models import User
from accounts.tables import dynamodb_client
from accounts.testing import is_aws_endpoint, unique_fields
from tests.web import PASSWORD

ROOT = Path(__file__).resolve().parent.parent

HOST_TESTS = textwrap.dedent(
    '''
    from accounts import store
    from accounts.models import User
    from accounts.testing import unique_fields

    PHONE = {"namespace": "PHONE", "normalizer": "tests.hostproject.phones.normalize_phone", "allow_empty": True}


    def test_signup_page_stores_an_account_in_the_fresh_table(accounts_table, client, settings):
        page = client.get("/members/signup/")
        data = {"email": "ada@example.com", "username": "ada", "password1": "Tangerine-Sky-Runner-7",
                "password2": "Tangerine-Sky-Runner-7", "phone": "+1 555 010 9999",
                "token": page.context["form"]["token"].value()}
        response = client.post("/members/signup/", data)
        assert response.status_code == 302, response.content
        assert settings.ACCOUNTS_TABLE_NAME == accounts_table.name
        print("TABLE", accounts_table.name, accounts_table.endpoint_url)
        assert store.get_by_username("ADA").phone == "+1 555 010 9999"


    def test_each_test_starts_empty_and_force_login_works(accounts_table, client):
        assert store.get_by_username("ada") is None
        user = User.objects.create_user("ada", "ada@example.com", "pw", phone="+15550109999")
        client.force_login(user)
        assert client.get("/members/profile/").status_code == 200
        assert user.phone == "+15550109999"


    @unique_fields(nickname={"namespace": "NICK"}, account_model="tests.hostproject.tables.MemberAccount")
    def test_unique_fields_declares_one_for_this_test(settings):
        assert set(settings.ACCOUNTS_UNIQUE_FIELDS) == {"email", "username", "phone", "nickname"}
    '''
)


def run_host_tests(tmp_path, endpoint_url=None):
    """``(exit code, output)`` of pytest on HOST_TESTS under the members site's settings."""
    (tmp_path / "test_host.py").write_text(HOST_TESTS)
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
def test_host_project_tests_on_dynamodb_local_get_fresh_tables_deleted_after(tmp_path, ddb, dynamodb_local):
    before = table_names()

    code, output = run_host_tests(tmp_path, dynamodb_local.endpoint_url)

    assert code == 0, output
    assert "3 passed" in output
    assert "TABLE test-" in output and dynamodb_local.endpoint_url in output
    assert table_names() == before


def test_host_project_tests_without_an_endpoint_run_on_moto(tmp_path):
    code, output = run_host_tests(tmp_path)

    assert code == 0, output
    assert "3 passed" in output
    assert "TABLE test-" in output and " None" in output


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
