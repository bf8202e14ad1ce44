"""Each guard of ``protocol/conditions.tsv`` removed from the requests the code sends, to show
that a behaviour test fails without it (issue 30: "a guard that no test notices missing is a
guard you don't have").

A mutation drops ONE guard: every conjunct of a ConditionExpression that the table names with
that guard is taken out of the action carrying it (an action left with no conjunct is sent
unconditioned), in every TransactWriteItems request and session PutItem the code sends while
the mutation is on. Nothing else of the request changes, and no file is edited: the mutation
wraps :meth:`accounts.transactions.Transaction.request` and the session's ``put_item``.

Which guard a conjunct is: the table's rows are per transaction (``signup``,
``change_email``, ...), and the same conjunct on the same action is a different guard in
different transactions (``updated = read`` on the account is ``G_CHANGE_UPDATED_AS_READ`` in a
change and ``G_VERIFY_UPDATED_AS_READ`` in a verification). So each request is first put into
the shape of the table's rows (as ``tests/protocol/test_protocol_drift.py`` does: names resolved,
values by role), then matched with the table's transaction whose rows it shares most; the
conjunct's guard is its row's there.

``tests/guard_mutations.tsv`` names, for every guard of the table, the behaviour tests its
removal fails, or why none can. ``tests/conftest.py`` runs each such test once more per
guard it is named for, with that guard removed, expecting it to FAIL on an assertion
(``xfail(strict=True)``: a test that passes without the guard fails the suite, and so does
one that breaks for any other reason, see ``tests/conftest.py``'s ``CAUGHT``). ``tests/protocol/test_guard_mutations.py`` checks the mapping
covers the table exactly. To try a guard against other tests, name them on its line and run
them: each reports XFAIL (caught), XPASS(strict) (not caught) or an error (the test sends no
conjunct of the guard).
"""

import contextlib
import csv
import re
from collections import defaultdict
from dataclasses import dataclass
from functools import cache
from pathlib import Path

from accounts import dynamo, transactions
from accounts.tables import ACCOUNT_PREFIX, STAFF_REGISTRY, takeover_cutoff
from accounts.transactions.actions import Transaction
from tests.protocol_table import rows

MAPPING = Path(__file__).resolve().parent / "guard_mutations.tsv"
NO_GUARD = "-"
ALWAYS = "attribute_exists(#mutation_pk) OR attribute_not_exists(#mutation_pk)"


@dataclass(frozen=True)
class Mapping:
    """A guard's catching tests (pytest node ids), or the reason none can catch it."""

    guard: str
    caught_by: tuple
    reason: str


def mapping():
    """``{guard: Mapping}`` from ``tests/guard_mutations.tsv``."""
    lines = [line for line in MAPPING.read_text(encoding="utf-8").splitlines() if not line.startswith("#")]
    found = {}
    for row in csv.DictReader(lines, delimiter="\t"):
        guard = row["guard"]
        if guard in found:
            raise ValueError(f"{MAPPING.name}: {guard} is listed twice")
        tests = tuple(test for test in row["caught_by"].split() if test != NO_GUARD)
        found[guard] = Mapping(guard, tests, row["reason"].strip() if row["reason"] != NO_GUARD else "")
    return found


def table_guards():
    """The guards of ``protocol/conditions.tsv`` (``-``, an action sent with no condition, is none)."""
    return {row.guard for row in rows()} - {NO_GUARD}


@cache
def _table():
    """``{transaction: {(action, kind, conjunct): guard}}`` of the table."""
    table = defaultdict(dict)
    for row in rows():
        table[row.transaction][(row.action, row.kind, row.condition)] = row.guard
    return dict(table)


def _shapes(transaction):
    """``[(position, raw conjunct, (action, kind, conjunct))]`` of ``transaction``, in the
    table's spelling."""
    from tests.protocol.test_protocol_drift import action_label, split_and, window_roles

    holder = next(
        (
            action.body["Item"]["owner"]["S"]
            for action in transaction.actions
            if action.role == transactions.REPAIRED_LOCK and action.kind == "Put" and "owner" in action.body["Item"]
        ),
        None,
    )
    me = holder if transaction.operation == transactions.REPAIR else transaction.actions[0].target[1]
    found = []
    for position, action in enumerate(transaction.actions):
        body, kind = action.body, action.kind
        if "ConditionExpression" not in body:
            continue
        key = (body.get("Key") or body.get("Item"))["PK"]["S"]
        is_lock = (
            not key.startswith(ACCOUNT_PREFIX) and action.role != transactions.LIMIT and key != STAFF_REGISTRY.partition
        )
        for raw in split_and(body["ConditionExpression"]):
            conjunct = _normalized(body, raw, is_lock, me, transaction.now)
            if action.role == transactions.LIMIT:
                conjunct = window_roles(conjunct)
            try:
                label = action_label(transaction.operation, kind, key, conjunct, action.role)
            except KeyError:
                label = "unknown"  # an item of a model of the test's own: no row of the table
            if label is None:
                label = "holder" if key == holder else "owner"
            found.append((position, raw, (label, kind, conjunct)))
    return found


def _normalized(body, raw, is_lock, me, now):
    """``raw`` (one conjunct of ``body``'s condition) as the table spells it."""
    from tests.protocol.test_protocol_drift import MARGIN, normalized

    conjunct = normalized({**body, "ConditionExpression": raw}, is_lock, me, now or 0)
    # The drift test plans with its own margin; a live request with the setting's.
    margin = now - takeover_cutoff(now) if now is not None else MARGIN
    if margin != MARGIN:
        # Only a takeover compares expires with "<" (a margin of 0 reads "expires < now").
        cutoff = f"now - {margin}" if margin else "now"
        conjunct = re.sub(rf"expires < {cutoff}(?![\w -])", "expires < now - margin", conjunct)
    return conjunct


