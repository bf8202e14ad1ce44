"""The recipes of docs/moving-users-in.md, taken from the page itself and run: the commands
from Django, the JSON-lines example, Auth0's and Cognito's conversions, the mail that tells
Cognito's users to reset, the offline path up to the audit (and the ``import-table``
parameters it gives, against the table the app makes), and the cost the page states."""

import json
import math
import re
import shlex
from pathlib import Path

import bcrypt
import pytest
from django.core import mail
from django.test import Client

from accounts import store
from accounts.costs import item_size
from accounts.imports.candidates import build_candidate
from accounts.imports.records import SourceUser
from accounts.tables import TTL_ATTRIBUTE, Account
from tests.imports import SITE_HASHERS, run_import
from tests.imports.allauth_site import sqlite_site
from tests.staff import run_command
from tests.web import PASSWORD, login, stored_accounts

pytestmark = pytest.mark.dynamodb_local

PAGE = Path(__file__).resolve().parents[2] / "docs" / "moving-users-in.md"
FENCE = re.compile(r"^```(\w+)\n(.*?)^```", re.S | re.M)


def section(heading):
    """The text of the page under ``heading`` (a line ``## ...`` or ``### ...``), up to the next."""
    text = PAGE.read_text()
    start = text.index(f"\n{heading}\n")
    following = re.search(r"\n#{2,3} ", text[start + len(heading) + 2 :])
    return text[start : start + len(heading) + 2 + following.start()] if following else text[start:]


def blocks(heading, language):
    return [code for kind, code in FENCE.findall(section(heading)) if kind == language]


def commands(code, program="python manage.py "):
    """The page's command lines (joined where they continue with a backslash)."""
    joined = code.replace("\\\n", " ")
    return [shlex.split(line[len(program) :]) for line in joined.splitlines() if line.startswith(program)]


def run_script(code, monkeypatch, *argv):
    """Run a recipe's Python block as ``python script.py *argv`` in the current directory."""
    monkeypatch.setattr("sys.argv", ["script.py", *argv])
    exec(compile(code, "recipe.py", "exec"), {"__name__": "__main__"})


def test_the_recipe_from_django_dry_runs_then_imports(ddb, tmp_path, monkeypatch):
    site = sqlite_site(tmp_path / "site")
    site.make_users(
        {
            "username": "ada",
            "email": "ada@example.com",
            "addresses": [{"email": "ada@example.com", "verified": True, "primary": True}],
        },
        {"username": "bob", "email": "bob@example.com"},
        {"username": "BOB", "email": "bob2@example.com"},
    )
    monkeypatch.chdir(tmp_path)
    [code] = blocks("## From Django and django-allauth", "sh")
    runs = []
    for args in commands(code):
        assert args[1] == "sqlite:////srv/old-site/db.sqlite3"
        args[1] = site.url
        runs.append(run_import(*args[1:], report=None))
    dry, real = (Path(args[-1]).read_text() for args in commands(code))

    assert [run.status for run in runs] == [1, 1]
    assert sorted(dry.splitlines()) == sorted(real.splitlines())
    assert sorted(account.username for account in stored_accounts()) == ["ada", "bob"]


def test_the_json_lines_example_is_imported(ddb, settings, tmp_path, monkeypatch):
    settings.PASSWORD_HASHERS = SITE_HASHERS
    monkeypatch.chdir(tmp_path)
    [example] = blocks("## From a JSON-lines file", "json")
    (tmp_path / "users.jsonl").write_text(example)
    [code] = blocks("## From a JSON-lines file", "sh")

    [args] = commands(code)
    run = run_import(*args[1:])

    assert run.status == 0, run.stderr
    grace = store.get_by_username("grace")
    assert (grace.is_staff, grace.email_verified) == (True, True)
    assert store.get_by_username("ada").password.startswith("bcrypt$$2b$10$")


