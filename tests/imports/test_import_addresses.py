"""django-allauth's several addresses imported (``ACCOUNTS_MAX_EMAIL_ADDRESSES`` above 1), from
a real allauth database (tests/imports/allauth_site.py): each further verified
``account_emailaddress`` row becomes a member of the account's set of addresses, its lock
written in the account's create; an unverified one waits for its proof, holding no lock;
what cannot be carried is reported on an imported user; a member another user of the source
or an account of the site holds is a conflict as the primary's is; the offline path writes
the members' locks too, and the audit finds both consistent."""

import pytest
from django.test import Client

from accounts import store
from tests.engine.test_engine import locks
from tests.headless import APIClient
from tests.imports import run_import
from tests.imports.allauth_site import sqlite_site
from tests.imports.test_import_to_export import items_of, without_clock
from tests.staff import run_command
from tests.web import PASSWORD, login, signup

pytestmark = pytest.mark.dynamodb_local


def verified(email):
    return {"email": email, "verified": True, "primary": False}


def waiting(email):
    return {"email": email, "verified": False, "primary": False}


def primary(email, is_verified=True):
    return {"email": email, "verified": is_verified, "primary": True}


@pytest.fixture(scope="module")
def site(tmp_path_factory):
    """An allauth site whose users have several addresses each."""
    site = sqlite_site(tmp_path_factory.mktemp("addresses"))
    users = [
        ("ada", [primary("ada@example.com"), verified("ada@work.example"), waiting("ada@home.example")], None),
        (
            "many",
            [
                primary("many@example.com"),
                waiting("many-waiting@example.com"),
                verified("many-1@example.com"),
                verified("many-2@example.com"),
                verified("not an address"),
            ],
            None,
        ),
        ("prom", [primary("prom@example.com", False), verified("prom@work.example")], None),
        ("unconfirmed", [primary("unconfirmed@example.com", False), waiting("unconfirmed@work.example")], None),
        # carol's primary is dave's other address in another case: the latest login wins.
        ("carol", [primary("carol@example.com")], "2024-05-01T00:00:00+00:00"),
        ("dave", [primary("dave@example.com"), verified("Carol@example.com")], "2023-05-01T00:00:00+00:00"),
        # ... whether the value is a primary or a member: erin's member beats frank's primary.
        ("erin", [primary("erin@example.com"), verified("Frank@example.com")], "2024-05-01T00:00:00+00:00"),
        ("frank", [primary("frank@example.com")], "2020-05-01T00:00:00+00:00"),
        ("gil", [primary("gil@example.com"), verified("owner@example.com")], None),
    ]
    made = site.make_users(
        *(
            {
                "username": username,
                "email": addresses[0]["email"],
                "password": PASSWORD,
                "addresses": addresses,
                **({"last_login": last_login} if last_login else {}),
            }
            for username, addresses, last_login in users
        )
    )
    site.ids = {username: made[username]["id"] for username in made}
    return site


@pytest.fixture
def several(ddb, settings):
    settings.ACCOUNTS_MAX_EMAIL_ADDRESSES = 3
    return settings


@pytest.fixture
def imported(several, site, tmp_path):
    # An account of the site holds the address of gil's other row.
    signup(Client(), "owner@example.com", "owner")
    return run_import(site.url, report=tmp_path / "report.jsonl")


def lines_of(run, username, site):
    return [line for line in run.report if line["source_id"] == site.ids[username]]


def test_a_verified_other_address_is_a_member_holding_its_lock_and_an_unverified_one_waits(imported):
    ada = store.get_by_username("ada")

    assert (ada.email, ada.email_verified) == ("ada@example.com", True)
    assert ada.email_addresses == {"ada@work.example"}
    assert ada.unverified_emails == {"ada@home.example"}
    held = locks()
    assert held["UNIQ#EMAIL#ada@work.example"] == held["UNIQ#EMAIL#ada@example.com"] == ada.PK
    assert "UNIQ#EMAIL#ada@home.example" not in held


def test_the_imported_other_address_logs_in_by_the_form_and_the_api_which_lists_every_address(imported):
    assert login(Client(), "ADA@work.example", PASSWORD).status_code == 302
    api = APIClient("browser")
    by_api = api.login("ada@work.example")
    assert by_api.status_code == 200
    assert by_api.json()["data"]["user"]["username"] == "ada"
    assert api.get("account/email").json()["data"] == [
        {"email": "ada@example.com", "primary": True, "verified": True},
        {"email": "ada@work.example", "primary": False, "verified": True},
        {"email": "ada@home.example", "primary": False, "verified": False},
    ]
    assert APIClient("browser").login("ada@home.example").status_code == 400


