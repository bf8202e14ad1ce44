"""Staff and email verification: the account page shows the state, resends the mail and
marks an address verified through the engine; an address staff set is proved by its link."""

import pytest

from accounts import store
from tests.engine.test_engine import locks
from tests.mail import mails_to
from tests.staff import boss, make_account, messages_of, staff_client  # noqa: F401

pytestmark = pytest.mark.dynamodb_local


def unverified(email, username):
    return store.signup(email, username, "!hash", email_verified=False)[0]


def test_account_page_shows_verified_unverified_and_pending(staff_client):
    pending = unverified("new@example.com", "newcomer")
    verified = make_account("ada@example.com", "ada", email_verified=True)
    store.request_email_change(store.get_account(verified.id), "lovelace@example.com")

    unverified_page = staff_client.get(f"/staff/accounts/{pending.id}/").content.decode()
    verified_page = staff_client.get(f"/staff/accounts/{verified.id}/").content.decode()

    assert '<dd class="email-status">unverified (expires' in unverified_page
    assert "Mark address verified" in unverified_page
    assert '<dd class="email-status">verified; change to lovelace@example.com pending</dd>' in verified_page
    assert "Mark address verified" not in verified_page


def test_staff_resend_the_verification_mail(staff_client):
    account = unverified("new@example.com", "newcomer")

    page = staff_client.post(f"/staff/accounts/{account.id}/verification/", {"action": "resend"}, follow=True)

    assert any("We sent a link to new@example.com" in text for text in messages_of(page))
    assert len(mails_to("new@example.com")) == 1


def test_staff_mark_verified_gives_the_account_its_email_lock(staff_client):
    account = unverified("new@example.com", "newcomer")

    page = staff_client.post(f"/staff/accounts/{account.id}/verification/", {"action": "verify"}, follow=True)

    assert any("now verified" in text for text in messages_of(page))
    assert locks()["UNIQ#EMAIL#new@example.com"] == account.PK
    assert store.get_account(account.id).expires is None


def test_staff_cannot_mark_verified_an_address_another_account_holds(staff_client):
    account = unverified("new@example.com", "newcomer")
    make_account("new@example.com", "owner", email_verified=True)

    page = staff_client.post(f"/staff/accounts/{account.id}/verification/", {"action": "verify"}, follow=True)

    assert any("Another account holds new@example.com" in text for text in messages_of(page))
    assert store.get_account(account.id).email_verified is False


def test_staff_email_change_applies_at_once_and_the_new_address_proves_itself(staff_client):
    account = make_account("ada@example.com", "ada", email_verified=True)

    staff_client.post(f"/staff/accounts/{account.id}/email/", {"email": "lovelace@example.com"})

    # Issue 26: the address changes at once, unverified, and its mailbox gets the link.
    changed = store.get_account(account.id)
    assert changed.email == "lovelace@example.com" and changed.email_verified is False
    assert [mail.subject for mail in mails_to("lovelace@example.com")] == ["Confirm your email address on testserver"]
