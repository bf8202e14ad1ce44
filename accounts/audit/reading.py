"""The audit's reads: Scan pages and consistent BatchGetItems, paced by a read-unit budget
and backing off when DynamoDB throttles.

A whole-table job must not take the read capacity a site's pages need. Every request asks
for ``ReturnConsumedCapacity``, and what it consumed is spent from a :class:`ReadBudget`
(a token bucket, ``--max-read-units-per-second``) before the next request goes out.
Throttling (``ProvisionedThroughputExceeded``, ``ThrottlingException``, keys a
BatchGetItem leaves unprocessed) is waited out with exponential backoff and full jitter.
"""

import random
import threading
import time

import botocore.exceptions

from ..exceptions import Unavailable

# BatchGetItem takes at most 100 keys.
BATCH_GET_SIZE = 100
# Answers that mean "too fast": wait and send again.
THROTTLE_CODES = frozenset({"ProvisionedThroughputExceededException", "ThrottlingException", "RequestLimitExceeded"})
# Consecutive throttled attempts of one request before the job gives up, and the longest
# pause between two (the pauses double from BACKOFF_BASE_SECONDS).
THROTTLE_ATTEMPTS = 12
BACKOFF_BASE_SECONDS = 0.05
MAX_BACKOFF_SECONDS = 20.0


class ReadBudget:
    """A token bucket of read units shared by every thread of a job.

    ``units_per_second`` refill it, up to one second's worth. A request waits while the
    bucket is empty, then what it consumed is taken (the bucket may go below zero: the
    next requests wait for it), so the long-run rate never exceeds the budget.
    """

    def __init__(self, units_per_second, *, clock=time.monotonic, sleep=time.sleep):
        if units_per_second <= 0:
            raise ValueError("The read budget must be positive.")
        self.rate = float(units_per_second)
        self._clock = clock
        self._sleep = sleep
        self._lock = threading.Lock()
        self._tokens = self.rate
        self._updated = clock()

    def _refill(self):
        now = self._clock()
        self._tokens = min(self.rate, self._tokens + (now - self._updated) * self.rate)
        self._updated = now

    def wait(self):
        """Block until the bucket holds a positive amount."""
        while True:
            with self._lock:
                self._refill()
                if self._tokens > 0:
                    return
                missing = -self._tokens
            self._sleep(missing / self.rate + 0.001)

    def spend(self, units):
        """Take ``units`` consumed by a request."""
        with self._lock:
            self._refill()
            self._tokens -= units


def _consumed(answer):
    consumed = answer.get("ConsumedCapacity")
    if isinstance(consumed, list):
        return sum(entry.get("CapacityUnits", 0) for entry in consumed)
    return (consumed or {}).get("CapacityUnits", 0)


def backoff_seconds(attempt):
    """The pause before throttled attempt ``attempt`` (1, 2, ...): full jitter."""
    return random.uniform(0, min(MAX_BACKOFF_SECONDS, BACKOFF_BASE_SECONDS * 2**attempt))


class Reader:
    """Sends the audit's reads for one table with one botocore client (thread-safe)."""

    def __init__(self, client, table_name, *, budget=None, sleep=time.sleep):
        self.client = client
        self.table_name = table_name
        self.budget = budget
        self._sleep = sleep
        self._units_lock = threading.Lock()
        self.units = 0.0  # read units consumed so far

    def _spent(self, units):
        with self._units_lock:
            self.units += units
        if self.budget is not None:
            self.budget.spend(units)

    def _call(self, operation, **params):
        """One request, with the budget and the backoff on throttling."""
        for attempt in range(1, THROTTLE_ATTEMPTS + 1):
            if self.budget is not None:
                self.budget.wait()
            try:
                answer = getattr(self.client, operation)(ReturnConsumedCapacity="TOTAL", **params)
            except botocore.exceptions.ClientError as error:
                if error.response.get("Error", {}).get("Code") not in THROTTLE_CODES:
                    raise
                self._sleep(backoff_seconds(attempt))
                continue
            self._spent(_consumed(answer))
            return answer
        raise Unavailable(f"DynamoDB kept throttling {operation} ({THROTTLE_ATTEMPTS} attempts); run again later.")

    def scan_page(self, segment, total_segments, start_key=None, *, attributes=None, limit=None):
        """One consistent Scan page of ``segment``: ``(items, last evaluated key or None,
        items scanned)``."""
        params = {
            "TableName": self.table_name,
            "Segment": segment,
            "TotalSegments": total_segments,
            "ConsistentRead": True,
        }
        if start_key:
            params["ExclusiveStartKey"] = start_key
        if limit:
            params["Limit"] = limit
        if attributes:
            params.update(_projection(attributes))
        answer = self._call("scan", **params)
        return answer.get("Items", []), answer.get("LastEvaluatedKey"), answer.get("ScannedCount", 0)

    def query_partition(self, pk: str, *, attributes: list[str] | None = None) -> list[dict]:
        """Every item under partition key ``pk``, read consistently (a ``Query``, page after
        page)."""
        params = {
            "TableName": self.table_name,
            "KeyConditionExpression": "#pk = :pk",
            "ExpressionAttributeValues": {":pk": {"S": pk}},
            "ConsistentRead": True,
        }
        names = {"#pk": "PK"}
        if attributes:
            projection = _projection(attributes)
            params["ProjectionExpression"] = projection["ProjectionExpression"]
            names.update(projection["ExpressionAttributeNames"])
        params["ExpressionAttributeNames"] = names
        found = []
        while True:
            answer = self._call("query", **params)
            found.extend(answer.get("Items", ()))
            if not answer.get("LastEvaluatedKey"):
                return found
            params["ExclusiveStartKey"] = answer["LastEvaluatedKey"]

    def batch_get(self, keys, *, attributes=None):
        """The items at ``keys`` (raw keys), read consistently, 100 to a request; keys
        left unprocessed (throttled) are sent again after a pause."""
        found = []
        for start in range(0, len(keys), BATCH_GET_SIZE):
            request = {"Keys": keys[start : start + BATCH_GET_SIZE], "ConsistentRead": True}
            if attributes:
                request.update(_projection(attributes))
            pending = {self.table_name: request}
            for attempt in range(1, THROTTLE_ATTEMPTS + 1):
                answer = self._call("batch_get_item", RequestItems=pending)
                found.extend(answer.get("Responses", {}).get(self.table_name, ()))
                pending = answer.get("UnprocessedKeys") or {}
                if not pending:
                    break
                self._sleep(backoff_seconds(attempt))
            else:
                raise Unavailable("DynamoDB kept keys of a BatchGetItem unprocessed; run again later.")
        return found


def _projection(attributes):
    names = {f"#a{index}": name for index, name in enumerate(attributes)}
    return {"ProjectionExpression": ", ".join(names), "ExpressionAttributeNames": names}
