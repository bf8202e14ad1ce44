"""Hostile emails, usernames and lock keys, written straight into the table, are shown as
text on every staff page and in every staff message, never as markup."""

import pytest
from django.urls import reverse
from django.utils.html import escape

from tests.seeding import delete_lock, lock_keys, new_account, write_accounts, write_locks
from tests.staff import client_as, make_account, run_command

pytestmark = pytest.mark.dynamodb_local

HOSTILE_EMAIL = '"><img src=x onerror=alert(1)>@evil.example'
HOSTILE_USERNAME = "<script>alert('username')</script>"
HOSTILE_KEY = 'UNIQ#HANDLE#<b onmouseover="alert(2)">bold</b>'
HOSTILE_OWNER = "ACCT#<iframe src=javascript:alert(3)>"
MARKUP = ("<img", "<script", "<b ", "<iframe")


@pytest.fixture
def hostile(ddb):
    """The hostile account (its email lock missing, so the audit lists it), a hostile orphan
    lock, and a logged-in staff client."""
    boss = make_account("boss@example.com", "boss", staff=True)
    account = write_accounts([new_account(HOSTILE_EMAIL, HOSTILE_USERNAME)])[0]
    [email_key] = [key for key in lock_keys(account) if key.startswith("UNIQ#EMAIL#")]
    delete_lock(email_key)
    write_locks({HOSTILE_KEY: HOSTILE_OWNER})
    return {"account": account, "email_key": email_key, "client": client_as(boss)}


def assert_shown_as_text(response, *values):
    page = response.content.decode()
    assert response.status_code == 200
    for markup in MARKUP:
        assert markup not in page
    for value in values:
        assert escape(value) in page


def test_account_list(hostile):
    response = hostile["client"].get(reverse("staff:accounts"))

    assert_shown_as_text(response, HOSTILE_EMAIL, HOSTILE_USERNAME)


def test_account_search_echoes_the_query_as_text(hostile):
    response = hostile["client"].get(reverse("staff:accounts"), {"q": HOSTILE_USERNAME})

    assert [account.PK for account in response.context["accounts"]] == [hostile["account"].PK]
    assert_shown_as_text(response, HOSTILE_EMAIL, HOSTILE_USERNAME)


def test_account_search_for_nothing_echoes_the_query_as_text(hostile):
    response = hostile["client"].get(reverse("staff:accounts"), {"q": HOSTILE_EMAIL.replace("evil", "other")})

    assert_shown_as_text(response, HOSTILE_EMAIL.replace("evil", "other"))


def test_account_page(hostile):
    response = hostile["client"].get(reverse("staff:account", args=[hostile["account"].id]))

    assert_shown_as_text(response, HOSTILE_EMAIL, HOSTILE_USERNAME, hostile["email_key"])


def test_account_page_with_form_errors(hostile):
    url = reverse("staff:username", args=[hostile["account"].id])

    response = hostile["client"].post(url, {"username": HOSTILE_USERNAME + "<"})

    assert response.context["username_form"].errors
    assert_shown_as_text(response, HOSTILE_EMAIL, HOSTILE_USERNAME + "<")


def test_delete_confirmation_page(hostile):
    response = hostile["client"].get(reverse("staff:delete", args=[hostile["account"].id]))

    assert_shown_as_text(response, HOSTILE_EMAIL, HOSTILE_USERNAME)


def test_lock_audit_page(hostile):
    run_command("accounts_audit")

    response = hostile["client"].get(reverse("staff:locks"))

    assert len(response.context["rows"]) == 2
    assert_shown_as_text(response, hostile["email_key"], HOSTILE_KEY, HOSTILE_OWNER)


def test_messages_after_actions(hostile):
    client = hostile["client"]
    account = hostile["account"]

    flagged = client.post(reverse("staff:flag", args=[account.id]), {"flag": "is_staff", "value": "1"}, follow=True)
    assert_shown_as_text(flagged, f"{HOSTILE_USERNAME}: staff is on.")

    data = {"kind": "orphaned", "namespace": "HANDLE", "key": HOSTILE_KEY}
    repaired = client.post(reverse("staff:repair"), data, follow=True)
    assert_shown_as_text(repaired, f"Repaired {HOSTILE_KEY}: lock released.")

    deleted = client.post(reverse("staff:delete", args=[account.id]), follow=True)
    assert_shown_as_text(deleted, f"Deleted the account {HOSTILE_USERNAME} ({HOSTILE_EMAIL}).")
