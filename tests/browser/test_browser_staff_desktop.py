"""The staff tables on a desktop (1280 px wide) in a real browser, in English and Japanese: no
word is broken across lines, and no heading stands one character a line."""

import re

import pytest
from django.contrib.auth.hashers import make_password

from accounts import audit
from accounts.audit import reports
from tests.browser.test_browser_e2e import browser, transactional_db  # noqa: F401  (fixtures)
from tests.seeding import new_account, seed_accounts, write_accounts, write_locks
from tests.staff import make_account
from tests.web import PASSWORD

pytestmark = [pytest.mark.browser, pytest.mark.dynamodb_local]

DESKTOP = {"width": 1280, "height": 800}
LONG_EMAIL = "margaret.hamilton.apollo.guidance.computer@very-long-department-name.example.com"
# The words of the table cells (runs of letters and digits; lock keys and links to accounts
# aside: identifiers may break) that the layout split across lines. Japanese wraps between any two characters, as
# it should: there, only a squeezed column (under 4 characters a line) counts.
BROKEN = r"""() => {
    const broken = [];
    const japanese = /[\p{Script=Han}\p{Script=Hiragana}\p{Script=Katakana}]/gu;
    const lines = (node, start, end) => {
        const range = document.createRange();
        range.setStart(node, start);
        range.setEnd(node, end);
        return new Set([...range.getClientRects()].map((rect) => Math.round(rect.top))).size;
    };
    for (const cell of document.querySelectorAll("table.staff-table th, table.staff-table td")) {
        const walker = document.createTreeWalker(cell, NodeFilter.SHOW_TEXT);
        for (let node = walker.nextNode(); node; node = walker.nextNode()) {
            if (node.parentElement.closest("code, a")) continue;
            const kana = (node.data.match(japanese) || []).length;
            const spread = lines(node, 0, node.data.length);
            if (kana && spread > 1 && kana / spread < 4) broken.push(node.data.trim());
            for (const match of node.data.matchAll(/[\p{L}\p{N}]+/gu)) {
                if (match[0].length < 2 || match[0].match(japanese)) continue;
                if (lines(node, match.index, match.index + match[0].length) > 1) broken.push(match[0]);
            }
        }
    }
    return broken;
}"""


@pytest.fixture
def desktop(live_server, ddb, browser):  # noqa: F811
    """A desktop-sized tab, logged in as a staff account; ``open(path, language)``."""
    make_account("boss@example.com", "boss", staff=True, password=make_password(PASSWORD))
    contexts = []

    def open_page(path, language):
        context = browser.new_context(base_url=live_server.url, viewport=DESKTOP, locale=language)
        context.set_default_timeout(15_000)
        contexts.append(context)
        page = context.new_page()
        page.goto("/accounts/login/")
        page.fill("#id_username", "boss")
        page.fill("#id_password", PASSWORD)
        page.locator("form.account-form button[type=submit]:not(.passkey-button)").click()
        page.wait_for_url(re.compile(r"/accounts/profile/$"))
        page.goto(path)
        return page

    yield open_page
    for context in contexts:
        context.close()


@pytest.mark.parametrize("language", ["en", "ja"])
def test_the_lock_audit_breaks_no_word_on_a_desktop(desktop, language):
    write_accounts([new_account(LONG_EMAIL, "margaret_hamilton_apollo")], with_locks=False)
    write_locks({"UNIQ#EMAIL#" + "orphan." * 12 + "@example.com": "ACCT#gone"})
    # The page shows the last stored report: keep one, as the command would.
    reports.store_report(audit.run_audit(), source="command")

    page = desktop("/staff/locks/", language)

    assert page.locator("table.staff-table").count() >= 1
    assert page.evaluate(BROKEN) == []


@pytest.mark.parametrize("language", ["en", "ja"])
def test_the_account_list_breaks_no_word_on_a_desktop(desktop, language):
    seed_accounts(3)
    make_account(LONG_EMAIL, "margaret_hamilton_apollo")

    page = desktop("/staff/", language)

    assert page.evaluate(BROKEN) == []
