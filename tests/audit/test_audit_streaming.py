"""The audit as a streaming, partitioned job on DynamoDB Local: slices merged into the
whole table's report, a stopped run continued from its checkpoint, the report kept in the
table, and client memory that does not grow with the table."""

import json
import threading
import tracemalloc

import pytest
from django.core.management import CommandError

from accounts import audit
from accounts.audit import reports
from accounts.audit.checking import Scope
from accounts.store import constraint_for
from tests.seeding import delete_lock, new_account, seed_accounts, write_locks
from tests.staff import run_command

pytestmark = pytest.mark.dynamodb_local


@pytest.fixture
def damaged(ddb):
    """Forty accounts and damage of every repairable kind, spread over the table."""
    accounts = seed_accounts(40)
    for account in accounts[:6]:
        delete_lock(f"UNIQ#EMAIL#{account.email}")
    write_locks({"UNIQ#HANDLE#ghost": "ACCT#nobody", "UNIQ#HANDLE#user9": accounts[10].PK})
    return accounts


def findings_of(document):
    return sorted((finding["kind"], finding["key"], tuple(finding["holders"])) for finding in document["findings"])


def test_slices_merged_report_what_one_run_of_the_whole_table_reports(damaged, tmp_path):
    _, whole, _ = run_command("accounts_audit", "--json")
    paths = []
    for segment in range(3):
        status, out, err = run_command("accounts_audit", "--json", "--segment", str(segment), "--total-segments", "3")
        assert "Scanned" in err
        paths.append(tmp_path / f"slice-{segment}.json")
        paths[-1].write_text(out)

    status, out, _ = run_command("accounts_audit_merge", "--json", *map(str, paths))

    merged, whole = json.loads(out), json.loads(whole)
    assert status == 1
    assert findings_of(merged) == findings_of(whole)
    assert len(merged["findings"]) == 8  # six missing, an orphan, a wrong owner
    # (Items differ: the first run's report is kept in the table, and later runs read it.)
    counts = ("accounts", "locks")
    assert [merged["scanned"][name] for name in counts] == [whole["scanned"][name] for name in counts]
    assert merged["report"]["covered"] == [0, 1, 2]


def test_a_slice_report_says_which_segment_it_covers(damaged):
    status, out, _ = run_command("accounts_audit", "--segment", "1", "--total-segments", "4")

    assert "Slice 1 of 4 Scan segments" in out


def test_a_merge_refuses_slices_that_do_not_cover_the_table_once(damaged, tmp_path):
    paths = {}
    for segment, total in ((0, 2), (0, 3), (1, 3)):
        _, out, _ = run_command("accounts_audit", "--json", "--segment", str(segment), "--total-segments", str(total))
        paths[segment, total] = tmp_path / f"{segment}-of-{total}.json"
        paths[segment, total].write_text(out)

    with pytest.raises(CommandError, match="segment\\(s\\) 2 missing"):
        run_command("accounts_audit_merge", str(paths[0, 3]), str(paths[1, 3]))
    with pytest.raises(CommandError, match="covered twice"):
        run_command("accounts_audit_merge", str(paths[0, 3]), str(paths[0, 3]), str(paths[1, 3]))
    with pytest.raises(CommandError, match="split the table differently"):
        run_command("accounts_audit_merge", str(paths[0, 2]), str(paths[1, 3]))


def test_a_slice_cannot_repair(damaged):
    with pytest.raises(CommandError, match="accounts_audit_merge --repair"):
        run_command("accounts_audit", "--repair", "--segment", "0", "--total-segments", "2")


def test_merged_slices_repair_and_store_the_report(damaged, tmp_path):
    paths = []
    for segment in range(2):
        _, out, _ = run_command("accounts_audit", "--json", "--segment", str(segment), "--total-segments", "2")
        paths.append(tmp_path / f"{segment}.json")
        paths[-1].write_text(out)

    status, out, _ = run_command("accounts_audit_merge", "--repair", *map(str, paths))

    assert status == 0
    assert audit.run_audit().consistent
    [run] = reports.recent_runs()
    assert (run.status, run.source, run.findings, run.repairable) == ("finished", "merge", 8, 8)
    stored, _ = reports.stored_findings(run.run_id, Scope(audit.audited_models()))
    assert {entry.outcome for entry in stored} == {audit.REPAIRED}


