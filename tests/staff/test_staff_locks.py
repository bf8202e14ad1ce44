"""``/staff/locks/``: the last audit report the table keeps; planted damage is listed, each
finding repaired by its button or all at once, and the table is consistent afterwards."""

import re

import pytest
from django.urls import reverse

from accounts import audit
from accounts.staff import views
from tests.seeding import delete_lock, new_account, read_lock, write_accounts, write_locks
from tests.staff import boss, make_account, messages_of, run_command, staff_client  # noqa: F401 (fixtures)

pytestmark = pytest.mark.dynamodb_local

LOCKS = reverse("staff:locks")


@pytest.fixture
def damage(boss):
    """A lock deleted behind the engine's back, an orphan whose owner does not exist, and a
    lock pointing at the wrong account."""
    ada = make_account("ada@example.com", "ada")
    eve = make_account("eve@example.com", "eve")
    delete_lock("UNIQ#EMAIL#ada@example.com")
    write_locks({"UNIQ#HANDLE#ghost": "ACCT#nobody", "UNIQ#HANDLE#eve": ada.PK})
    audit_now()
    return {"ada": ada, "eve": eve}


def audit_now():
    """Audit the table from the command line: the page shows the report it keeps."""
    status, _, _ = run_command("accounts_audit")
    return status


def repair_forms(response):
    """The hidden fields of each repair button on the page, as the browser would post them."""
    forms = re.findall(
        rf'<form method="post" action="{reverse("staff:repair")}">(.*?)</form>', response.content.decode(), re.S
    )
    posted = []
    for form in forms:
        fields = re.findall(r'<input type="hidden" name="(\w+)" value="([^"]*)">', form)
        data = {}
        for name, value in fields:
            if name != "csrfmiddlewaretoken":
                data.setdefault(name, []).append(value)
        posted.append(data)
    return posted


def test_without_a_report_the_page_says_to_run_the_audit(staff_client):
    response = staff_client.get(LOCKS)

    page = response.content.decode()
    assert "No audit report yet" in page
    assert "python manage.py accounts_audit --segments 4" in page
    assert f'action="{reverse("staff:run_audit")}"' in page


def test_consistent_table_says_so_with_the_reports_age(staff_client):
    audit_now()

    response = staff_client.get(LOCKS)

    assert response.context["rows"] == []
    page = response.content.decode()
    assert "Consistent: every value has its lock, and every lock its owner." in page
    assert "Last report: finished 0\xa0minutes ago" in page
    assert "(1 accounts, 3 locks)" in page


def test_planted_damage_is_listed_with_keys_and_accounts(staff_client, damage):
    response = staff_client.get(LOCKS)

    findings = {row["finding"].key: row["finding"] for row in response.context["rows"]}
    assert {key: finding.kind for key, finding in findings.items()} == {
        "UNIQ#EMAIL#ada@example.com": audit.MISSING,
        "UNIQ#HANDLE#ghost": audit.ORPHANED,
        "UNIQ#HANDLE#eve": audit.WRONG_OWNER,
    }
    page = response.content.decode()
    assert "Repair all (3)" in page
    assert f'href="{reverse("staff:account", args=[damage["ada"].id])}"' in page
    assert "The lock&#x27;s owner ACCT#nobody does not exist." in page
    assert f"Account {damage['eve'].PK} holds this username, but the lock names {damage['ada'].PK}" in page


def test_each_finding_is_repaired_by_its_own_button(staff_client, damage):
    buttons = repair_forms(staff_client.get(LOCKS))
    assert len(buttons) == 3

    for data in buttons:
        response = staff_client.post(reverse("staff:repair"), data, follow=True)
        assert messages_of(response)[0].startswith(f"Repaired {data['key'][0]}: lock ")

    assert read_lock("UNIQ#EMAIL#ada@example.com") == (True, damage["ada"].PK)
    assert read_lock("UNIQ#HANDLE#ghost") == (False, None)
    assert read_lock("UNIQ#HANDLE#eve") == (True, damage["eve"].PK)
    page = staff_client.get(LOCKS)
    assert [row["repaired"] for row in page.context["rows"]] == [True, True, True]
    assert repair_forms(page) == []
    assert audit.run_audit().consistent


