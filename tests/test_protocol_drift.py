"""The model and the code must not drift apart.

``protocol/conditions.tsv`` lists, per transaction, each action (kind, role) and each conjunct
of its ConditionExpression, with the guard macro of ``protocol/model.h`` that models it. These
tests build every transaction the code sends (through ``accounts_explain`` for those it
prints, through the ``plan_*`` functions for the others), normalize each condition into the
table's shape (placeholders resolved to attribute names, values replaced by their role:
``read``, ``me``, ``other``) and compare with the rows the code sends today (``since`` =
``code``), in both directions; and check that the model defines and uses exactly the table's
guards. Rows of transactions still on other branches (``since`` = ``i9``, ``i13a``) are
checked against the model only, until they merge.
"""

import io
import json
import re

import pytest
from django.core.management import call_command
from django.core.management.base import CommandParser

from accounts import store, transactions
from accounts.management.commands.accounts_explain import Command as ExplainCommand
from accounts.tables import ACCOUNT_PREFIX, Account, utcnow
from tests.protocol_table import MODEL_HEADER, guards_defined, rows

GONE = f"{ACCOUNT_PREFIX}gone"


def explain(*args):
    out = io.StringIO()
    call_command("accounts_explain", *args, stdout=out)
    return json.loads(out.getvalue())


def split_and(text):
    """The conjuncts of ``text``: top-level ANDs flattened, redundant outer parentheses dropped."""
    text = text.strip()
    while text.startswith("(") and _closing(text, 0) == len(text) - 1:
        text = text[1:-1].strip()
    depth, start, parts = 0, 0, []
    for index, char in enumerate(text):
        depth += {"(": 1, ")": -1}.get(char, 0)
        if depth == 0 and text.startswith(" AND ", index):
            parts.append(text[start:index])
            start = index + len(" AND ")
    if not parts:
        return [text]
    parts.append(text[start:])
    return [conjunct for part in parts for conjunct in split_and(part)]


def _closing(text, opening):
    depth = 0
    for index in range(opening, len(text)):
        depth += {"(": 1, ")": -1}.get(text[index], 0)
        if depth == 0:
            return index
    raise ValueError(f"Unbalanced parentheses: {text}")


def action_label(operation, kind, key):
    """The table's name for an action: its role, and the namespace of a lock."""
    if key.startswith(ACCOUNT_PREFIX):
        return "item" if kind != "ConditionCheck" else None  # holder/owner: decided by the caller
    namespace = key.split("#")[1]
    if operation == "repair":
        role = "repaired_lock"
    else:
        role = {"Put": "new_lock", "Delete": "old_lock", "ConditionCheck": "kept_lock"}[kind]
    return f"{role} {namespace}"


def shapes(name, request, operation, me=None, holder=None):
    """``{(transaction, action, kind, conjunct)}`` of a TransactWriteItems request."""
    found = set()
    for entry in request["TransactItems"]:
        (kind, body), = entry.items()
        key = (body.get("Key") or body.get("Item"))["PK"]["S"]
        label = action_label(operation, kind, key)
        if label is None:
            label = "holder" if key == holder else "owner"
        names = body.get("ExpressionAttributeNames", {})
        values = body.get("ExpressionAttributeValues", {})
        is_lock = not key.startswith(ACCOUNT_PREFIX)

        def role(placeholder):
            value = values[placeholder]
            if not is_lock:
                return "read"
            return "me" if value == {"S": me} else "other"

        text = re.sub(r"#\w+", lambda match: names[match.group()], body["ConditionExpression"])
        text = re.sub(r":\w+", lambda match: role(match.group()), text)
        text = re.sub(r"(\w+) \(", r"\1(", text)
        found.update((name, label, kind, conjunct) for conjunct in split_and(text))
    return found


