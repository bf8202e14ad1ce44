"""Every guard of ``protocol/conditions.tsv`` is shown by a mutation (issue 30): it has a line
in ``tests/guard_mutations.tsv`` naming the behaviour tests that fail without it (run so by
``tests/conftest.py``), or the reason no behaviour can show it missing. And the mutation
removes exactly that guard's conjuncts from the requests the code sends."""

import contextlib
import importlib
from pathlib import Path

import pytest

from accounts import store
from accounts.transactions.actions import Action, Transaction
from tests.guard_mutations import (
    ALWAYS,
    _shapes,
    catching_tests,
    guards_of,
    mapping,
    markdown_table,
    removed,
    table_guards,
)
from tests.protocol import test_protocol_drift as drift
from tests.protocol.test_protocol_drift import accounts_read, stopped_clock  # noqa: F401 (fixtures)
from tests.protocol_table import rows

ROOT = Path(__file__).resolve().parents[2]


@contextlib.contextmanager
def requests_sent():
    """The TransactWriteItems requests sent while open, as sent (after any mutation)."""
    sent = []
    request = Transaction.request

    def recorded(self):
        sent.append(request(self))
        return sent[-1]

    Transaction.request = recorded
    try:
        yield sent
    finally:
        Transaction.request = request


def test_every_guard_of_the_table_has_a_catching_test_or_a_reason():
    listed = mapping()
    missing = sorted(table_guards() - listed.keys())
    assert missing == [], "guards of protocol/conditions.tsv with no line in tests/guard_mutations.tsv"
    unknown = sorted(listed.keys() - table_guards())
    assert unknown == [], "lines of tests/guard_mutations.tsv naming no guard of protocol/conditions.tsv"
    neither = sorted(guard for guard, entry in listed.items() if bool(entry.caught_by) == bool(entry.reason))
    assert neither == [], "each guard has catching tests or a reason, not both, not neither"


@pytest.mark.parametrize("test", sorted(catching_tests()))
def test_every_catching_test_named_exists(test):
    path, *names = test.split("[")[0].split("::")
    module = importlib.import_module(path.removesuffix(".py").replace("/", "."))
    found = module
    for name in names:
        found = getattr(found, name, None)
    assert callable(found), f"{test} names no test"
    assert (ROOT / path).is_file()


def test_without_a_guard_its_conjuncts_are_gone_and_the_others_sent(ddb):
    account, _ = store.signup("ada@x.io", "ada", "hash")
    with removed("G_CHANGE_UPDATED_AS_READ") as dropped, requests_sent() as sent:
        store.update_account(store.get_account(account.id), email="lovelace@x.io")
    (update,) = [body for entry in sent[-1]["TransactItems"] for kind, body in entry.items() if kind == "Update"]
    assert [operation for operation, _ in dropped] == ["change"]
    names = update["ExpressionAttributeNames"]
    condition = update["ConditionExpression"]
    assert "updated" not in {names[name] for name in names if name in condition}
    assert "email" in {names[name] for name in names if name in condition}
    assert store.get_account(account.id).email == "lovelace@x.io"


def test_a_condition_check_left_with_no_conjunct_checks_one_always_true(ddb):
    carol, _ = store.signup("carol@x.io", "carol", "hash", email_verified=False)
    with removed("G_CHANGE_EMAIL_FREE") as dropped, requests_sent() as sent:
        store.update_account(carol, email="lovelace@x.io")
    checks = [body for entry in sent[-1]["TransactItems"] for kind, body in entry.items() if kind == "ConditionCheck"]
    assert [check["ConditionExpression"] for check in checks] == [ALWAYS]
    assert dropped


def test_each_conjunct_planned_is_matched_to_its_own_transactions_guard(accounts_read, stopped_clock):
    """Every transaction the drift test plans by name (with its actions' roles): each
    conjunct is found as the guard the table gives it in that very transaction."""
    table = {(row.transaction, row.action, row.kind, row.condition): row.guard for row in rows()}
    checked, wrong = 0, []
    for name, request, operation, _, _, roles in drift.code_transactions(*accounts_read):
        if roles is None:
            continue  # printed by accounts_explain: no roles to plan with
        actions = [
            Action(kind, body, role, (None, (body.get("Key") or body.get("Item"))["PK"]["S"], None))
            for (entry, role) in zip(request["TransactItems"], roles, strict=True)
            for kind, body in entry.items()
        ]
        shapes = _shapes(Transaction(operation, actions, now=stopped_clock))
        for (_, _, shape), guard in zip(shapes, guards_of(shapes), strict=True):
            checked += 1
            if table.get((name, *shape)) != guard:
                wrong.append((name, shape, guard, table.get((name, *shape))))
    assert checked > 200
    assert wrong == []


def test_the_table_of_docs_internals_invariants_is_the_mapping():
    page = (ROOT / "docs" / "internals" / "invariants.md").read_text(encoding="utf-8")
    assert markdown_table() in page, "paste tests.guard_mutations.markdown_table() into docs/internals/invariants.md"
