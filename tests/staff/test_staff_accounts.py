"""``/staff/``: the account list in pages behind an opaque cursor, and ``?q=`` through locks."""

import re

import pytest
from django.urls import reverse
from django.utils.formats import date_format
from django.utils.timezone import localtime

from accounts.staff import scans
from tests.seeding import delete_lock, seed_accounts
from tests.staff import boss, make_account, staff_client  # noqa: F401 (fixtures)

pytestmark = pytest.mark.dynamodb_local

LIST = reverse("staff:accounts")


def listed_usernames(response):
    return [account.username for account in response.context["accounts"]]


def link(response, rel):
    match = re.search(rf'<a rel="{rel}" href="([^"]+)"', response.content.decode())
    return match.group(1).replace("&amp;", "&") if match else None


def test_list_shows_email_username_created_and_flags(staff_client, boss):
    ada = make_account("ada@example.com", "ada", is_active=False)

    response = staff_client.get(LIST)

    assert response.status_code == 200
    assert sorted(listed_usernames(response)) == ["ada", "boss"]
    rows = re.findall(r"<tr>\s*<td[^>]*>(.*?)</tr>", response.content.decode(), re.S)
    ada_row = next(row for row in rows if "ada@example.com" in row)
    assert f'href="/staff/accounts/{ada.id}/"' in ada_row
    # The date in the language's own short format (English here).
    assert date_format(localtime(ada.created), "SHORT_DATETIME_FORMAT") in ada_row
    assert re.findall(r"<td[^>]*>(yes|no)</td>", ada_row) == ["no", "no"]
    boss_row = next(row for row in rows if "boss@example.com" in row)
    assert re.findall(r"<td[^>]*>(yes|no)</td>", boss_row) == ["yes", "yes"]


def test_lock_items_are_not_listed(staff_client):
    make_account("ada@example.com", "ada")

    response = staff_client.get(LIST)

    assert len(response.context["accounts"]) == 2
    assert "UNIQ#" not in response.content.decode()


def test_pages_of_fifty_cover_every_account_once_and_lead_back_to_the_first(staff_client):
    seed_accounts(120)
    expected = {f"user{n}" for n in range(120)} | {"boss"}

    first = staff_client.get(LIST)
    second = staff_client.get(link(first, "next"))
    third = staff_client.get(link(second, "next"))

    pages = [listed_usernames(page) for page in (first, second, third)]
    assert [len(names) for names in pages] == [50, 50, 21]
    assert sorted(sum(pages, [])) == sorted(expected)
    assert link(first, "first") is None
    assert link(third, "next") is None
    assert "Page 3" in third.content.decode()
    assert link(third, "first") == LIST


def test_the_cursor_has_the_same_size_on_every_page(ddb):
    seed_accounts(40)
    cursors, cursor = [], None
    while True:
        page = scans.account_page(cursor, per_page=3)
        if page.next_cursor is None:
            break
        cursors.append(page.next_cursor)
        cursor = page.next_cursor

    assert len(cursors) == 13
    # A signed account id and page number, compressed: the last page's is as long as the first's.
    assert len(set(map(len, cursors[1:]))) <= 2
    assert len(cursors[-1]) <= len(cursors[0]) + 2


def test_a_table_of_exactly_one_page_has_no_empty_next_page(ddb):
    seed_accounts(10)

    first = scans.account_page(per_page=5)
    second = scans.account_page(first.next_cursor, per_page=5)

    assert len(first.accounts) == len(second.accounts) == 5
    assert second.next_cursor is None
    assert (first.number, second.number) == (1, 2)


def test_the_cursor_is_opaque_and_a_forged_one_is_refused(staff_client):
    seed_accounts(60)
    cursor = link(staff_client.get(LIST), "next").split("cursor=")[1]
    assert "user" not in cursor and "ACCT" not in cursor

    response = staff_client.get(LIST, {"cursor": cursor[:-3] + "abc"})

    assert response.status_code == 400
    assert "This page link is not valid." in response.content.decode()


def test_search_by_email_in_any_case_finds_the_account_without_a_scan(staff_client, count_requests):
    ada = make_account("ada@example.com", "ada")
    count_requests.reset()

    response = staff_client.get(LIST, {"q": "  ADA@Example.com "})

    assert [account.id for account in response.context["accounts"]] == [ada.id]
    assert count_requests.counts["Scan"] == 0
    # The staff user with its session (one BatchGetItem), then the lock and the account.
    assert count_requests.counts["BatchGetItem"] == 1
    assert count_requests.counts["GetItem"] == 2


def test_search_by_full_width_username_finds_the_account(staff_client):
    ada = make_account("ada@example.com", "ada")

    response = staff_client.get(LIST, {"q": "ａｄａ"})

    assert [account.id for account in response.context["accounts"]] == [ada.id]
    assert 'value="ａｄａ"' in response.content.decode()


def test_search_for_an_unknown_value_says_so(staff_client, count_requests):
    count_requests.reset()

    response = staff_client.get(LIST, {"q": "nobody"})

    assert response.context["accounts"] == []
    assert "No account holds the email address or username “nobody”." in response.content.decode()
    assert count_requests.counts["Scan"] == 0


def test_search_does_not_find_a_value_whose_lock_is_missing_and_points_to_the_audit(staff_client):
    make_account("ada@example.com", "ada")
    delete_lock("UNIQ#HANDLE#ada")

    response = staff_client.get(LIST, {"q": "ada"})

    assert response.context["accounts"] == []
    assert f'href="{reverse("staff:locks")}"' in response.content.decode()


def test_search_for_a_value_too_long_to_be_a_key_finds_nothing(staff_client):
    response = staff_client.get(LIST, {"q": "x" * 3000})

    assert response.status_code == 200
    assert response.context["accounts"] == []
