"""Deactivate, activate, grant and revoke staff ask first: GET shows a confirmation page
that changes nothing, its POST does the change."""

import pytest
from django.urls import reverse

from accounts import store
from tests.staff import boss, client_as, make_account, staff_client  # noqa: F401  (fixtures)

pytestmark = pytest.mark.dynamodb_local


def flag_url(account):
    return reverse("staff:flag", args=[account.id])


@pytest.mark.parametrize(
    "flag, value, heading, button",
    [
        ("is_active", "0", "Deactivate ada?", "Deactivate"),
        ("is_active", "1", "Activate ada?", "Activate"),
        ("is_staff", "1", "Grant staff access to ada?", "Grant staff"),
        ("is_staff", "0", "Revoke staff access from ada?", "Revoke staff"),
    ],
)
def test_confirmation_page_names_the_change_and_changes_nothing(staff_client, flag, value, heading, button):
    ada = make_account("ada@example.com", "ada", is_active=value == "0", staff=value == "0")

    response = staff_client.get(flag_url(ada), {"flag": flag, "value": value})

    html = response.content.decode()
    assert response.status_code == 200
    assert f"<h1>{heading}</h1>" in html
    assert f'<form method="post" action="{flag_url(ada)}"' in html
    assert f'<input type="hidden" name="flag" value="{flag}">' in html
    assert f'<input type="hidden" name="value" value="{value}">' in html
    assert f">{button}</button>" in html
    assert getattr(store.get_account(ada.id), flag) is (value == "0")


def test_account_page_links_to_the_confirmations_instead_of_acting(staff_client):
    ada = make_account("ada@example.com", "ada")

    html = staff_client.get(reverse("staff:account", args=[ada.id])).content.decode()

    assert f'href="{flag_url(ada)}?flag=is_active&amp;value=0"' in html
    assert f'href="{flag_url(ada)}?flag=is_staff&amp;value=1"' in html
    assert f'action="{flag_url(ada)}"' not in html


def test_confirmation_page_with_an_unknown_flag_is_a_bad_request(staff_client):
    ada = make_account("ada@example.com", "ada")

    assert staff_client.get(flag_url(ada), {"flag": "is_superuser", "value": "1"}).status_code == 400


def test_confirmation_page_is_for_staff_only(ddb):
    ada = make_account("ada@example.com", "ada")

    response = client_as(ada).get(flag_url(ada), {"flag": "is_staff", "value": "1"})

    assert response.status_code == 403
