"""A run killed at any point (``kill -9`` at a random batch, twice) and run again ends with
the same accounts as one run, no duplicate and a clean audit; a live sign-up racing the import
for a name of the source leaves exactly one holder, the other told (a form error, or a line
of the report)."""

import json
import os
import random
import re
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest
from django.test import Client

from accounts import store
from accounts.imports.candidates import account_id_of
from accounts.imports.records import SourceUser
from accounts.tables import ACCOUNT_PREFIX, TableModel, dynamodb_client
from tests.imports import run_import, write_jsonl
from tests.staff import run_command
from tests.web import signup_data, stored_accounts

pytestmark = pytest.mark.dynamodb_local

BASE_DIR = Path(__file__).resolve().parents[2]
USERS = 1500
SETTINGS = """
import os

from tests.settings import *  # noqa: F403

ACCOUNTS_ENDPOINT_URL = os.environ["IMPORT_ENDPOINT_URL"]
ACCOUNTS_TABLE_NAME = os.environ["IMPORT_TABLE_NAME"]
"""


def source_users(count):
    # Every 50th user shares its address with the one before (a conflict of the source).
    return [
        {
            "id": index,
            "email": f"user{index - 1 if index % 50 == 0 else index}@example.com",
            "username": f"user{index}",
            "email_verified": True,
        }
        for index in range(1, count + 1)
    ]


def account_count():
    """Accounts in the table (a test-only Scan, counted by DynamoDB)."""
    pages = (
        dynamodb_client()
        .get_paginator("scan")
        .paginate(
            TableName=TableModel.Meta.table_name,
            Select="COUNT",
            FilterExpression="begins_with(PK, :account)",
            ExpressionAttributeValues={":account": {"S": ACCOUNT_PREFIX}},
            ConsistentRead=True,
        )
    )
    return sum(page["Count"] for page in pages)


def start_import(tmp_path, ddb, source):
    """``manage.py accounts_import source`` in a process of its own, on this test's table."""
    (tmp_path / "import_settings.py").write_text(SETTINGS)
    environment = {
        **os.environ,
        "DJANGO_SETTINGS_MODULE": "import_settings",
        "PYTHONPATH": f"{tmp_path}{os.pathsep}{BASE_DIR}",
        "IMPORT_ENDPOINT_URL": ddb.endpoint_url,
        "IMPORT_TABLE_NAME": TableModel.Meta.table_name,
    }
    return subprocess.Popen(
        [sys.executable, "manage.py", "accounts_import", str(source), "--workers", "1"],
        cwd=BASE_DIR,
        env=environment,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )


def kill_at_a_random_batch(process, at_least):
    """``kill -9`` the import once it wrote more than ``at_least`` accounts and a random
    number more; returns how many there were just before."""
    target = at_least + random.randint(1, 400)
    deadline = time.monotonic() + 300
    while process.poll() is None and time.monotonic() < deadline:
        written = account_count()
        if written >= target:
            process.send_signal(signal.SIGKILL)
            process.wait()
            return written
        time.sleep(0.05)
    pytest.fail(f"The import ended (status {process.returncode}) before it wrote {target} accounts.")


def test_an_import_killed_twice_then_run_again_has_the_accounts_of_one_run(ddb, tmp_path):
    users = source_users(USERS)
    source = write_jsonl(tmp_path / "users.jsonl", *users)
    expected = sorted(account_id_of(SourceUser(user["id"])) for user in users if user["id"] % 50)

    first = kill_at_a_random_batch(start_import(tmp_path, ddb, source), 0)
    second = kill_at_a_random_batch(start_import(tmp_path, ddb, source), first)
    final = run_import(source, report=tmp_path / "report.jsonl")

    assert 0 < first < second < len(expected)
    assert sorted(account.id for account in stored_accounts()) == expected
    numbers = re.search(r"([\d,]+) imported, ([\d,]+) already there", final.stdout).groups()
    imported, already_there = (int(number.replace(",", "")) for number in numbers)
    assert imported + already_there == len(expected) and already_there >= second
    assert {line["code"] for line in final.report} == {"same_email"}
    assert len(final.report) == USERS // 50
    status, out, _ = run_command("accounts_audit")
    assert status == 0, out


def test_a_live_signup_racing_the_import_for_a_name_leaves_one_holder_and_tells_the_other(ddb, tmp_path):
    users = [{"id": index, "email": f"old{index}@example.com", "username": f"name{index}"} for index in range(300)]
    source = write_jsonl(tmp_path / "users.jsonl", *users)
    raced = list(range(0, 300, 15))
    results = {}

    def sign_up_the_same_names():
        for index in raced:
            client = Client()
            response = client.post("/accounts/signup/", signup_data(client, f"new{index}@example.com", f"name{index}"))
            results[index] = response.status_code == 302

    signups = threading.Thread(target=sign_up_the_same_names)
    signups.start()
    run = run_import(source, report=tmp_path / "report.jsonl")
    signups.join()

    reported = {line["source_id"] for line in run.report if line["code"] == "taken_on_site"}
    for index in raced:
        holder = store.get_by_username(f"name{index}")
        assert holder is not None
        if results[index]:
            assert holder.email == f"new{index}@example.com" and index in reported
        else:
            assert holder.email == f"old{index}@example.com" and index not in reported
    assert len(stored_accounts()) == 300
    assert json.dumps(sorted(reported)) == json.dumps(sorted(index for index in raced if results[index]))
