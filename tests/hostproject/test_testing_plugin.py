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
from botocore.exceptions import ClientError
from django.conf import settings as django_settings

from accounts import store
from accounts.app_settings import app_settings
from accounts.models import User
from accounts.tables import KEY_VERSION_ITEM, TableModel, create_table, dynamodb_client
from accounts.testing import EMPTIED_MARKER, SessionTables, is_aws_endpoint, unique_fields
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

FOREIGN_WRITER_TESTS = textwrap.dedent(
    f"""
    import subprocess
    import sys

    import pytest

    from accounts.tables import KEY_VERSION_ITEM, dynamodb_client

    WRITER = (
        "import sys, botocore.session; "
        "client = botocore.session.get_session().create_client('dynamodb', region_name='eu-west-1', "
        "endpoint_url=sys.argv[1], aws_access_key_id='local', aws_secret_access_key='local'); "
        "client.put_item(TableName=sys.argv[2], Item={{'PK': {{'S': 'FOREIGN'}}, 'SK': {{'S': sys.argv[3]}}}})"
    )


    def write_from_another_process(table, name):
        subprocess.run([sys.executable, "-c", WRITER, table.endpoint_url, table.name, name], check=True)


    @pytest.mark.{EMPTIED_MARKER}
    def test_another_process_writes_in_a_marked_test(accounts_table):
        write_from_another_process(accounts_table, "marked")


    def test_the_next_test_starts_empty(accounts_table):
        items = dynamodb_client().scan(TableName=accounts_table.name, ConsistentRead=True)["Items"]
        assert [{{"PK": item["PK"], "SK": item["SK"]}} for item in items] == [KEY_VERSION_ITEM]


    def test_another_process_writes_in_an_unmarked_test(accounts_table):
        write_from_another_process(accounts_table, "unmarked")
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


@pytest.fixture
def session_tables(dynamodb_local, settings):
    """Session tables of the test's own (not the suite's) on DynamoDB Local, which the
    settings point at; deleted after the test."""
    settings.ACCOUNTS_ENDPOINT_URL = dynamodb_local.endpoint_url
    tables = SessionTables()
    yield tables
    tables.delete_all()


def stored_keys(table_name):
    """The keys of every item of the table, sorted."""
    items = dynamodb_client().scan(TableName=table_name, ConsistentRead=True)["Items"]
    return sorted(({"PK": item["PK"], "SK": item["SK"]} for item in items), key=repr)


def key(name):
    return {"PK": {"S": f"ITEM#{name}"}, "SK": {"S": "DATA"}}


def table_of_the_test(session_tables, settings, dynamodb_local):
    """The test's table, made with nothing in it, the settings pointing at it."""
    with session_tables.table(dynamodb_local.endpoint_url) as table:
        settings.ACCOUNTS_TABLE_NAME = table.name
    return table


@pytest.mark.dynamodb_local
def test_only_what_a_test_writes_is_deleted_after_it_through_every_write_operation(
    session_tables, settings, dynamodb_local
):
    table = table_of_the_test(session_tables, settings, dynamodb_local)
    client = dynamodb_client()
    client.put_item(TableName=table.name, Item=key("before"))  # not the test's: outside it

    with session_tables.table(dynamodb_local.endpoint_url):
        client = dynamodb_client()
        client.put_item(TableName=table.name, Item=key("put"))
        client.update_item(
            TableName=table.name,
            Key=key("update"),
            UpdateExpression="SET v = :v",
            ExpressionAttributeValues={":v": {"N": "1"}},
        )
        client.put_item(TableName=table.name, Item=key("deleted"))
        client.delete_item(TableName=table.name, Key=key("deleted"))
        for batch in range(2):  # more than one BatchWriteItem of deletes after the test
            puts = [{"PutRequest": {"Item": key(f"batch{batch}-{number}")}} for number in range(15)]
            client.batch_write_item(RequestItems={table.name: puts})
        client.transact_write_items(
            TransactItems=[
                {"Put": {"TableName": table.name, "Item": key("transact-put")}},
                {
                    "Update": {
                        "TableName": table.name,
                        "Key": key("transact-update"),
                        "UpdateExpression": "SET v = :v",
                        "ExpressionAttributeValues": {":v": {"N": "1"}},
                    }
                },
            ]
        )
        User.objects.create_user("ada", "ada@example.com", PASSWORD)  # the app's own clients
        client.delete_item(TableName=table.name, Key=KEY_VERSION_ITEM)
        assert len(stored_keys(table.name)) > 36

    assert stored_keys(table.name) == sorted([KEY_VERSION_ITEM, key("before")], key=repr)
    assert client.get_item(TableName=table.name, Key=KEY_VERSION_ITEM)["Item"]["key_version"]