def test_past_the_bound_and_invalid_rows_are_reported_and_the_user_imported(imported, site):
    many = store.get_by_username("many")

    assert many.email_addresses == {"many-1@example.com", "many-2@example.com"}
    assert many.unverified_emails is None
    notes = {line["detail"]: line for line in lines_of(imported, "many", site)}
    assert sorted(notes) == ["many-waiting@example.com", "not an address"]
    assert {line["code"] for line in notes.values()} == {"extra_address_not_imported"}
    assert notes["many-waiting@example.com"]["message"] == (
        "An account holds at most 3 addresses (ACCOUNTS_MAX_EMAIL_ADDRESSES): this one was not imported."
    )
    assert notes["not an address"]["message"] == "Enter a valid email address."


def test_a_verified_other_address_becomes_primary_over_an_unverified_one(imported):
    prom = store.get_by_email("prom@work.example")

    assert (prom.username, prom.email, prom.email_verified) == ("prom", "prom@work.example", True)
    assert prom.email_addresses is None
    assert prom.unverified_emails == {"prom@example.com"}
    assert login(Client(), "prom@work.example", PASSWORD).status_code == 302


def test_an_account_with_no_verified_address_brings_no_other_address(imported, site):
    unconfirmed = store.get_by_username("unconfirmed")

    assert (unconfirmed.email_verified, unconfirmed.unverified_emails) == (False, None)
    (line,) = lines_of(imported, "unconfirmed", site)
    assert (line["code"], line["detail"]) == ("extra_address_not_imported", "unconfirmed@work.example")
    assert line["message"] == "The account's address is not verified: an account adds no other address before it is."


def test_a_member_two_source_users_share_goes_by_the_rules_as_a_primary_does(imported, site):
    (dave,) = lines_of(imported, "dave", site)
    (frank,) = lines_of(imported, "frank", site)

    assert (dave["field"], dave["code"], dave["detail"], dave["holder_source_id"]) == (
        "email",
        "same_email",
        "Carol@example.com",
        site.ids["carol"],
    )
    assert (frank["field"], frank["code"], frank["holder_source_id"]) == ("email", "same_email", site.ids["erin"])
    assert store.get_by_username("dave") is None and store.get_by_username("frank") is None
    assert store.get_by_email("frank@example.com").username == "erin"
    assert store.get_by_email("carol@example.com").username == "carol"


def test_a_member_an_account_of_the_site_holds_leaves_the_user_out(imported, site):
    (gil,) = lines_of(imported, "gil", site)

    assert (gil["field"], gil["code"], gil["detail"]) == ("email", "taken_on_site", "owner@example.com")
    assert gil["holder_account"] == store.get_by_username("owner").id
    assert store.get_by_username("gil") is None
    assert "UNIQ#EMAIL#gil@example.com" not in locks()


def test_the_imported_table_is_consistent_and_a_second_run_makes_nothing_new(imported, site, tmp_path):
    before = locks()
    assert before["UNIQ#EMAIL#many-2@example.com"] == store.get_by_username("many").PK

    again = run_import(site.url, report=tmp_path / "again.jsonl")

    assert locks() == before
    assert "already there" in again.stdout
    status, out, _ = run_command("accounts_audit")
    assert status == 0, out


def test_the_export_holds_the_members_locks_and_the_audit_finds_it_consistent(several, site, tmp_path):
    run_import(site.url, "--to-export", str(tmp_path / "offline"))
    offline = items_of(next((tmp_path / "offline" / "AWSDynamoDB").iterdir()))
    run_import(site.url)
    _, online_folder, _ = run_command("accounts_export", str(tmp_path / "online"))
    online = items_of(online_folder.strip())

    owner = offline[("UNIQ#EMAIL#ada@example.com", "LOCK")]["owner"]["S"]
    assert offline[("UNIQ#EMAIL#ada@work.example", "LOCK")]["owner"]["S"] == owner
    assert ("UNIQ#EMAIL#ada@home.example", "LOCK") not in offline
    account = offline[(owner, "PROFILE")]
    assert account["email_addresses"]["SS"] == ["ada@work.example"]
    assert account["unverified_emails"]["SS"] == ["ada@home.example"]
    # The very items a real import writes.
    assert {key: without_clock(item) for key, item in offline.items()} == {
        key: without_clock(item) for key, item in online.items()
    }
    status, out, _ = run_command("accounts_audit", "--from-export", str(tmp_path / "offline"))
    assert status == 0, out