def guards_of(shapes):
    """The guard of each of ``shapes`` (:func:`_shapes`): its row's in the table's
    transaction sharing the most rows with them (the fewest rows they lack on a tie)."""
    sent = {shape for _, _, shape in shapes}
    guards = []
    for _, _, shape in shapes:
        candidates = [rows_ for rows_ in _table().values() if shape in rows_]
        if not candidates:
            guards.append(None)
            continue
        best = max(candidates, key=lambda rows_: (len(sent & rows_.keys()), -len(rows_.keys() - sent)))
        guards.append(best[shape])
    return guards


def _join(conjuncts):
    return " AND ".join(f"({conjunct})" for conjunct in conjuncts)


def _without_unused(body):
    """``body`` with the names and values no expression of it uses any more."""
    text = " ".join(value for name, value in body.items() if name.endswith("Expression"))
    for field, pattern in (("ExpressionAttributeNames", r"#\w+"), ("ExpressionAttributeValues", r":\w+")):
        used = set(re.findall(pattern, text))
        kept = {key: value for key, value in body.get(field, {}).items() if key in used}
        if kept:
            body[field] = kept
        else:
            body.pop(field, None)
    return body


def _mutated_body(kind, body, dropped):
    """``body`` (of an action of ``kind``) without the conjuncts ``dropped`` (raw, as sent).
    A ConditionCheck must have a condition: one left with none checks one always true."""
    from tests.protocol.test_protocol_drift import split_and

    kept = [raw for raw in split_and(body["ConditionExpression"]) if raw not in dropped]
    body = dict(body)
    if kept:
        body["ConditionExpression"] = _join(kept)
    elif kind == "ConditionCheck":
        body["ConditionExpression"] = ALWAYS
        body["ExpressionAttributeNames"] = {**body.get("ExpressionAttributeNames", {}), "#mutation_pk": "PK"}
    else:
        body.pop("ConditionExpression")
    return _without_unused(body)


def mutated_request(transaction, request, guard, dropped_log=None):
    """``request`` (of ``transaction``) without the conjuncts of ``guard`` (each one taken out
    is appended to ``dropped_log``)."""
    shapes = _shapes(transaction)
    dropped = defaultdict(set)
    for (position, raw, _), found in zip(shapes, guards_of(shapes), strict=True):
        if found == guard:
            dropped[position].add(raw)
            if dropped_log is not None:
                dropped_log.append((transaction.operation, raw))
    if not dropped:
        return request
    items = []
    for position, entry in enumerate(request["TransactItems"]):
        ((kind, body),) = entry.items()
        items.append({kind: _mutated_body(kind, body, dropped[position])} if position in dropped else entry)
    return {**request, "TransactItems": items}


def _session_put_guard(params):
    """The guard of a session's PutItem (``session_create`` or ``session_save``), or of an
    idempotency key's claim (``idempotency_claim``)."""
    from tests.protocol.test_protocol_drift import normalized

    now = next((int(value["N"]) for value in params.get("ExpressionAttributeValues", {}).values() if "N" in value), 0)
    conjunct = normalized(params, False, None, now)
    for name, action in (("session_create", "session"), ("session_save", "session"), ("idempotency_claim", "claim")):
        found = _table()[name].get((action, "Put", conjunct))
        if found is not None:
            return found
    return None


@contextlib.contextmanager
def removed(guard):
    """The code sends every request without ``guard``'s conjuncts while this is open; yields
    the list of the conjuncts taken out, as ``(operation, conjunct)``."""
    request = Transaction.request
    call = dynamo.call
    dropped = []

    def request_without(self):
        return mutated_request(self, request(self), guard, dropped)

    def call_without(operation, **params):
        if operation == "put_item" and "ConditionExpression" in params and _session_put_guard(params) == guard:
            dropped.append(("session", params["ConditionExpression"]))
            params = _without_unused({key: value for key, value in params.items() if key != "ConditionExpression"})
        return call(operation, **params)

    Transaction.request = request_without
    dynamo.call = call_without
    try:
        yield dropped
    finally:
        Transaction.request = request
        dynamo.call = call


@cache
def catching_tests():
    """``{test function's node id: [guard, ...]}``: the guards each test is named as catching
    (the whole test, or some of its parameters: ``path::test[id]``)."""
    found = defaultdict(list)
    for entry in mapping().values():
        for test in entry.caught_by:
            function = test.split("[")[0]
            if entry.guard not in found[function]:
                found[function].append(entry.guard)
    return dict(found)


def named_as_catching(function, parameters, guard):
    """Whether ``tests/guard_mutations.tsv`` names ``function`` (a node id), run with
    ``parameters`` (its other parameters' id, "" if none), as catching ``guard``."""
    named = mapping()[guard].caught_by
    return function in named or f"{function}[{parameters}]" in named


def markdown_table():
    """The table of docs/internals/invariants.md: each guard and its catching tests or its
    reason (``tests/protocol/test_guard_mutations.py`` holds the page to it: paste this function's
    output there when the mapping changes)."""
    lines = ["| guard | fails without it |", "|---|---|"]
    for guard, entry in sorted(mapping().items()):
        if entry.caught_by:
            cell = "<br>".join(f"`{test.removeprefix('tests/')}`" for test in entry.caught_by)
        else:
            cell = f"none: {entry.reason}"
        lines.append(f"| `{guard}` | {cell} |")
    return "\n".join(lines) + "\n"