@pytest.mark.dynamodb_local
def test_items_written_before_a_test_stay_are_reported_and_go_with_the_marker(session_tables, settings, dynamodb_local):
    table = table_of_the_test(session_tables, settings, dynamodb_local)
    dynamodb_client().put_item(TableName=table.name, Item=key("session-fixture"))

    with session_tables.table(dynamodb_local.endpoint_url):
        assert key("session-fixture") in stored_keys(table.name)
    assert session_tables.left_behind() == {
        table.name: [f"{key('session-fixture')['PK']['S']}|{key('session-fixture')['SK']['S']}"]
    }

    with session_tables.table(dynamodb_local.endpoint_url, emptied=True):
        pass
    assert stored_keys(table.name) == [KEY_VERSION_ITEM]
    assert session_tables.left_behind() == {}


@pytest.mark.dynamodb_local
def test_a_write_whose_keys_cannot_be_read_empties_the_whole_table(session_tables, settings, dynamodb_local):
    table = table_of_the_test(session_tables, settings, dynamodb_local)
    dynamodb_client().put_item(TableName=table.name, Item=key("before"))

    with session_tables.table(dynamodb_local.endpoint_url):
        statement = f"INSERT INTO \"{table.name}\" VALUE {{'PK': 'ITEM#partiql', 'SK': 'DATA'}}"
        dynamodb_client().execute_statement(Statement=statement)

    assert stored_keys(table.name) == [KEY_VERSION_ITEM]


@pytest.mark.dynamodb_local
def test_writes_from_another_process_go_when_the_test_is_marked_and_fail_the_run_when_not(tmp_path, dynamodb_local):
    code, output = run_host_tests(tmp_path, dynamodb_local.endpoint_url, tests=FOREIGN_WRITER_TESTS)

    assert code == 1, output
    assert "3 passed, 1 error" in output, output
    assert "Items written where the accounts_table plugin could not see them were left in {'test-" in output
    assert f"Mark such a test @pytest.mark.{EMPTIED_MARKER}." in output


@pytest.mark.dynamodb_local
def test_a_write_dynamodb_refuses_is_answered_by_dynamodb_and_empties_the_table(
    session_tables, settings, dynamodb_local
):
    table = table_of_the_test(session_tables, settings, dynamodb_local)
    dynamodb_client().put_item(TableName=table.name, Item=key("before"))

    # The app's clients skip botocore's validation: an item without its sort key is sent.
    with session_tables.table(dynamodb_local.endpoint_url), pytest.raises(ClientError, match="ValidationException"):
        dynamodb_client().put_item(TableName=table.name, Item={"PK": {"S": "ITEM#no-sort-key"}})

    assert stored_keys(table.name) == [KEY_VERSION_ITEM]


def test_an_endpoint_that_cannot_be_reached_fails_each_test_in_a_line_naming_the_setting(tmp_path):
    from accounts.dynamodb_local import free_port

    endpoint = f"http://127.0.0.1:{free_port()}"  # nothing listens there

    code, output = run_host_tests(tmp_path, endpoint)

    assert code == 1
    message = f"DynamoDB at {endpoint} (ACCOUNTS_ENDPOINT_URL) cannot be reached, so accounts_table has no table"
    assert "3 errors" in output and "1 passed" in output, output
    # Counted in the errors' own sections: the summary below them repeats the line when the
    # terminal is wide enough to hold it.
    error_sections = output.split("short test summary info")[0]
    assert error_sections.count(message) == 3, output
    assert "Connection refused" not in output and "Could not connect" not in output, output
