"""The audit's reads: a read-unit budget, backoff on throttling, progress lines. Unit tests
with a stubbed client and clock (no DynamoDB)."""

import io

import botocore.exceptions
import pytest

from accounts.audit.reading import THROTTLE_ATTEMPTS, ReadBudget, Reader
from accounts.exceptions import Unavailable
from accounts.management.scanning import Progress


class FakeClock:
    def __init__(self):
        self.now = 0.0
        self.slept = []

    def __call__(self):
        return self.now

    def sleep(self, seconds):
        self.slept.append(seconds)
        self.now += seconds


def throttled(code="ProvisionedThroughputExceededException"):
    return botocore.exceptions.ClientError({"Error": {"Code": code, "Message": "slow down"}}, "Scan")


class StubClient:
    """Answers each call with the next of ``answers`` (an exception is raised)."""

    def __init__(self, *answers):
        self.answers = list(answers)
        self.calls = []

    def _answer(self, operation, params):
        self.calls.append((operation, params))
        answer = self.answers.pop(0)
        if isinstance(answer, Exception):
            raise answer
        return answer

    def scan(self, **params):
        return self._answer("scan", params)

    def batch_get_item(self, **params):
        return self._answer("batch_get_item", params)


def test_the_budget_holds_the_rate_to_its_units_per_second():
    clock = FakeClock()
    budget = ReadBudget(100, clock=clock, sleep=clock.sleep)

    for _ in range(10):
        budget.wait()
        budget.spend(50)
    budget.wait()

    # 500 units at 100 a second, a second's worth in the bucket at the start: the next
    # request may go once 4 seconds passed, not before.
    assert 4.0 <= clock.now <= 4.1


def test_a_budget_must_be_positive():
    with pytest.raises(ValueError):
        ReadBudget(0)


def test_throttled_scan_is_sent_again_after_a_pause_and_its_units_are_spent():
    clock = FakeClock()
    page = {"Items": [{"PK": {"S": "a"}}], "ScannedCount": 1, "ConsumedCapacity": {"CapacityUnits": 0.5}}
    client = StubClient(throttled(), throttled("ThrottlingException"), page)
    budget = ReadBudget(1000, clock=clock, sleep=clock.sleep)
    reader = Reader(client, "accounts", budget=budget, sleep=clock.sleep)

    items, last_key, scanned = reader.scan_page(0, 4, attributes=["PK"], limit=10)

    assert (items, last_key, scanned) == ([{"PK": {"S": "a"}}], None, 1)
    assert len(client.calls) == 3
    assert len(clock.slept) == 2
    assert reader.units == 0.5
    operation, params = client.calls[-1]
    assert params["ReturnConsumedCapacity"] == "TOTAL"
    assert (params["Segment"], params["TotalSegments"], params["Limit"], params["ConsistentRead"]) == (0, 4, 10, True)


def test_throttling_that_never_ends_gives_up_with_unavailable():
    clock = FakeClock()
    client = StubClient(*[throttled() for _ in range(THROTTLE_ATTEMPTS)])
    reader = Reader(client, "accounts", sleep=clock.sleep)

    with pytest.raises(Unavailable):
        reader.scan_page(0, 1)


def test_another_error_is_not_retried():
    client = StubClient(botocore.exceptions.ClientError({"Error": {"Code": "ValidationException"}}, "Scan"))

    with pytest.raises(botocore.exceptions.ClientError):
        Reader(client, "accounts").scan_page(0, 1)
    assert len(client.calls) == 1


def test_keys_left_unprocessed_are_read_again_after_a_pause():
    clock = FakeClock()
    first_key, second_key = {"PK": {"S": "a"}}, {"PK": {"S": "b"}}
    client = StubClient(
        {"Responses": {"accounts": [first_key]}, "UnprocessedKeys": {"accounts": {"Keys": [second_key]}}},
        {"Responses": {"accounts": [second_key]}},
    )
    reader = Reader(client, "accounts", sleep=clock.sleep)

    assert reader.batch_get([first_key, second_key]) == [first_key, second_key]
    assert client.calls[1][1]["RequestItems"] == {"accounts": {"Keys": [second_key]}}
    assert len(clock.slept) == 1


def test_batch_get_sends_at_most_a_hundred_keys_a_request():
    keys = [{"PK": {"S": str(number)}} for number in range(250)]
    client = StubClient(*[{"Responses": {"accounts": []}} for _ in range(3)])

    Reader(client, "accounts").batch_get(keys)

    assert [len(params["RequestItems"]["accounts"]["Keys"]) for _, params in client.calls] == [100, 100, 50]


def test_progress_line_shows_the_rate_the_share_done_and_the_time_left():
    clock = FakeClock()
    progress = Progress(io.StringIO(), expected=10_000, clock=clock)
    clock.now = 2.0
    progress.describe(1_000)
    clock.now = 4.0

    line = progress.describe(2_000)

    assert line == "Scanned 2,000 of ~10,000 items (20%), 500 items/s, 0:16 left..."


def test_findings_are_named_as_found_up_to_a_hundred():
    stream = io.StringIO()
    progress = Progress(stream)
    finding = type("Found", (), {"kind": "missing", "key": "UNIQ#EMAIL#a@b.c"})()

    for _ in range(150):
        progress.found(finding)

    lines = stream.getvalue().count("Found: missing UNIQ#EMAIL#a@b.c")
    assert lines == 100
    assert stream.getvalue().count("More than 100 findings: the report lists them all.") == 1