def code_transactions(ada, bob):
    """Every transaction the code sends, as ``(name, request, operation, me, holder)``."""
    username = store.constraint_for("username")
    email_key = store.constraint_for("email").lock_key(ada)
    handle_key = username.key_for("somebody")
    now = utcnow()
    yield "signup", explain("signup", "--email", "new@x.io", "--username", "new"), "create", None, None
    yield "change_email", explain("change-email", "--email", "ada@x.io", "--to", "lovelace@x.io"), "change", ada.PK, None
    yield "change_username", explain("change-username", "--username", "ada", "--to", "countess"), "change", ada.PK, None
    yield "delete", explain("delete", "--email", "ada@x.io"), "delete", ada.PK, None
    planned = {
        "change_both": transactions.plan_change(ada, {"email": "l@x.io", "username": "l", "updated": now}),
        "change_email_keeping_lock": transactions.plan_change(
            ada, {"email": "l@x.io", "updated": now}, keep_locks={email_key}
        ),
        "delete_keeping_lock": transactions.plan_delete(ada, keep_locks={email_key}),
        "claim": transactions.plan_claim_lock(ada, username),
        "transfer_from_changed_owner": transactions.plan_transfer_lock(ada, username, bob.PK, bob),
        "transfer_from_gone_owner": transactions.plan_transfer_lock(ada, username, GONE, None),
        "transfer_from_no_owner": transactions.plan_transfer_lock(ada, username, None, None),
        "release_from_changed_owner": transactions.plan_release_lock(Account, username, handle_key, bob.PK, bob),
        "release_from_gone_owner": transactions.plan_release_lock(Account, username, handle_key, GONE, None),
        "release_from_no_owner": transactions.plan_release_lock(Account, username, handle_key, None, None),
    }
    for name, transaction in planned.items():
        holder = ada.PK if transaction.operation == "repair" and not name.startswith("release") else None
        me = holder if transaction.operation == "repair" else ada.PK
        yield name, json.loads(transactions.explain(transaction)), transaction.operation, me, holder


def explained_operations():
    """The operations ``accounts_explain`` prints (its subcommands), in the table's spelling."""
    parser = ExplainCommand().create_parser("manage.py", "accounts_explain")
    assert isinstance(parser, CommandParser)
    subparsers = next(action for action in parser._actions if action.dest == "operation")
    return {name.replace("-", "_") for name in subparsers.choices}


@pytest.fixture
def accounts_read(ddb):
    store.signup("ada@x.io", "ada", "hash")
    store.signup("bob@x.io", "bob", "hash")
    return store.get_by_email("ada@x.io"), store.get_by_email("bob@x.io")


def test_conditions_the_code_sends_are_the_table_rows_of_today(accounts_read):
    ada, bob = accounts_read
    sent = set()
    for name, request, operation, me, holder in code_transactions(ada, bob):
        sent |= shapes(name, request, operation, me, holder)
    table = {(row.transaction, row.action, row.kind, row.condition) for row in rows() if row.since == "code"}
    assert sorted(sent - table) == [], "sent by the code, missing from protocol/conditions.tsv"
    assert sorted(table - sent) == [], "in protocol/conditions.tsv, not sent by the code"


def test_every_operation_accounts_explain_prints_is_checked(ddb):
    checked = {row.transaction for row in rows() if row.since == "code"}
    assert explained_operations() <= checked


def test_model_defines_and_uses_exactly_the_guards_of_the_table():
    text = MODEL_HEADER.read_text(encoding="utf-8")
    defined = guards_defined(text)
    assert len(defined) == len(set(defined))
    assert set(defined) == {row.guard for row in rows()}
    unused = [guard for guard in defined if len(re.findall(rf"\b{guard}\b", text)) < 2]
    assert unused == []


def test_table_rows_are_well_formed():
    table = rows()
    assert {row.since for row in table} <= {"code", "i9", "i13a"}
    assert {row.kind for row in table} <= {"Put", "Update", "Delete", "ConditionCheck"}
    keys = [(row.transaction, row.action, row.kind, row.condition) for row in table]
    assert len(keys) == len(set(keys))


@pytest.mark.parametrize(
    "expression,conjuncts",
    [
        ("attribute_not_exists (PK)", ["attribute_not_exists (PK)"]),
        ("((a AND b) AND (c OR d))", ["a", "b", "c OR d"]),
        ("(x = read OR attribute_not_exists (PK))", ["x = read OR attribute_not_exists (PK)"]),
    ],
)
def test_conditions_split_into_their_conjuncts(expression, conjuncts):
    assert split_and(expression) == conjuncts
