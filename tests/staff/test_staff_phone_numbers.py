"""Staff see an account's phone number (issue 37) beside its lock item: the number, whether it
is verified, and the ``PHONE`` lock a verified one holds, with its state."""

import pytest
from django.urls import reverse

from tests.phones import with_number
from tests.seeding import delete_lock
from tests.sms import NUMBER_E164, OTHER, phone_site  # noqa: F401
from tests.staff import client_as, make_account

pytestmark = pytest.mark.dynamodb_local


@pytest.fixture
def staff(phone_site):
    return client_as(make_account("boss@example.com", "", staff=True))


def page_of(staff, account):
    return staff.get(reverse("staff:account", args=[account.id])).content.decode()


def test_staff_see_a_verified_number_and_its_lock(staff):
    ada = with_number()

    page = page_of(staff, ada)

    assert f"{NUMBER_E164} (verified)" in page
    assert f"<code>UNIQ#PHONE#{NUMBER_E164}</code>" in page
    assert f"<code>{ada.PK}</code>" in page


def test_staff_see_an_unverified_number_holds_no_lock(staff):
    bob = with_number("bob@example.com", OTHER, verified=False)

    page = page_of(staff, bob)

    assert "+447911123456 (unverified: holds no lock)" in page
    assert "UNIQ#PHONE#" not in page


def test_staff_see_a_verified_numbers_missing_lock_and_may_give_it_back(staff):
    ada = with_number()
    delete_lock(f"UNIQ#PHONE#{NUMBER_E164}")

    page = page_of(staff, ada)

    assert f"<code>UNIQ#PHONE#{NUMBER_E164}</code>" in page
    assert 'name="namespace" value="PHONE"' in page