def test_the_auth0_recipe_brings_its_users_in_with_their_bcrypt_passwords(ddb, settings, tmp_path, monkeypatch):
    settings.PASSWORD_HASHERS = SITE_HASHERS
    monkeypatch.chdir(tmp_path)
    hashed = bcrypt.hashpw(PASSWORD.encode(), bcrypt.gensalt(rounds=4)).decode()
    (tmp_path / "auth0-users.ndjson").write_text(
        json.dumps(
            {
                "user_id": "auth0|1",
                "email": "Ada@Example.com",
                "email_verified": True,
                "created_at": "2021-01-02T03:04:05.000Z",
                "last_login": "2024-05-06T07:08:09.000Z",
            }
        )
        + "\n"
        + json.dumps({"user_id": "google-oauth2|2", "email": "bob@example.com", "username": "bobby", "blocked": True})
        + "\n"
    )
    (tmp_path / "auth0-hashes.ndjson").write_text(
        json.dumps({"_id": {"$oid": "60425da"}, "email": "ada@example.com", "passwordHash": hashed}) + "\n"
    )
    [script] = blocks("### From Auth0", "python")

    run_script(script, monkeypatch, "auth0-users.ndjson", "auth0-hashes.ndjson")
    run = run_import(tmp_path / "users.jsonl")

    assert run.status == 0, run.stderr
    assert login(Client(), "Ada", PASSWORD).status_code == 302
    bobby = store.get_by_username("bobby")
    assert (bobby.is_active, bobby.imported["source_id"]) == (False, '"google-oauth2|2"')


def test_the_cognito_recipe_imports_without_passwords_and_mails_each_verified_user_the_reset_page(
    ddb, tmp_path, monkeypatch
):
    monkeypatch.chdir(tmp_path)
    [export_command] = blocks("### From Amazon Cognito", "sh")
    assert export_command.startswith("aws cognito-idp list-users --user-pool-id ")
    users = {
        "Users": [
            {
                "Username": "7c1d",
                "Attributes": [
                    {"Name": "sub", "Value": "7c1d-uuid"},
                    {"Name": "email", "Value": "ada@example.com"},
                    {"Name": "email_verified", "Value": "true"},
                    {"Name": "preferred_username", "Value": "ada"},
                ],
                "UserCreateDate": "2022-02-03T04:05:06.789000+00:00",
                "Enabled": True,
            },
            {
                "Username": "carol",
                "Attributes": [
                    {"Name": "email", "Value": "carol@example.com"},
                    {"Name": "email_verified", "Value": "false"},
                ],
                "UserCreateDate": "2023-01-01T00:00:00+00:00",
                "Enabled": True,
            },
        ]
    }
    (tmp_path / "cognito-users.json").write_text(json.dumps(users))
    convert, tell = blocks("### From Amazon Cognito", "python")

    run_script(convert, monkeypatch, "cognito-users.json")
    run = run_import(tmp_path / "users.jsonl")
    exec(compile(tell, "tell.py", "exec"), {"__name__": "__main__"})

    assert run.status == 0, run.stderr
    assert sorted(account.username for account in stored_accounts()) == ["ada", "carol"]
    assert [message.to for message in mail.outbox] == [["ada@example.com"]]
    assert "http://testserver/accounts/password/reset/" in mail.outbox[0].body


def test_the_offline_path_writes_an_export_the_audit_finds_consistent_for_the_table_the_app_makes(
    ddb, tmp_path, monkeypatch
):
    monkeypatch.chdir(tmp_path)
    site = sqlite_site(tmp_path / "site")
    site.make_users(
        {"username": "ada", "email": "ada@example.com"}, {"username": "grace", "email": "grace@example.com"}
    )
    code = blocks("## The offline path: a new table from an export", "sh")[0]
    to_export, audit_export = commands(code)
    to_export[1] = site.url

    run = run_import(*to_export[1:], report=None)
    status, out, _ = run_command(*audit_export)

    assert run.status == 0 and status == 0, out
    [folder] = (tmp_path / "users-export" / "AWSDynamoDB").iterdir()
    assert (folder / "data").is_dir()
    [import_table] = commands(code, "aws dynamodb import-table ")
    options = dict(zip(import_table[0::2], import_table[1::2], strict=True))
    assert options["--s3-bucket-source"].endswith("/AWSDynamoDB/EXPORT_ID/data/")
    assert (options["--input-format"], options["--input-compression-type"]) == ("DYNAMODB_JSON", "GZIP")
    created = json.loads(options["--table-creation-parameters"])
    schema = Account._get_schema()
    assert created["KeySchema"] == schema["key_schema"]
    assert sorted(created["AttributeDefinitions"], key=str) == sorted(schema["attribute_definitions"], key=str)
    assert f"AttributeName={TTL_ATTRIBUTE}" in code


def test_the_cost_the_page_states_is_what_a_users_transaction_writes(ddb):
    user = SourceUser(1, email="ada@example.com", username="ada", email_verified=True)
    plan = build_candidate(user, {}).plan()

    units = sum(2 * math.ceil(item_size(action.body.get("Item", {"PK": {"S": "x"}})) / 1024) for action in plan.actions)

    assert units == 8
    assert "8 write units a user" in PAGE.read_text()
    assert f"**${units * 0.625:.2f}**" in PAGE.read_text()
