"""Staff and an account's other addresses, on DynamoDB Local: the account page lists them
beside their locks; staff remove one after a confirmation (never the primary), which frees
it at once, is logged as a staff action, names the staff member in the account's timeline,
and is told to the account's confirmed addresses."""

import logging

import pytest

from accounts import addresses, store, timeline
from tests.mail import mails_to
from tests.seeding import read_lock
from tests.staff import client_as, make_account, messages_of

pytestmark = pytest.mark.dynamodb_local

WORK = "UNIQ#EMAIL#work@example.org"


@pytest.fixture
def ada(ddb, settings):
    """ada, with work@example.org confirmed and pending@example.org waiting for its link."""
    settings.ACCOUNTS_MAX_EMAIL_ADDRESSES = 3
    ada = make_account("ada@example.com", "ada")
    addresses.add_unverified(ada, "work@example.org")
    addresses.verify(store.get_account(ada.id), "work@example.org")
    addresses.add_unverified(store.get_account(ada.id), "pending@example.org")
    return store.get_account(ada.id)


@pytest.fixture
def boss(ddb):
    return make_account("boss@example.com", "boss", staff=True)


def test_the_account_page_lists_the_addresses_and_their_locks(ada, boss):
    page = client_as(boss).get(f"/staff/accounts/{ada.id}/")

    listed = [(each.email, each.primary, each.verified) for each in page.context["addresses"]]
    assert listed == [
        ("ada@example.com", True, True),
        ("work@example.org", False, True),
        ("pending@example.org", False, False),
    ]
    locks = {row["lock"].key: row["lock"].status for row in page.context["locks"]}
    assert locks[WORK] == "ok" and locks["UNIQ#EMAIL#ada@example.com"] == "ok"
    assert "Waiting for its link" in page.content.decode()


def test_staff_remove_an_address_after_a_confirmation_and_the_owner_is_told(ada, boss, caplog):
    staff = client_as(boss)
    url = f"/staff/accounts/{ada.id}/addresses/remove/"
    assert "Remove work@example.org from ada?" in staff.get(url, {"email": "work@example.org"}).content.decode()

    with caplog.at_level(logging.INFO, logger="accounts.staff"):
        response = staff.post(url, {"email": "WORK@example.org"}, follow=True)

    assert messages_of(response) == ["work@example.org is no longer an address of ada."]
    assert read_lock(WORK) == (False, None)
    assert store.get_account(ada.id).email_addresses is None
    assert "removed the address work@example.org" in caplog.text
    (event, *_) = timeline.recent_events(ada.id)
    assert (event.kind, event.detail, event.actor) == (timeline.EMAIL_REMOVED, "work@example.org", boss.id)
    told = [mail for mail in mails_to("ada@example.com") if "work@example.org was removed" in mail.body]
    assert told and "The site's staff made this change." in told[-1].body


def test_staff_cannot_remove_the_primary_address(ada, boss):
    response = client_as(boss).post(
        f"/staff/accounts/{ada.id}/addresses/remove/", {"email": "ada@example.com"}, follow=True
    )

    assert messages_of(response) == ["You cannot remove your primary email address."]
    assert read_lock("UNIQ#EMAIL#ada@example.com") == (True, ada.PK)


def test_an_address_the_account_does_not_have_is_a_404(ada, boss):
    response = client_as(boss).get(f"/staff/accounts/{ada.id}/addresses/remove/", {"email": "x@example.org"})

    assert response.status_code == 404


def test_removing_needs_a_fresh_proof_of_the_staff_member(ada, boss, settings):
    settings.ACCOUNTS_REAUTHENTICATION_TIMEOUT = 0

    response = client_as(boss).post(f"/staff/accounts/{ada.id}/addresses/remove/", {"email": "work@example.org"})

    assert response.status_code == 302 and "/accounts/mfa/reauthenticate/" in response["Location"]
    assert read_lock(WORK) == (True, ada.PK)


def test_others_cannot_remove_an_address(ada):
    bob = make_account("bob@example.com", "bob")

    response = client_as(bob).post(f"/staff/accounts/{ada.id}/addresses/remove/", {"email": "work@example.org"})

    assert response.status_code == 403
    assert read_lock(WORK) == (True, ada.PK)
