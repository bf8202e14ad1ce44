"""Plain DynamoDB requests for the table's housekeeping items: sessions and rate counters.

Accounts and locks go through PynamoDB models and :mod:`accounts.transactions`; sessions and
rate counters are small items read and written in batches (``BatchGetItem``,
``BatchWriteItem``), which PynamoDB offers one model at a time. These helpers send them with
the shared client and turn failures into the engine's exceptions, so the 503 middleware
answers for them as for everything else.
"""

from collections.abc import Iterable, Mapping, Sequence
from typing import Any

import botocore.exceptions

from .exceptions import Unavailable
from .tables import ACCOUNT_PREFIX, AFTER_EVENTS, EVENT_SORT_PREFIX, TableModel, plain_client
from .transactions import RESEND_CODES, TRANSPORT_ERRORS

# BatchWriteItem takes at most 25 requests, BatchGetItem at most 100 keys.
BATCH_WRITE_SIZE = 25
BATCH_GET_SIZE = 100
# Unprocessed keys are sent again at most this many times (DynamoDB returns them when
# throttled); past that, the request counts as unavailable.
UNPROCESSED_ATTEMPTS = 3


def table_name() -> str:
    """The accounts table, which holds sessions and rate counters too."""
    return TableModel.Meta.table_name


def key(pk: str, sk: str) -> dict[str, dict[str, str]]:
    """The raw key of an item."""
    return {"PK": {"S": pk}, "SK": {"S": sk}}


# A plain write to an item that a transaction is writing is refused with this, unapplied.
TRANSACTION_CONFLICT = "TransactionConflictException"
CONDITION_FAILED = "ConditionalCheckFailedException"


def call(operation: str, **params: Any) -> dict[str, Any]:
    """Send one request with the shared client; transport failures, and answers that say
    "not now" even after botocore's retries (throttled, busy in a transaction), raise
    ``Unavailable``."""
    try:
        return getattr(plain_client(), operation)(**params)
    except TRANSPORT_ERRORS as error:
        raise Unavailable(f"DynamoDB could not be reached: {error}") from error
    except botocore.exceptions.ClientError as error:
        code = error.response.get("Error", {}).get("Code")
        if code in RESEND_CODES or code in (TRANSACTION_CONFLICT, "ResourceNotFoundException"):
            raise Unavailable(f"DynamoDB answered {code}") from error
        raise


def failed_condition(error: botocore.exceptions.ClientError) -> bool:
    """Whether ``error`` (a botocore ``ClientError``) is a write refused by its condition."""
    return error.response.get("Error", {}).get("Code") == CONDITION_FAILED


def batch_get(keys: Sequence[Mapping[str, Any]]) -> list[dict[str, Any]]:
    """The items at ``keys`` (raw keys), read consistently, in one request when they fit.

    Returns the raw items found, in no particular order.
    """
    found = []
    for start in range(0, len(keys), BATCH_GET_SIZE):
        request = {table_name(): {"Keys": keys[start : start + BATCH_GET_SIZE], "ConsistentRead": True}}
        for _ in range(UNPROCESSED_ATTEMPTS):
            answer = call("batch_get_item", RequestItems=request)
            found.extend(answer.get("Responses", {}).get(table_name(), ()))
            request = answer.get("UnprocessedKeys") or {}
            if not request:
                break
        else:
            raise Unavailable("DynamoDB left keys of a BatchGetItem unprocessed.")
    return found


def batch_write(puts: Iterable[Mapping[str, Any]] = (), deletes: Iterable[Mapping[str, Any]] = ()) -> None:
    """Put raw items and delete raw keys, 25 to a request (no conditions: BatchWriteItem
    takes none, so only writes that need no guard belong here)."""
    requests = [{"PutRequest": {"Item": item}} for item in puts]
    requests += [{"DeleteRequest": {"Key": item_key}} for item_key in deletes]
    for start in range(0, len(requests), BATCH_WRITE_SIZE):
        pending = {table_name(): requests[start : start + BATCH_WRITE_SIZE]}
        for _ in range(UNPROCESSED_ATTEMPTS):
            pending = call("batch_write_item", RequestItems=pending).get("UnprocessedItems") or {}
            if not pending:
                break
        else:
            raise Unavailable("DynamoDB left writes of a BatchWriteItem unprocessed.")


