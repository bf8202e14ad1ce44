"""The audit and the backfill cover every declared constraint of every audited model:
the accounts and each model of ACCOUNTS_UNIQUE_MODELS (here the Player example)."""

import pytest
from django.urls import reverse

from accounts import audit, store, transactions
from accounts.examples import Player
from tests.seeding import delete_lock, read_lock, write_locks
from tests.staff import boss, run_command, staff_client  # noqa: F401 (fixtures)

pytestmark = pytest.mark.dynamodb_local


@pytest.fixture
def players(ddb, settings):
    settings.ACCOUNTS_UNIQUE_MODELS = ["accounts.examples.Player"]


def player(name, number, team="team-001"):
    return transactions.create(Player(PK=f"PLAYER#{name}", team=team, name=name.title(), number=number))


def test_players_written_by_the_engine_are_consistent(players):
    player("alice", 18)
    store.signup("ada@example.com", "ada", "!hash")
    report = audit.run_audit()
    assert report.consistent
    assert (report.accounts, report.locks) == (2, 4)  # ada and alice; her uniform and ada's three


def test_an_orphaned_player_lock_is_found_and_released(players):
    alice = player("alice", 18)
    write_locks({"UNIQ#UNIFORM#team-001#99": alice.PK})
    [finding] = audit.run_audit().findings
    assert (finding.kind, finding.key, finding.namespace) == (audit.ORPHANED, "UNIQ#UNIFORM#team-001#99", "UNIFORM")
    [result] = audit.repair_all(audit.run_audit())
    assert result.repaired
    assert read_lock("UNIQ#UNIFORM#team-001#99") == (False, None)
    assert audit.run_audit().consistent


def test_a_missing_player_lock_is_backfilled(players):
    alice = player("alice", 18)
    delete_lock("UNIQ#UNIFORM#team-001#18")
    report, repairs = audit.backfill()
    assert [finding.kind for finding in report.findings] == [audit.MISSING]
    assert [result.outcome for result in repairs] == [audit.REPAIRED]
    assert read_lock("UNIQ#UNIFORM#team-001#18") == (True, alice.PK)


def test_two_players_with_one_number_are_a_duplicate(players):
    player("alice", 18)
    bob = Player(PK="PLAYER#bob", team="team-001", name="Bob", number=18)
    bob.save()
    [finding] = audit.run_audit().findings
    assert finding.kind == audit.DUPLICATE and finding.holders == ("PLAYER#alice", "PLAYER#bob")


def test_a_player_lock_is_repaired_from_the_staff_page(players, staff_client):
    alice = player("alice", 18)
    write_locks({"UNIQ#UNIFORM#team-001#18": "PLAYER#ghost"})
    run_command("accounts_audit")
    page = staff_client.get(reverse("staff:locks"))
    assert page.status_code == 200 and "PLAYER#alice" in page.content.decode()
    data = {"kind": audit.WRONG_OWNER, "namespace": "UNIFORM", "key": "UNIQ#UNIFORM#team-001#18", "holder": [alice.PK]}
    response = staff_client.post(reverse("staff:repair"), data)
    assert response.status_code == 302
    assert read_lock("UNIQ#UNIFORM#team-001#18") == (True, alice.PK)


def test_without_the_setting_player_locks_are_reported_unchecked_with_a_hint(ddb):
    player("alice", 18)
    write_locks({"UNIQ#UNIFORM#team-001#99": "PLAYER#alice"})
    [finding] = audit.run_audit().findings
    assert (finding.kind, finding.namespace, finding.count) == (audit.UNDECLARED, "UNIFORM", 2)
    assert "ACCOUNTS_UNIQUE_MODELS" in finding.describe()


def test_an_audit_of_one_model_skips_the_locks_of_the_others(players):
    player("alice", 18)
    store.signup("ada@example.com", "ada", "!hash")
    report = audit.run_audit(Player)
    assert report.consistent
    assert (report.accounts, report.locks) == (1, 1)


def test_each_finding_names_the_invariant_it_breaks(players):
    alice = player("alice", 18)
    Player(PK="PLAYER#bob", team="team-001", name="Bob", number=18).save()
    Player(PK="PLAYER#carol", team="team-001", name="Carol", number=3).save()
    write_locks({"UNIQ#UNIFORM#team-001#99": alice.PK, "UNIQ#UNIFORM#team-001#5": "PLAYER#ghost"})
    Player(PK="PLAYER#dave", team="team-001", name="Dave", number=5).save()
    found = {finding.as_dict()["kind"]: finding.as_dict()["invariant"] for finding in audit.run_audit().findings}
    assert found == {
        audit.DUPLICATE: "I1",
        audit.MISSING: "I2",
        audit.WRONG_OWNER: "I2",
        audit.ORPHANED: "I3",
    }
