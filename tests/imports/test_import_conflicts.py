"""Who holds a value two users claim: between source users, the verified one, then the latest
login, then the lowest id; between a source user and an account of the site, the account.
The other is reported, never a second holder; a dry run reports exactly what a run does."""

import pytest
from django.test import Client

from accounts import store
from tests.imports import run_import, write_jsonl
from tests.web import signup, stored_accounts

pytestmark = pytest.mark.dynamodb_local


def user(source_id, email, username, **values):
    return {"id": source_id, "email": email, "username": username, **values}


def holders():
    return sorted((account.username, account.email) for account in stored_accounts())


def test_between_source_users_the_verified_address_wins(ddb, tmp_path):
    source = write_jsonl(
        tmp_path / "users.jsonl",
        user(1, "bob@example.com", "bob", email_verified=False, last_login="2025-01-01T00:00:00Z"),
        user(2, "Bob@EXAMPLE.com", "robert", email_verified=True, last_login="2020-01-01T00:00:00Z"),
    )

    run = run_import(source, report=tmp_path / "report.jsonl")

    assert holders() == [("robert", "Bob@example.com")]
    assert run.report == [
        {
            "source_id": 1,
            "field": "email",
            "code": "same_email",
            "message": "Another user of the source, kept by the rules (verified, last login, lowest id), holds this value.",
            "holder_source_id": 2,
            "line": 1,
        }
    ]
    assert run.status == 1


def test_between_source_users_alike_in_verification_the_latest_login_wins(ddb, tmp_path):
    source = write_jsonl(
        tmp_path / "users.jsonl",
        user(1, "old@example.com", "carol", last_login="2021-06-01T00:00:00Z"),
        user(2, "new@example.com", "CAROL", last_login="2024-06-01T00:00:00Z"),
        user(3, "never@example.com", "Carol"),
    )

    run = run_import(source, report=tmp_path / "report.jsonl")

    assert holders() == [("CAROL", "new@example.com")]
    assert {line["source_id"]: (line["code"], line["holder_source_id"]) for line in run.report} == {
        1: ("same_username", 2),
        3: ("same_username", 2),
    }


def test_between_source_users_alike_in_all_else_the_lowest_id_wins(ddb, tmp_path):
    source = write_jsonl(tmp_path / "users.jsonl", user(12, "b@example.com", "dave"), user(3, "a@example.com", "Dave"))

    run = run_import(source, report=tmp_path / "report.jsonl")

    assert holders() == [("Dave", "a@example.com")]
    assert run.codes() == {12: ["same_username"]}


def test_a_lookalike_username_is_the_same_name(ddb, tmp_path):
    source = write_jsonl(tmp_path / "users.jsonl", user(1, "m@example.com", "mary"), user(2, "r@example.com", "rnary"))

    run = run_import(source, report=tmp_path / "report.jsonl")

    assert holders() == [("mary", "m@example.com")]
    assert run.codes() == {2: ["lookalike_username"]}


def test_a_user_left_out_blocks_nobody(ddb, tmp_path):
    # 2 loses its address to 1 (verified), so 3 keeps the username 2 would have beaten it to.
    source = write_jsonl(
        tmp_path / "users.jsonl",
        user(1, "erin@example.com", "erin", email_verified=True),
        user(2, "erin@example.com", "frank", last_login="2025-01-01T00:00:00Z"),
        user(3, "frank@example.com", "Frank"),
    )

    run = run_import(source, report=tmp_path / "report.jsonl")

    assert holders() == [("Frank", "frank@example.com"), ("erin", "erin@example.com")]
    assert run.codes() == {2: ["same_email"]}


def test_an_account_of_the_site_wins_over_a_source_user(ddb, tmp_path):
    signup(Client(), "grace@example.com", "mary")
    site_account = store.get_by_username("mary")
    source = write_jsonl(
        tmp_path / "users.jsonl",
        user(1, "GRACE@example.com", "hopper", email_verified=True),
        user(2, "other@example.com", "rnary"),  # "rn" looks like "m": the look-alike of "mary"
        user(3, "ivan@example.com", "ivan"),
    )

    run = run_import(source, report=tmp_path / "report.jsonl")

    assert holders() == [("ivan", "ivan@example.com"), ("mary", "grace@example.com")]
    lines = sorted(run.report, key=lambda line: line["source_id"])
    assert [(line["source_id"], line["field"], line["code"], line["holder_account"]) for line in lines] == [
        (1, "email", "taken_on_site", site_account.id),
        (2, "username", "taken_on_site", site_account.id),
    ]
    assert lines[1]["detail"] == "lookalike"


def test_an_unverified_source_address_a_verified_account_holds_is_reported(ddb, tmp_path):
    signup(Client(), "heidi@example.com", "heidi")
    source = write_jsonl(tmp_path / "users.jsonl", user(1, "heidi@example.com", "heidi2", email_verified=False))

    run = run_import(source, report=tmp_path / "report.jsonl")

    assert run.codes() == {1: ["taken_on_site"]}
    assert holders() == [("heidi", "heidi@example.com")]


def test_a_dry_run_writes_nothing_and_reports_what_the_run_then_does(ddb, tmp_path):
    signup(Client(), "judy@example.com", "judy")
    source = write_jsonl(
        tmp_path / "users.jsonl",
        user(1, "judy@example.com", "judith", email_verified=True),
        user(2, "kim@example.com", "kim"),
        user(3, "KIM@example.com", "kimberly"),
        user(4, "bad", "lee"),
    )
    before = holders()

    dry = run_import(source, "--dry-run", report=tmp_path / "dry.jsonl")
    assert holders() == before
    real = run_import(source, report=tmp_path / "real.jsonl")

    assert sorted(map(str, dry.report)) == sorted(map(str, real.report))
    assert dry.status == real.status == 1
    assert dry.stdout.replace("would be imported", "imported").replace("dry.jsonl", "real.jsonl") == real.stdout
    assert holders() == [("judy", "judy@example.com"), ("kim", "kim@example.com")]


def test_a_dry_run_after_a_run_says_the_users_are_already_there(ddb, tmp_path):
    source = write_jsonl(tmp_path / "users.jsonl", user(1, "liz@example.com", "liz"))
    run_import(source)

    dry = run_import(source, "--dry-run")

    assert "0 would be imported, 1 already there" in dry.stdout
    assert dry.status == 0
