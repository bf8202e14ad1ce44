"""The items of DynamoDB's Scan, Query and BatchGetItem answers, read straight from the wire.

botocore parses an answer by walking DynamoDB's service model along it, attribute value by
attribute value: for the audit, which reads every item of the table and one or two more by
key for each, that walk was the largest part of the client's time (profiled: about half).
Items arrive in the very shape botocore returns them (``{"S": "..."}``, numbers as text),
so a handler of botocore's ``before-parse`` event takes them out of the answer with
``json.loads`` and leaves the rest of it (keys to resume from, consumed capacity, metadata)
to botocore. Only a binary value needs work: botocore gives ``bytes``, the wire base64.

Errors (any status but 200) are left to botocore whole.
"""

import base64
import functools
import json

# The field of each answer that holds its items (BatchGetItem: by table).
ITEM_FIELDS = {"Scan": "Items", "Query": "Items", "BatchGetItem": "Responses"}


def read_items_directly(client):
    """Make ``client`` (a botocore DynamoDB client) read the items of its Scan, Query and
    BatchGetItem answers without botocore's model walk; the answers are the same. Returns
    the client."""
    for operation, field in ITEM_FIELDS.items():
        client.meta.events.register(
            f"before-parse.dynamodb.{operation}",
            functools.partial(_take_items, field=field),
            unique_id=f"accounts.answers.{operation}",
        )
    return client


def _take_items(response_dict, customized_response_dict, field, **kwargs):
    body = response_dict.get("body")
    if response_dict.get("status_code") != 200 or not body:
        return
    answer = json.loads(body)
    if field not in answer:
        return
    items = answer.pop(field)
    if b'"B' in body:  # a binary value may be there ("B" or "BS"), or only text that says so
        items = {table: _items(found) for table, found in items.items()} if field == "Responses" else _items(items)
    customized_response_dict[field] = items
    response_dict["body"] = json.dumps(answer).encode()


def _items(items):
    return [_item(item) for item in items]


def wire_item(item):
    """An item as DynamoDB's JSON spells it (binary values in base64: an answer's, an
    export's) in botocore's shape: binary values as ``bytes``."""
    return _item(item)


def _item(item):
    return {name: _value(value) for name, value in item.items()}


def _value(value):
    """An attribute value as botocore returns it: binary values as ``bytes``."""
    ((kind, inner),) = value.items()
    if kind == "B":
        return {"B": base64.b64decode(inner)}
    if kind == "BS":
        return {"BS": [base64.b64decode(element) for element in inner]}
    if kind == "M":
        return {"M": _item(inner)}
    if kind == "L":
        return {"L": [_value(element) for element in inner]}
    return value
