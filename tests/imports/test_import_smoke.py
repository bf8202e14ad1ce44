import pytest
from tests.imports import run_import, write_jsonl
from tests.web import stored_accounts

pytestmark = pytest.mark.dynamodb_local


def test_smoke(ddb, tmp_path):
    source = write_jsonl(tmp_path / "u.jsonl",
        {"id": 1, "email": "ada@example.com", "username": "ada", "email_verified": True},
        {"id": 2, "email": "ADA@example.com", "username": "ada2", "email_verified": False},
        {"id": 3, "email": "bob@example.com", "username": "bob"},
    )
    first = run_import(source, report=tmp_path / "r.jsonl")
    print(first)
    assert first.status == 1
    assert first.codes() == {2: ["same_email"]}
    assert sorted(a.username for a in stored_accounts()) == ["ada", "bob"]
    again = run_import(source, report=tmp_path / "r2.jsonl")
    print(again)
    assert "2 already there" in again.stdout
