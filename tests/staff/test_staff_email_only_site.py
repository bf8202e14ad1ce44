"""The staff pages of a site without usernames (``ACCOUNTS_SIGNUP_FIELDS = ["email*",
"password1*"]``): no username column, field, form or lock; accounts named by their address."""

import pytest
from django.urls import reverse

from tests.signup_fields import email_only  # noqa: F401 (a fixture)
from tests.staff import client_as, make_account, messages_of

pytestmark = pytest.mark.dynamodb_local


@pytest.fixture
def staff_client(email_only):
    return client_as(make_account("boss@example.com", None, staff=True))


@pytest.fixture
def ada(email_only):
    return make_account("ada@example.com", None)


def test_the_account_list_has_no_username_column(staff_client, ada):
    page = staff_client.get(reverse("staff:accounts")).content.decode()

    assert "ada@example.com" in page
    assert "Username" not in page
    assert "Exact email address</label>" in page


def test_the_search_finds_an_address_and_names_no_username(staff_client, ada):
    found = staff_client.get(reverse("staff:accounts"), {"q": "ADA@example.com"})
    not_found = staff_client.get(reverse("staff:accounts"), {"q": "ada"})

    assert [account.PK for account in found.context["accounts"]] == [ada.PK]
    assert not_found.context["accounts"] == []
    assert "No account holds the email address “ada”." in not_found.content.decode()


def test_the_account_page_shows_no_username_field_form_or_lock(staff_client, ada):
    response = staff_client.get(reverse("staff:account", args=[ada.id]))

    page = response.content.decode()
    assert response.context["username_form"] is None
    assert "Username" not in page and "username" not in page
    assert [row["lock"].constraint.namespace for row in response.context["locks"]] == ["EMAIL"]
    assert "Account ada@example.com" in page


def test_a_username_change_is_not_found(staff_client, ada):
    response = staff_client.post(reverse("staff:username", args=[ada.id]), {"username": "ada"})

    assert response.status_code == 404


def test_a_deletion_names_the_account_by_its_address(staff_client, ada):
    confirm = staff_client.get(reverse("staff:delete", args=[ada.id])).content.decode()
    deleted = staff_client.post(reverse("staff:delete", args=[ada.id]), follow=True)

    assert "the email address becomes free for anyone to take" in confirm
    assert "username" not in confirm
    assert "Deleted the account ada@example.com." in messages_of(deleted)


def test_a_deactivation_says_the_account_keeps_its_address(staff_client, ada):
    page = staff_client.get(reverse("staff:flag", args=[ada.id]), {"flag": "is_active", "value": "0"})

    text = page.content.decode()
    assert "The account keeps its email address." in text
    assert "username" not in text