def test_repair_all_fixes_everything(staff_client, damage):
    response = staff_client.post(reverse("staff:repair_all"), follow=True)

    assert messages_of(response) == ["Repaired 3 of 3 finding(s)."]
    assert all(row["repaired"] for row in response.context["rows"])
    assert audit.run_audit().consistent
    again = staff_client.post(reverse("staff:repair_all"), follow=True)
    assert messages_of(again) == ["Repaired 0 of 3 finding(s)."]


def test_repair_all_acts_on_the_stored_report_a_batch_at_a_time(staff_client, damage, monkeypatch):
    monkeypatch.setattr(views, "REPAIRS_PER_REQUEST", 2)

    first = staff_client.post(reverse("staff:repair_all"), follow=True)
    second = staff_client.post(reverse("staff:repair_all"), follow=True)

    assert messages_of(first) == [
        "Repaired 2 of 3 finding(s).",
        "More findings wait for a repair: press “Repair all” again.",
    ]
    assert messages_of(second) == ["Repaired 1 of 3 finding(s)."]
    assert audit.run_audit().consistent


def test_repair_all_without_a_report_says_to_run_the_audit(staff_client):
    response = staff_client.post(reverse("staff:repair_all"), follow=True)

    assert messages_of(response) == ["There is no audit report yet: run the audit first."]


def test_duplicates_have_no_button_and_survive_repair_all(staff_client, damage):
    twin = new_account("twin@example.com", "ADA", lock_keys={"EMAIL": "UNIQ#EMAIL#twin@example.com"})
    write_accounts([twin], with_locks=False)
    write_locks({"UNIQ#EMAIL#twin@example.com": twin.PK})
    audit_now()

    page = staff_client.get(LOCKS)
    duplicates = [row["finding"].key for row in page.context["rows"] if row["finding"].kind == audit.DUPLICATE]
    assert duplicates == ["UNIQ#HANDLE#ada", "UNIQ#HANDLE_SKEL#ada"]
    assert "needs a person" in page.content.decode()
    assert len(repair_forms(page)) == 3

    response = staff_client.post(reverse("staff:repair_all"), follow=True)

    assert messages_of(response)[0] == "Repaired 3 of 5 finding(s)."
    assert messages_of(response)[1].startswith("2 finding(s) remain")
    left = [row["finding"].kind for row in response.context["rows"] if not row["repaired"]]
    assert left == [audit.DUPLICATE, audit.DUPLICATE]


def test_a_button_for_a_finding_that_changed_since_the_page_writes_nothing(staff_client, damage):
    [missing] = [data for data in repair_forms(staff_client.get(LOCKS)) if data["kind"] == [audit.MISSING]]
    write_locks({"UNIQ#EMAIL#ada@example.com": damage["eve"].PK})

    response = staff_client.post(reverse("staff:repair"), missing, follow=True)

    [message] = messages_of(response)
    assert message.startswith("Not repaired UNIQ#EMAIL#ada@example.com: The lock changed since the audit")
    assert read_lock("UNIQ#EMAIL#ada@example.com") == (True, damage["eve"].PK)


def test_a_button_for_a_finding_already_fixed_says_so(staff_client, damage):
    [orphan] = [data for data in repair_forms(staff_client.get(LOCKS)) if data["kind"] == [audit.ORPHANED]]
    delete_lock("UNIQ#HANDLE#ghost")

    response = staff_client.post(reverse("staff:repair"), orphan, follow=True)

    assert messages_of(response) == ["Not repaired UNIQ#HANDLE#ghost: The lock is already as it should be."]


@pytest.mark.parametrize(
    "data",
    [
        {"kind": "orphaned", "namespace": "PHONE", "key": "UNIQ#PHONE#1"},
        {"kind": "orphaned", "namespace": "EMAIL", "key": "UNIQ#HANDLE#ghost"},
        {"kind": "duplicate", "namespace": "HANDLE", "key": "UNIQ#HANDLE#ghost"},
        {"namespace": "HANDLE", "key": "UNIQ#HANDLE#ghost"},
    ],
)
def test_a_repair_of_something_the_audit_cannot_show_is_a_bad_request(staff_client, damage, data):
    response = staff_client.post(reverse("staff:repair"), data)

    assert response.status_code == 400
    assert read_lock("UNIQ#HANDLE#ghost") == (True, "ACCT#nobody")
