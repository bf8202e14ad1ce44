"""Sources that are not what they say: refused in one line with exit status 2 and nothing
written (no file, not a database, an unknown scheme, no user table, a column missing), or,
for a user the source cannot give sanely (NUL bytes, lone surrogates, a 10 kB username, an
id twice, a line that is no JSON), that user reported and never a part of it written."""

import os
import sqlite3
import subprocess
import sys
from pathlib import Path

import pytest

from accounts.uniqueness import LOCK_PREFIX
from tests.imports import run_import, write_jsonl
from tests.staff import run_command
from tests.web import stored_accounts

pytestmark = pytest.mark.dynamodb_local

BASE_DIR = Path(__file__).resolve().parents[2]


def table_is_consistent():
    status, out, _ = run_command("accounts_audit")
    return status == 0, out


def lock_keys_in_table():
    from accounts.tables import Lock

    return sorted(lock.PK for lock in Lock.scan(Lock.PK.startswith(LOCK_PREFIX), consistent_read=True))


def manage_py(*args):
    """``manage.py`` as a person runs it: ``(status, stdout, stderr)``."""
    environment = {**os.environ, "DJANGO_SETTINGS_MODULE": "tests.settings"}
    result = subprocess.run(
        [sys.executable, "manage.py", *args], cwd=BASE_DIR, env=environment, capture_output=True, text=True, timeout=120
    )
    return result.returncode, result.stdout, result.stderr


def test_a_missing_file_is_refused_in_one_line_without_a_traceback(tmp_path):
    status, stdout, stderr = manage_py("accounts_import", str(tmp_path / "missing.jsonl"))

    # (The system checks warn first: tests.settings point at a closed port for DynamoDB.)
    assert status == 2
    assert stderr.strip().splitlines()[-1] == (
        f"CommandError: The source {tmp_path / 'missing.jsonl'} cannot be read: No such file or directory."
    )
    assert "Traceback" not in stdout + stderr


def test_a_file_that_is_not_a_database_is_refused_in_one_line(tmp_path):
    garbage = tmp_path / "db.sqlite3"
    garbage.write_bytes(os.urandom(4096))

    status, stdout, stderr = manage_py("accounts_import", f"sqlite:///{garbage}")

    assert status == 2
    assert stderr.strip().splitlines()[-1] == "CommandError: The source database cannot be read: file is not a database"
    assert "Traceback" not in stdout + stderr


@pytest.mark.parametrize(
    ("source", "message"),
    [
        ("mongodb://host/db", "Unknown database scheme 'mongodb': use sqlite://, postgres:// or mysql://."),
        ("oracle://u:p@host/db", "accounts_import reads SQLite, PostgreSQL and MySQL databases, not oracle://."),
        ("sqlite:////nowhere/db.sqlite3", "No SQLite database at '/nowhere/db.sqlite3'"),
    ],
)
def test_an_unknown_scheme_or_a_missing_database_is_refused(ddb, source, message):
    run = run_import(source)

    assert run.status == 2
    assert message in run.stderr
    assert stored_accounts() == []


def test_a_sqlite_database_named_as_a_file_is_refused_with_its_url(ddb, tmp_path):
    path = tmp_path / "db.sqlite3"
    sqlite3.connect(path).execute("CREATE TABLE t (x)").connection.commit()

    run = run_import(path)

    assert run.status == 2
    assert f"name it by its URL, sqlite:///{path}" in run.stderr


def test_a_binary_file_is_no_json_lines_file(ddb, tmp_path):
    path = tmp_path / "users.jsonl"
    path.write_bytes(b"\x89PNG\r\n\x1a\n" + os.urandom(2000))

    run = run_import(path)

    assert run.status == 2
    assert "is not a JSON-lines file" in run.stderr


def test_a_user_table_without_the_expected_columns_is_refused(ddb, tmp_path):
    path = tmp_path / "db.sqlite3"
    connection = sqlite3.connect(path)
    connection.execute("CREATE TABLE auth_user (id INTEGER PRIMARY KEY, name TEXT)")
    connection.execute("INSERT INTO auth_user (name) VALUES ('ada')")
    connection.commit()

    missing = run_import(f"sqlite:///{path}")
    no_table = run_import(f"sqlite:///{path}", "--user-table", "users_user")

    assert missing.status == no_table.status == 2
    assert "The user table 'auth_user' has no column for email (email), password (password)" in missing.stderr
    assert "has no user table 'users_user'" in no_table.stderr
    assert stored_accounts() == []


