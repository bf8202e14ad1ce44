"""Staff pages that hold at any table size, on DynamoDB Local: the staff registry kept by
the transactions that grant and revoke staff, the requests of each staff page the same at
two table sizes, and the audit started from the page outside the request."""

import pytest
from django.contrib.auth import get_user_model
from django.urls import reverse

from accounts import dynamo, store
from accounts.audit import background, reports
from accounts.exceptions import StaleItem
from accounts.staff import registry
from accounts.tables import STAFF_REGISTRY
from tests.seeding import new_account, seed_accounts, write_accounts
from tests.staff import boss, client_as, make_account, messages_of, run_command, staff_client  # noqa: F401 (fixtures)

pytestmark = pytest.mark.dynamodb_local


def registered():
    """The account PKs the staff registry lists."""
    return sorted(raw["SK"]["S"] for raw in dynamo.query_partition(STAFF_REGISTRY.partition))


def flag(client, account, name, value):
    return client.post(reverse("staff:flag", args=[account.id]), {"flag": name, "value": "1" if value else "0"})


# The registry, kept by the transactions


def test_a_staff_sign_up_and_createsuperuser_are_registered_in_the_same_transaction(ddb, count_requests):
    count_requests.reset()
    boss = make_account("boss@example.com", "boss", staff=True)
    assert dict(count_requests.counts) == {"TransactWriteItems": 1}
    make_account("ada@example.com", "ada")
    admin = get_user_model().objects.create_superuser("admin", "admin@example.com", "pw-Quite-Long-1")

    assert registered() == sorted([boss.PK, f"ACCT#{admin.id}"])
    assert registry.count_active_staff() == 2


def test_granting_revoking_deactivating_and_deleting_keep_the_registry(staff_client, boss):
    ada = make_account("ada@example.com", "ada")

    flag(staff_client, ada, "is_staff", True)
    assert registered() == sorted([boss.PK, ada.PK])
    flag(staff_client, ada, "is_active", False)
    assert registered() == [boss.PK]
    flag(staff_client, ada, "is_active", True)
    assert registered() == sorted([boss.PK, ada.PK])
    flag(staff_client, ada, "is_staff", False)
    assert registered() == [boss.PK]
    flag(staff_client, ada, "is_staff", True)
    staff_client.post(reverse("staff:delete", args=[ada.id]))
    assert registered() == [boss.PK]


def test_an_unverified_staff_account_counts_once_its_address_is_verified(ddb):
    pending = make_account("pending@example.com", "pending", staff=True, email_verified=False)
    assert registered() == []

    store.verify_email(pending)

    assert registered() == [pending.PK]


def test_a_grant_racing_a_deactivation_cannot_register_an_inactive_account(staff_client, boss):
    ada = make_account("ada@example.com", "ada")
    stale = store.get_account(ada.id)
    store.update_account(store.get_account(ada.id), is_active=False)

    with pytest.raises(StaleItem):
        store.update_account(stale, is_staff=True)

    assert registered() == [boss.PK]


def test_the_last_staff_account_is_protected_by_one_query_of_the_registry(staff_client, boss, count_requests):
    count_requests.reset()

    response = flag(staff_client, boss, "is_staff", False)

    # The staff user's session, the account, the registry's count: no Scan, no write.
    assert dict(count_requests.counts) == {"BatchGetItem": 1, "GetItem": 1, "Query": 1}
    assert response.status_code == 302
    assert store.get_account(boss.id).is_staff is True


def test_backfill_registers_staff_that_predate_the_registry_and_drops_stale_entries(ddb):
    older = write_accounts([new_account(f"old{n}@example.com", f"old{n}", is_staff=True) for n in range(3)])
    write_accounts([new_account("sleepy@example.com", "sleepy", is_staff=True, is_active=False)])
    seed_accounts(20)
    dynamo.batch_write(puts=[STAFF_REGISTRY.key("ACCT#gone")])
    assert registry.count_active_staff() == 1

    status, out, _ = run_command("accounts_backfill", "--staff")

    assert status == 0
    assert out.strip() == "Staff registry: 3 account(s) added, 1 removed, 3 active staff account(s) listed."
    assert registered() == sorted(account.PK for account in older)
    assert run_command("accounts_backfill", "--staff")[1].startswith("Staff registry: 0 account(s) added, 0 removed")


