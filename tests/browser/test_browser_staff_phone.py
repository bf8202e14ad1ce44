"""The staff pages on a phone (390 px wide) in a real browser: nothing overflows, no column
is squeezed, and a flag change asks for confirmation first."""

import re

import pytest
from django.contrib.auth.hashers import make_password

from accounts import store
from tests.browser.test_browser_e2e import PHONE, browser, transactional_db  # noqa: F401  (fixtures)
from tests.seeding import new_account, seed_accounts, write_accounts, write_locks
from tests.staff import make_account, run_command
from tests.web import PASSWORD

pytestmark = [pytest.mark.browser, pytest.mark.dynamodb_local]

LONG_EMAIL = "margaret.hamilton.apollo.guidance.computer@very-long-department-name.example.com"
# Elements whose right edge lies beyond the viewport (the visually hidden table header aside).
OVERFLOWING = """() => [...document.querySelectorAll("body *")]
    .filter((element) => !element.closest("thead"))
    .filter((element) => element.getBoundingClientRect().right > window.innerWidth + 0.5)
    .map((element) => element.outerHTML.slice(0, 120))"""
CELL_WIDTHS = (
    """() => [...document.querySelectorAll("table.staff-table td")].map((cell) => cell.getBoundingClientRect().width)"""
)


@pytest.fixture
def phone(live_server, ddb, browser):  # noqa: F811
    """A 390 px wide tab, logged in as a staff account."""
    make_account("boss@example.com", "boss", staff=True, password=make_password(PASSWORD))
    context = browser.new_context(base_url=live_server.url, viewport=PHONE)
    context.set_default_timeout(15_000)
    page = context.new_page()
    page.goto("/accounts/login/")
    page.fill("#id_username", "boss")
    page.fill("#id_password", PASSWORD)
    page.get_by_role("button", name="Log in").click()
    page.wait_for_url(re.compile(r"/accounts/profile/$"))
    yield page
    context.close()


def assert_fits_the_phone(page):
    assert page.evaluate("document.documentElement.scrollWidth") <= PHONE["width"]
    assert page.evaluate(OVERFLOWING) == []
    widths = page.evaluate(CELL_WIDTHS)
    assert widths, "no table on the page"
    # Each cell spans the card: its column's name above the value, never a sliver.
    assert min(widths) >= 0.8 * PHONE["width"], widths


def test_account_list_fits_a_phone_without_squeezed_columns(phone):
    seed_accounts(5)
    make_account(LONG_EMAIL, "margaret_hamilton_apollo")

    phone.goto("/staff/")

    assert_fits_the_phone(phone)
    assert phone.get_by_role("link", name=LONG_EMAIL).is_visible()


def test_lock_audit_fits_a_phone_without_squeezed_columns(phone):
    write_accounts([new_account(LONG_EMAIL, "margaret_hamilton_apollo")], with_locks=False)
    write_locks({"UNIQ#EMAIL#" + "orphan." * 12 + "@example.com": "ACCT#gone"})
    run_command("accounts_audit")

    phone.goto("/staff/locks/")

    assert phone.get_by_role("button", name=re.compile("Repair all")).is_visible()
    assert_fits_the_phone(phone)


@pytest.mark.parametrize(
    "link, heading, button, flag, after",
    [
        ("Deactivate…", "Deactivate ada?", "Deactivate", "is_active", False),
        ("Grant staff…", "Grant staff access to ada?", "Grant staff", "is_staff", True),
    ],
)
def test_flag_change_asks_for_confirmation_first(phone, link, heading, button, flag, after):
    ada = make_account("ada@example.com", "ada")
    phone.goto(f"/staff/accounts/{ada.id}/")

    phone.get_by_role("link", name=link).click()

    assert phone.get_by_role("heading", level=1).inner_text() == heading
    assert getattr(store.get_account(ada.id), flag) is not after
    assert phone.evaluate(OVERFLOWING) == []
    phone.get_by_role("button", name=button, exact=True).click()
    phone.wait_for_url(re.compile(rf"/staff/accounts/{ada.id}/$"))
    assert getattr(store.get_account(ada.id), flag) is after


def test_cancel_on_the_confirmation_page_changes_nothing(phone):
    ada = make_account("ada@example.com", "ada")
    phone.goto(f"/staff/accounts/{ada.id}/")
    phone.get_by_role("link", name="Deactivate…").click()

    phone.get_by_role("link", name="Cancel").click()

    phone.wait_for_url(re.compile(rf"/staff/accounts/{ada.id}/$"))
    assert store.get_account(ada.id).is_active