def test_a_custom_user_table_is_read_through_its_column_mapping(ddb, tmp_path):
    path = tmp_path / "db.sqlite3"
    connection = sqlite3.connect(path)
    connection.execute(
        "CREATE TABLE members (uuid TEXT PRIMARY KEY, mail TEXT, handle TEXT, password TEXT, is_active BOOL)"
    )
    connection.execute("INSERT INTO members VALUES ('7f1e', 'ada@example.com', 'ada', '', 1)")
    connection.commit()

    run = run_import(
        f"sqlite:///{path}", "--user-table", "members", "--column", "email=mail", "--column", "username=handle"
    )

    assert run.status == 0, run.stderr
    [ada] = stored_accounts()
    assert (ada.email, ada.username, ada.imported["source_id"]) == ("ada@example.com", "ada", '"7f1e"')


def test_nul_bytes_lone_surrogates_and_a_10_kb_username_are_reported_and_nothing_of_them_written(ddb, tmp_path):
    source = write_jsonl(
        tmp_path / "users.jsonl",
        {"id": 1, "email": "ada@example.com", "username": "ad\u0000a"},
        '{"id": 2, "email": "bob\\ud800@example.com", "username": "bob"}',
        {"id": 3, "email": "carol@example.com", "username": "c" * 10_000},
        {"id": 4, "email": "dave@example.com", "username": "dave", "password": "pbkdf2_sha256$\u0000"},
        {"id": 5, "email": "erin@example.com", "username": "erin", "email_verified": True},
    )

    run = run_import(source, report=tmp_path / "report.jsonl")

    assert run.status == 1
    assert {line["source_id"]: (line["field"], line["code"]) for line in run.report} == {
        1: ("username", "invalid"),
        2: ("email", "invalid"),
        3: ("username", "invalid"),
        4: ("password", "invalid"),
    }
    assert [account.username for account in stored_accounts()] == ["erin"]
    assert len(lock_keys_in_table()) == 3  # erin's address, username and its look-alike key
    assert table_is_consistent()[0]


def test_invalid_utf8_in_a_database_is_a_reported_user(ddb, tmp_path):
    path = tmp_path / "db.sqlite3"
    connection = sqlite3.connect(path)
    connection.execute(
        "CREATE TABLE auth_user (id INTEGER PRIMARY KEY, email TEXT, username TEXT, password TEXT, is_active BOOL)"
    )
    connection.execute("INSERT INTO auth_user VALUES (1, 'ada@example.com', CAST(x'61ff64' AS TEXT), '', 1)")
    connection.execute("INSERT INTO auth_user VALUES (2, 'bob@example.com', 'bob', '', 1)")
    connection.commit()

    run = run_import(f"sqlite:///{path}", report=tmp_path / "report.jsonl")

    assert run.codes() == {1: ["invalid"]}
    assert [account.username for account in stored_accounts()] == ["bob"]


def test_users_sharing_an_id_are_all_left_out(ddb, tmp_path):
    source = write_jsonl(
        tmp_path / "users.jsonl",
        {"id": 7, "email": "ada@example.com", "username": "ada"},
        {"id": 7, "email": "bob@example.com", "username": "bob"},
        {"id": "7", "email": "carol@example.com", "username": "carol"},
    )

    run = run_import(source, report=tmp_path / "report.jsonl")

    assert sorted((line["source_id"], line["code"], line["line"]) for line in run.report if line["source_id"] == 7) == [
        (7, "duplicate_id", 1),
        (7, "duplicate_id", 2),
    ]
    assert [account.username for account in stored_accounts()] == ["carol"]


def test_a_line_that_is_no_json_object_is_reported_by_its_number(ddb, tmp_path):
    source = write_jsonl(
        tmp_path / "users.jsonl",
        {"id": 1, "email": "ada@example.com", "username": "ada"},
        "{not json",
        "[1, 2]",
        {"email": "noid@example.com", "username": "noid"},
    )

    run = run_import(source, report=tmp_path / "report.jsonl")

    assert sorted((line["line"], line["field"], line["code"]) for line in run.report) == [
        (2, "line", "invalid"),
        (3, "line", "invalid"),
        (4, "id", "invalid"),
    ]
    assert [account.username for account in stored_accounts()] == ["ada"]


def test_a_report_that_cannot_be_written_is_refused_before_anything_is(ddb, tmp_path):
    source = write_jsonl(tmp_path / "users.jsonl", {"id": 1, "email": "ada@example.com", "username": "ada"})

    run = run_import(source, report=tmp_path / "no" / "such" / "dir" / "report.jsonl")

    assert run.status == 2
    assert "The report cannot be written" in run.stderr
    assert stored_accounts() == []