def query_partition(
    pk: str, sort_key_prefix: str | None = None, attributes: Sequence[str] | None = None, *, with_events: bool = False
) -> list[dict[str, Any]]:
    """Every item of partition ``pk`` (consistent), optionally only sort keys starting
    with ``sort_key_prefix``, optionally only ``attributes``. Raw items, in sort key order.

    An account's security events (``SK=EVENT#...``, sorted first) are left out unless
    ``with_events`` (a deletion's): the sort keys read start at ``AFTER_EVENTS``, so a login
    or a page reading the partition never reads a year of them. Only an account's partition
    holds events: another (the staff registry's, whose sort keys are account PKs) is read
    whole."""
    params = {
        "TableName": table_name(),
        "ConsistentRead": True,
        "KeyConditionExpression": "PK = :pk",
        "ExpressionAttributeValues": {":pk": {"S": pk}},
    }
    if sort_key_prefix is None and not with_events and pk.startswith(ACCOUNT_PREFIX):
        params["KeyConditionExpression"] += " AND SK >= :after_events"
        params["ExpressionAttributeValues"][":after_events"] = {"S": AFTER_EVENTS}
    if sort_key_prefix is not None:
        params["KeyConditionExpression"] += " AND begins_with(SK, :prefix)"
        params["ExpressionAttributeValues"][":prefix"] = {"S": sort_key_prefix}
    if attributes:
        params["ProjectionExpression"] = ", ".join(f"#a{index}" for index in range(len(attributes)))
        params["ExpressionAttributeNames"] = {f"#a{index}": name for index, name in enumerate(attributes)}
    items = []
    while True:
        answer = call("query", **params)
        items.extend(answer.get("Items", ()))
        if "LastEvaluatedKey" not in answer:
            return items
        params["ExclusiveStartKey"] = answer["LastEvaluatedKey"]


# How many items other than its events an account's partition is read with in one page,
# beside the events wanted (its profile, sessions and their slots, passkeys, counters):
# more take a second page.
OTHER_ITEMS_PER_PAGE = 64


def query_partition_and_events(pk, events):
    """``(every item of partition pk but its security events, in sort key order; its
    ``events`` newest events, newest first)``: one consistent ``Query`` from the partition's
    end (its events sort first), ``Limit`` ``events`` + :data:`OTHER_ITEMS_PER_PAGE`, and
    another page only while fewer events were read (a partition of many other items)."""
    params = {**_partition_query(pk, descending=True), "Limit": events + OTHER_ITEMS_PER_PAGE}
    others, recent = [], []
    while True:
        answer = call("query", **params)
        for raw in answer.get("Items", ()):
            if raw["SK"]["S"] >= AFTER_EVENTS:
                others.append(raw)
            elif raw["SK"]["S"].startswith(EVENT_SORT_PREFIX) and len(recent) < events:
                recent.append(raw)
        if len(recent) >= events or "LastEvaluatedKey" not in answer:
            return others[::-1], recent
        params["ExclusiveStartKey"] = answer["LastEvaluatedKey"]


def _partition_query(pk, descending=False):
    return {
        "TableName": table_name(),
        "ConsistentRead": True,
        "KeyConditionExpression": "PK = :pk",
        "ExpressionAttributeValues": {":pk": {"S": pk}},
        "ScanIndexForward": not descending,
    }


def query_page(pk, *, limit, start_key=None, descending=False):
    """One page of partition ``pk`` (consistent): ``(raw items, last evaluated key or
    None)``, at most ``limit`` items from ``start_key``, last sort keys first when
    ``descending``."""
    params = {**_partition_query(pk, descending), "Limit": limit}
    if start_key:
        params["ExclusiveStartKey"] = start_key
    answer = call("query", **params)
    return answer.get("Items", []), answer.get("LastEvaluatedKey")


def count_partition(pk):
    """How many items partition ``pk`` holds (a consistent ``Query`` with ``Select=COUNT``:
    one request while the partition reads under 1 MB)."""
    params = {**_partition_query(pk), "Select": "COUNT"}
    count = 0
    while True:
        answer = call("query", **params)
        count += answer.get("Count", 0)
        if "LastEvaluatedKey" not in answer:
            return count
        params["ExclusiveStartKey"] = answer["LastEvaluatedKey"]
