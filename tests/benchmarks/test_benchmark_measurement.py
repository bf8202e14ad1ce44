"""The transactions benchmark measures what it says: correctness of the benchmark, not speed."""

import itertools
import time

import pytest

from accounts import store, transactions
from accounts.identifiers import lookalike_key
from accounts.tables import Account, dynamodb_client
from tests.benchmarks import transactions as bench


def table_items():
    items, request = [], {"TableName": Account.Meta.table_name, "ConsistentRead": True}
    while True:
        page = dynamodb_client().scan(**request)
        items.extend(page["Items"])
        if "LastEvaluatedKey" not in page:
            return items
        request["ExclusiveStartKey"] = page["LastEvaluatedKey"]


def with_generated_values_blanked(request):
    """``request`` with the values every create generates afresh (id, times, token, the
    lock guards' "now") blanked."""
    for entry in request["TransactItems"]:
        if ":0" in entry["Put"].get("ExpressionAttributeValues", {}):
            entry["Put"]["ExpressionAttributeValues"][":0"] = {"N": "<now>"}
        item = entry["Put"]["Item"]
        for name in ("created", "updated"):
            if name in item:
                item[name] = {"S": "<time>"}
        for name in ("PK", "owner"):
            if name in item and item[name]["S"].startswith("ACCT#"):
                item[name] = {"S": "ACCT#<id>"}
    request["ClientRequestToken"] = "<token>"
    return request


def test_raw_side_sends_the_same_request_as_the_engine():
    raw = bench.RawCreate(client=None, table_name=Account.Meta.table_name)
    engine = transactions.plan_create(store.build_account("ada@bench.example", "ada", bench.PASSWORD_HASH))
    assert with_generated_values_blanked(raw.request("ada@bench.example", "ada")) == with_generated_values_blanked(
        engine.request()
    )


def test_each_operation_of_either_side_creates_one_account_and_its_three_locks(ddb):
    raw = bench.RawCreate(bench.new_client(), Account.Meta.table_name)
    assert bench.measure(raw, 2, operations_per_thread=3).operations == 6
    assert bench.measure(bench.engine_create, 2, operations_per_thread=3).operations == 6

    items = table_items()
    accounts = {item["PK"]["S"]: item for item in items if item["SK"]["S"] == "PROFILE"}
    locks = {item["PK"]["S"]: item["owner"]["S"] for item in items if item["SK"]["S"] == "LOCK"}
    assert len(accounts) == 12
    assert len(locks) == 36
    for pk, account in accounts.items():
        assert locks[f"UNIQ#EMAIL#{account['email']['S']}"] == pk
        assert locks[f"UNIQ#HANDLE#{account['username']['S']}"] == pk
        assert locks[f"UNIQ#HANDLE_SKEL#{lookalike_key(account['username']['S'])}"] == pk


def test_accounts_the_raw_side_creates_are_found_by_the_engine(ddb):
    raw = bench.RawCreate(bench.new_client(), Account.Meta.table_name)
    bench.measure(raw, 1, operations_per_thread=1)
    (account,) = [item for item in table_items() if item["SK"]["S"] == "PROFILE"]
    found = store.get_by_email(account["email"]["S"])
    assert found.PK == account["PK"]["S"]
    assert found.password == bench.PASSWORD_HASH


def test_round_trips_are_one_request_per_write_given_the_item(ddb):
    assert bench.round_trips() == {
        "create": {"TransactWriteItems": 1},
        "change email": {"TransactWriteItems": 1},
        "change username": {"TransactWriteItems": 1},
        "lookup by email": {"GetItem": 2},
        # The account's sessions and security events end with it: one Query finds them (no
        # session here; the events of its email and username changes), one BatchWriteItem
        # deletes them.
        "delete": {"TransactWriteItems": 1, "Query": 1, "BatchWriteItem": 1},
    }
    # What is left: the deleted account's tombstone, and the table's key version.
    left = sorted((item["PK"]["S"].partition("#")[0], item["SK"]["S"], "deleted" in item) for item in table_items())
    assert left == [("ACCT", "PROFILE", True), ("META", "META", False)]


def test_timed_measurement_counts_neither_the_warm_up_nor_the_calls_ending_late():
    calls = itertools.count(1)

    def operation():
        next(calls)
        time.sleep(0.005)

    cell = bench.measure(operation, 2, seconds=0.1, warmup=0.05)
    assert cell.seconds == 0.1
    assert 0 < cell.operations < next(calls) - 1


def test_an_error_in_any_thread_stops_the_measurement():
    def failing():
        raise RuntimeError("boom")

    with pytest.raises(RuntimeError, match="boom"):
        bench.measure(failing, 4, operations_per_thread=1)


def test_measure_takes_seconds_or_a_count_not_both():
    with pytest.raises(ValueError):
        bench.measure(lambda: None, 1, seconds=1, operations_per_thread=1)


def test_goal_is_judged_on_the_median_of_per_round_ratios():
    raw = [bench.Cell(100, 1.0, 0.1), bench.Cell(200, 1.0, 0.1), bench.Cell(100, 1.0, 0.1)]
    engine = [bench.Cell(90, 1.0, 0.1), bench.Cell(200, 1.0, 0.1), bench.Cell(110, 1.0, 0.1)]
    cells = {}
    for threads in bench.THREAD_COUNTS:
        cells["raw", threads], cells["engine", threads] = raw, engine
    summary = bench.summarize(cells)[1]
    assert summary.ratio == pytest.approx(1.0)  # median of 0.9, 1.0, 1.1
    assert summary.ratio_of_medians == pytest.approx(1.1)  # 110 / 100
    assert summary.cpu["raw"] == (pytest.approx(750.0), None)  # 0.3 s over 400 transactions