# Requests per staff page, at two table sizes


def staff_page_requests(proxy, client, boss, other):
    """The DynamoDB requests of each staff page, counted on the wire."""
    pages = {
        "account list": lambda: client.get(reverse("staff:accounts")),
        "search": lambda: client.get(reverse("staff:accounts"), {"q": "other"}),
        "lock audit": lambda: client.get(reverse("staff:locks")),
        "account": lambda: client.get(reverse("staff:account", args=[other.id])),
        "last staff refused": lambda: flag(client, boss, "is_staff", False),
        "grant": lambda: flag(client, other, "is_staff", True),
        "revoke": lambda: flag(client, other, "is_staff", False),
    }
    counts = {}
    for name, send in pages.items():
        proxy.reset()
        response = send()
        assert response.status_code in (200, 302), name
        counts[name] = proxy.snapshot()
    return counts


def test_each_staff_page_costs_the_same_requests_at_two_table_sizes(proxy, settings):
    boss = make_account("boss@example.com", "boss", staff=True)
    other = make_account("other@example.com", "other")
    client = client_as(boss)
    seed_accounts(60, prefix="small")
    run_command("accounts_audit")
    small = staff_page_requests(proxy, client, boss, other)
    seed_accounts(600, prefix="large")
    run_command("accounts_audit")

    large = staff_page_requests(proxy, client, boss, other)

    assert large == small
    assert small["lock audit"] == {"BatchGetItem": 1, "Query": 2}
    assert small["account list"] == {"BatchGetItem": 1, "Scan": 1}
    assert small["last staff refused"] == {"BatchGetItem": 1, "GetItem": 1, "Query": 1}
    assert all("Scan" not in counts for name, counts in small.items() if name != "account list")


# The audit started from the page


def test_run_the_audit_starts_it_outside_the_request_and_the_page_shows_its_report(staff_client):
    response = staff_client.post(reverse("staff:run_audit"), follow=True)

    assert messages_of(response) == ["The audit has started; this page shows its progress."]
    thread = background.running_thread()
    if thread is not None:
        thread.join(timeout=60)
    [run] = reports.recent_runs()
    assert (run.status, run.source, run.accounts, run.findings) == ("finished", "page", 1, 0)
    page = staff_client.get(reverse("staff:locks")).content.decode()
    assert "Consistent: every value has its lock, and every lock its owner." in page


def test_a_running_audit_shows_its_progress_and_is_not_started_twice(staff_client):
    started = reports.utcnow()
    reports.record_progress("20300101T000000.000000-abcdef", started, scanned=250, estimated=1000, source="command")

    response = staff_client.get(reverse("staff:locks"))
    again = staff_client.post(reverse("staff:run_audit"), follow=True)

    page = response.content.decode()
    assert "An audit is running: 250 of about 1000 items read (25%)." in page
    assert response["Refresh"] == "5"
    assert reverse("staff:run_audit") not in page
    assert messages_of(again) == ["An audit is already running; its progress is below."]
    assert background.running_thread() is None


def test_an_audit_that_stopped_reporting_is_shown_as_stalled(staff_client, monkeypatch):
    reports.record_progress("20300101T000000.000000-abcdef", reports.utcnow(), scanned=1, estimated=9, source="page")
    monkeypatch.setattr(reports, "STALE_SECONDS", 0)

    page = staff_client.get(reverse("staff:locks")).content.decode()

    assert "stopped reporting" in page
    assert reverse("staff:run_audit") in page
