"""Staff and second factors, on DynamoDB Local: the account page lists an account's
authenticators without their secrets; staff remove one after a confirmation, logged as a
staff action, and the account's address is told; ``ACCOUNTS_MFA_REQUIRED_FOR_STAFF``."""

import logging

import pytest

from accounts import store
from tests.mail import mails_to
from tests.mfa import add_passkey, enable_totp
from tests.seeding import read_lock
from tests.staff import client_as, make_account
from tests.web import signed_up_client

pytestmark = pytest.mark.dynamodb_local


@pytest.fixture
def ada_with_factors(ddb):
    """ada, with the authenticator app, recovery codes and a passkey named Laptop."""
    client = signed_up_client()
    enable_totp(client)
    credential, _ = add_passkey(client, "Laptop")
    return store.get_by_username("ada"), credential


@pytest.fixture
def staff(ddb):
    return client_as(make_account("boss@example.com", "boss", staff=True))


def test_the_account_page_lists_the_authenticators_and_not_their_secrets(ada_with_factors, staff):
    ada, credential = ada_with_factors

    page = staff.get(f"/staff/accounts/{ada.id}/").content.decode()

    assert "Authenticator app" in page and "on since" in page
    assert "10 left" in page and "Laptop" in page
    assert ada.totp_secret not in page
    assert not any(digest in page for digest in ada.recovery_codes)


def test_staff_remove_the_authenticator_app_after_a_confirmation(ada_with_factors, staff, caplog):
    ada, _ = ada_with_factors
    url = f"/staff/accounts/{ada.id}/totp/remove/"
    assert "Remove the authenticator app of ada?" in staff.get(url).content.decode()

    with caplog.at_level(logging.INFO, logger="accounts.staff"):
        response = staff.post(url, follow=True)

    assert "Removed the authenticator app of ada." in response.content.decode()
    assert store.get_by_username("ada").totp_secret is None
    assert "Staff boss removed the authenticator app of account" in caplog.text
    assert "The site's staff removed it." in mails_to("ada@example.com")[-1].body


def test_staff_remove_a_passkey_and_its_lock(ada_with_factors, staff):
    ada, credential = ada_with_factors

    staff.post(f"/staff/accounts/{ada.id}/passkeys/{credential.b64_id}/remove/")

    assert store.get_by_username("ada").passkeys is None
    assert read_lock(f"UNIQ#WEBAUTHN#{credential.b64_id}") == (False, None)


def test_an_authenticator_the_account_does_not_have_is_a_404(ddb, staff):
    account = make_account("ada@example.com", "ada")

    assert staff.get(f"/staff/accounts/{account.id}/totp/remove/").status_code == 404
    assert staff.post(f"/staff/accounts/{account.id}/passkeys/nothing/remove/").status_code == 404


def test_by_default_staff_need_no_second_factor(ddb, staff):
    assert staff.get("/staff/").status_code == 200


def test_when_required_staff_without_a_second_factor_are_sent_to_set_one_up(ddb, settings, staff):
    settings.ACCOUNTS_MFA_REQUIRED_FOR_STAFF = True

    response = staff.get("/staff/locks/", follow=True)

    assert response.redirect_chain[0][0] == "/accounts/mfa/totp/"
    assert "Staff pages need a second factor" in response.content.decode()
    enable_totp(staff)
    assert staff.get("/staff/").status_code == 200