def test_one_value_held_on_two_slices_is_a_duplicate_not_two_missing_locks(ddb):
    email = constraint_for("email")
    ada, twin = new_account("ada@example.com", "ada"), new_account("ADA@example.com", "twin")
    key = email.lock_key(ada)
    first = audit.Finding(audit.MISSING, email, key=key, holders=(ada.PK,), items={ada.PK: ada})
    second = audit.Finding(audit.MISSING, email, key=key, holders=(twin.PK,), items={twin.PK: twin})
    slices = [
        audit.Report(4, 1, 3, 1, 0.1, [first], total_segments=2, covered=(0,)),
        audit.Report(4, 1, 3, 1, 0.1, [second], total_segments=2, covered=(1,)),
    ]

    [finding] = audit.merge_reports(slices).findings

    assert finding.kind == audit.DUPLICATE
    assert finding.holders == tuple(sorted([ada.PK, twin.PK]))
    assert not finding.repairable


def test_a_stopped_run_continues_from_its_checkpoint(damaged, tmp_path):
    fresh = audit.run_audit()
    checkpoint = audit.Checkpoint(tmp_path / "audit.json")
    stop = threading.Event()
    pages = []

    def stop_after_two_pages(scanned):
        pages.append(scanned)
        if len(pages) == 2:
            stop.set()

    with pytest.raises(audit.AuditStopped) as stopped:
        audit.run_audit(segments=2, checkpoint=checkpoint, page_size=10, progress=stop_after_two_pages, stop=stop)
    assert 0 < stopped.value.report.scanned < fresh.scanned
    assert checkpoint.path.exists()

    resumed = audit.run_audit(segments=2, checkpoint=checkpoint, page_size=10)

    assert resumed.scanned == fresh.scanned
    assert (resumed.accounts, resumed.locks) == (fresh.accounts, fresh.locks)
    assert [finding.as_dict() for finding in resumed.findings] == [finding.as_dict() for finding in fresh.findings]
    assert resumed.run_id == stopped.value.report.run_id
    assert not checkpoint.path.exists()


def test_a_checkpoint_of_another_split_is_refused(damaged, tmp_path):
    checkpoint = audit.Checkpoint(tmp_path / "audit.json")
    stop = threading.Event()
    with pytest.raises(audit.AuditStopped):
        audit.run_audit(segments=2, checkpoint=checkpoint, page_size=10, progress=lambda _: stop.set(), stop=stop)

    with pytest.raises(audit.InvalidReport, match="this run reads 0, 1, 2 of 3"):
        audit.run_audit(segments=3, checkpoint=checkpoint)


def test_the_command_keeps_the_whole_tables_report_in_the_table(damaged):
    status, _, _ = run_command("accounts_audit", "--segments", "2")

    [run] = reports.recent_runs()
    assert status == 1
    # Read: 40 accounts and their locks, 6 deleted and 1 added, and the key-version item.
    assert (run.status, run.source, run.scanned, run.accounts, run.findings) == (
        "finished",
        "command",
        40 * 4 - 6 + 1 + 1,
        40,
        8,
    )
    assert run.kinds[audit.MISSING] == 6
    stored, next_page = reports.stored_findings(run.run_id, Scope(audit.audited_models()), limit=5)
    assert len(stored) == 5 and next_page is not None
    assert [entry.finding.kind for entry in stored] == [audit.ORPHANED] + [audit.MISSING] * 4


def test_a_read_budget_paces_the_run(damaged):
    budget = audit.ReadBudget(1000)

    report = audit.run_audit(budget=budget)

    assert len(report.findings) == 8


def peak_memory_of_an_audit(expected_accounts):
    """Peak bytes allocated (Python's tracemalloc) while auditing the table, read in pages
    of 50 items; the table must hold ``expected_accounts`` consistent accounts."""
    tracemalloc.start()
    try:
        report = audit.run_audit(page_size=50)
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert report.consistent and report.accounts == expected_accounts
    return peak


def test_client_memory_does_not_grow_with_the_table(ddb):
    audit.run_audit()  # the clients and caches every run shares, built once
    seed_accounts(100, prefix="small")
    small = peak_memory_of_an_audit(100)
    seed_accounts(400, prefix="large")

    large = peak_memory_of_an_audit(500)

    # Five times the items in the same pages: the peak is a page's, whatever the table.
    assert large < small * 1.2, (small, large)
