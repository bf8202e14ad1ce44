"""The offline path: ``--to-export DIR`` writes no table but the items a run would create, in
DynamoDB's export layout; ``accounts_audit --from-export`` finds it consistent, and it holds
the very items a real import writes."""

import gzip
import json
from pathlib import Path

import bcrypt
import pytest
from django.test import Client

from accounts.audit import read_export
from tests.imports import SITE_HASHERS, run_import, write_jsonl
from tests.imports.allauth_site import sqlite_site
from tests.staff import run_command
from tests.web import PASSWORD, login, stored_accounts

pytestmark = pytest.mark.dynamodb_local


def items_of(folder):
    """``{(PK, SK): item}`` of an export, binary values as base64 text."""
    export = read_export(str(folder))
    items = {}
    for data_file in export.files:
        with gzip.open(Path(folder) / "data" / data_file.rsplit("/", 1)[1], "rt") as lines:
            for line in lines:
                item = json.loads(line)["Item"]
                items[(item["PK"]["S"], item["SK"]["S"])] = item
    return items


def without_clock(item):
    """An item without what the clock of its write decides, its sets in order (DynamoDB
    keeps a set's members in no order)."""
    return {
        name: {"SS": sorted(value["SS"])} if "SS" in value else value
        for name, value in item.items()
        if name not in ("updated", "totp_step")
    }


@pytest.fixture
def source(tmp_path):
    site = sqlite_site(tmp_path / "site")
    site.make_users(
        {
            "username": "ada",
            "email": "ada@example.com",
            "is_staff": True,
            "addresses": [{"email": "ada@example.com", "verified": True, "primary": True}],
            "totp": "JBSWY3DPEHPK3PXPJBSWY3DPEHPK3PXP",
            "recovery_codes": True,
        },
        {"username": "bob", "email": "bob@example.com"},
        {"username": "Bob", "email": "bob2@example.com"},
    )
    return site.url


def test_the_export_of_an_import_is_consistent_for_the_audit(ddb, source, tmp_path):
    run = run_import(source, "--to-export", str(tmp_path / "export"), report=tmp_path / "report.jsonl")

    assert run.codes() == {3: ["same_username"]}
    assert stored_accounts() == []
    status, out, _ = run_command("accounts_audit", "--from-export", str(tmp_path / "export"))
    assert status == 0, out
    assert "3 users read: 2 imported into the export" in run.stdout


def test_the_export_holds_the_items_a_real_import_writes(ddb, source, tmp_path):
    run_import(source, "--to-export", str(tmp_path / "offline"))
    offline = items_of(next((tmp_path / "offline" / "AWSDynamoDB").iterdir()))

    run_import(source)
    _, out, _ = run_command("accounts_export", str(tmp_path / "online"))
    online = items_of(out.strip())

    assert sorted(offline) == sorted(online)
    assert {key: without_clock(item) for key, item in offline.items()} == {
        key: without_clock(item) for key, item in online.items()
    }
    assert any(key[0] == "STAFF" for key in offline)
    assert ("META#KEYS", "META") in offline


def test_bare_bcrypt_hashes_of_auth0_log_in_through_djangos_bcrypt_hasher(ddb, settings, tmp_path):
    settings.PASSWORD_HASHERS = SITE_HASHERS
    hashes = {
        prefix: bcrypt.hashpw(PASSWORD.encode(), bcrypt.gensalt(rounds=4, prefix=b"2b"))
        .decode()
        .replace("$2b$", prefix)
        for prefix in ("$2a$", "$2b$", "$2y$")
    }
    source = write_jsonl(
        tmp_path / "users.jsonl",
        *(
            {"id": f"auth0|{index}", "email": f"u{index}@example.com", "username": f"u{index}", "password": hashed}
            for index, hashed in enumerate(hashes.values())
        ),
    )

    run = run_import(source)

    assert run.status == 0, run.stderr
    for index in range(len(hashes)):
        [account] = [account for account in stored_accounts() if account.username == f"u{index}"]
        assert account.password.startswith("bcrypt$$2")
        assert login(Client(), f"u{index}", PASSWORD).status_code == 302


def test_a_hash_whose_hasher_the_site_lacks_is_reported(ddb, tmp_path):
    source = write_jsonl(
        tmp_path / "users.jsonl",
        {"id": 1, "email": "a@example.com", "username": "a", "password": "sha1$salt$" + "0" * 40},
    )

    run = run_import(source, report=tmp_path / "report.jsonl")

    assert run.codes() == {1: ["unknown_hasher"]}
    assert "'sha1'" in run.report[0]["message"]
    assert stored_accounts() == []
