"""Limits that cannot be turned against the owner (issue 26, finding 4): whoever floods an
address with reset requests uses up neither the notices of its account (their own budget)
nor the reset requests of the owner's own browser (its device cookie's budget)."""

import pytest
from django.test import Client

from tests.mail import mails_to
from tests.security.test_security_password_change_ends_paths import change_password
from tests.web import signed_up_client
from tests.web.test_login_limits import from_address

pytestmark = pytest.mark.dynamodb_local

RESET = "/accounts/password/reset/"


def flood(times=5):
    """``times`` anonymous reset requests for ada's address, each from another browser and address."""
    for number in range(times):
        assert from_address(number).post(RESET, {"email": "ada@example.com"}).status_code == 302


def reset_mails():
    return [mail for mail in mails_to("ada@example.com") if "reset" in mail.subject.lower()]


def test_after_five_anonymous_reset_requests_the_owners_password_change_is_still_told(ddb):
    owner = signed_up_client()
    flood()

    change_password(owner)

    assert [mail for mail in mails_to("ada@example.com") if "password was changed" in mail.subject]


def test_after_five_anonymous_reset_requests_the_owners_own_browser_still_gets_its_reset_link(ddb):
    owner = signed_up_client()
    owner.post("/accounts/logout/")
    flood()
    assert from_address(9).post(RESET, {"email": "ada@example.com"}).status_code == 429
    sent = len(reset_mails())

    response = owner.post(RESET, {"email": "ada@example.com"})

    assert response.status_code == 302 and response["Location"] == "/accounts/password/reset/done/"
    assert len(reset_mails()) == sent + 1


def test_the_owners_browser_has_a_budget_of_its_own_not_an_unlimited_one(ddb):
    owner = signed_up_client()
    owner.post("/accounts/logout/")

    statuses = [owner.post(RESET, {"email": "ada@example.com"}).status_code for _ in range(6)]

    assert statuses == [302] * 5 + [429]


def test_a_device_cookie_of_another_account_gives_no_budget_for_this_address(ddb):
    signed_up_client()
    intruder = signed_up_client("mallory@example.com", "mallory")
    intruder.post("/accounts/logout/")
    flood()

    assert intruder.post(RESET, {"email": "ada@example.com"}).status_code == 429
    assert Client().post(RESET, {"email": "nobody@example.com"}).status_code == 302
