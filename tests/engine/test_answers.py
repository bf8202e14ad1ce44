"""Items read straight from the wire (accounts.answers) equal botocore's own parse, on
DynamoDB Local: every attribute type, nested binaries, text that looks like a binary's tag,
the rest of each answer (keys to resume from, consumed capacity), and errors."""

import botocore.exceptions
import botocore.session
import pytest

from accounts import answers, tables
from accounts.app_settings import app_settings

ITEMS = [
    {
        "PK": {"S": "T#1"},
        "SK": {"S": "A"},
        "text": {"S": 'a "B" and {"BS": 1}'},
        "number": {"N": "18.5"},
        "flag": {"BOOL": True},
        "nothing": {"NULL": True},
        "blob": {"B": b"\x00\xffbinary"},
        "texts": {"SS": ["x", "y"]},
        "numbers": {"NS": ["1", "2"]},
        "blobs": {"BS": [b"\x01", b"\x02\x03"]},
        "map": {"M": {"B": {"B": b"inner"}, "list": {"L": [{"B": b"\x04"}, {"S": "B"}, {"M": {"k": {"N": "1"}}}]}}},
    },
    {"PK": {"S": "T#1"}, "SK": {"S": "B"}, "B": {"S": "an attribute named B"}},
    {"PK": {"S": "T#2"}, "SK": {"S": "A"}, "plain": {"S": "no binary here"}},
]


@pytest.fixture
def clients(ddb):
    """(the app's client, which reads items directly; a botocore client that parses them)."""
    session = botocore.session.get_session()
    parsing = session.create_client(
        "dynamodb",
        region_name=app_settings.REGION,
        endpoint_url=app_settings.ENDPOINT_URL,
        aws_access_key_id="test",
        aws_secret_access_key="test",
    )
    direct = tables.plain_client()
    for item in ITEMS:
        direct.put_item(TableName=app_settings.TABLE_NAME, Item=item)
    return direct, parsing


def without_metadata(answer):
    return {name: value for name, value in answer.items() if name != "ResponseMetadata"}


def both(clients, operation, **params):
    direct, parsing = clients
    first = without_metadata(getattr(direct, operation)(**params))
    second = without_metadata(getattr(parsing, operation)(**params))
    return first, second


def test_the_app_clients_read_items_directly(ddb):
    taken = []

    def after_ours(customized_response_dict, **kwargs):
        taken.append(sorted(customized_response_dict))

    for client in (tables.plain_client(), tables.dynamodb_client()):
        client.meta.events.register_last("before-parse.dynamodb.Scan", after_ours, unique_id="test.after_ours")
        try:
            client.scan(TableName=app_settings.TABLE_NAME, Limit=1)
        finally:
            client.meta.events.unregister("before-parse.dynamodb.Scan", unique_id="test.after_ours")
    assert taken == [["Items"], ["Items"]]


@pytest.mark.parametrize("page", [1, 2, None], ids=["one-item-pages", "two-item-pages", "whole-table"])
def test_scan_pages_equal_botocores(clients, page):
    params = {"TableName": app_settings.TABLE_NAME, "ConsistentRead": True, "ReturnConsumedCapacity": "TOTAL"}
    if page:
        params["Limit"] = page
    seen = 0
    while True:
        direct, parsed = both(clients, "scan", **params)
        assert direct == parsed
        seen += sum(item["PK"]["S"].startswith("T#") for item in direct["Items"])
        if "LastEvaluatedKey" not in direct:
            break
        params["ExclusiveStartKey"] = direct["LastEvaluatedKey"]
    assert seen == len(ITEMS)


def test_query_and_batch_get_equal_botocores(clients):
    table = app_settings.TABLE_NAME
    direct, parsed = both(
        clients,
        "query",
        TableName=table,
        KeyConditionExpression="PK = :pk",
        ExpressionAttributeValues={":pk": {"S": "T#1"}},
        ReturnConsumedCapacity="TOTAL",
    )
    assert direct == parsed and len(direct["Items"]) == 2
    assert isinstance(direct["Items"][0]["map"]["M"]["list"]["L"][0]["B"], bytes)
    keys = [{"PK": item["PK"], "SK": item["SK"]} for item in ITEMS] + [{"PK": {"S": "T#9"}, "SK": {"S": "A"}}]
    direct, parsed = both(
        clients,
        "batch_get_item",
        RequestItems={table: {"Keys": keys, "ConsistentRead": True}},
        ReturnConsumedCapacity="TOTAL",
    )
    by_key = sorted(direct["Responses"][table], key=lambda item: (item["PK"]["S"], item["SK"]["S"]))
    assert by_key == sorted(parsed["Responses"][table], key=lambda item: (item["PK"]["S"], item["SK"]["S"]))
    assert by_key == ITEMS
    assert direct["ConsumedCapacity"] == parsed["ConsumedCapacity"]


def test_an_answer_without_items_is_botocores(clients):
    direct, parsed = both(clients, "scan", TableName=app_settings.TABLE_NAME, Select="COUNT")
    assert direct == parsed and "Items" not in direct and direct["Count"] >= len(ITEMS)


def test_an_error_answer_is_parsed_by_botocore(clients):
    direct, parsing = clients
    errors = []
    for client in (direct, parsing):
        with pytest.raises(botocore.exceptions.ClientError) as caught:
            client.query(TableName=app_settings.TABLE_NAME, KeyConditionExpression="nonsense ::")
        errors.append(caught.value.response["Error"])
    assert errors[0] == errors[1] and errors[0]["Code"] == "ValidationException"


def test_a_binary_value_is_decoded_wherever_it_nests():
    answer = {"Items": [{"a": {"L": [{"M": {"b": {"BS": ["AQ=="]}}}]}}]}
    items = answers._items(answer["Items"])
    assert items == [{"a": {"L": [{"M": {"b": {"BS": [b"\x01"]}}}]}}]
