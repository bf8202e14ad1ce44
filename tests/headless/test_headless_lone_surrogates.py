"""A lone UTF-16 surrogate in a JSON body (``"\\ud800"``: half of a pair, which JSON may
escape alone) is refused by every operation of the API as a 400 before it reaches a flow,
for both clients: never a 500 (issue 35, finding 8). Each operation of allauth's spec that
this app implements is sent, once per field its request body holds, a body whose other
fields look right and whose field holds the surrogate (inside a string, or inside the
objects and arrays the spec gives as fields)."""

import pytest

from tests.headless import APIClient
from tests.headless_spec import PREFIX, implemented_spec
from tests.web import PASSWORD

pytestmark = pytest.mark.dynamodb_local

SURROGATE = "a\ud800b"
# What each string field holds when it is not the one under test: values an operation
# could take, so that the surrogate is what the request gets wrong.
PLAIN = {
    "email": "ada@example.com",
    "username": "ada",
    "password": PASSWORD,
    "current_password": PASSWORD,
    "new_password": "Brand-New-Harbor-9",
    "code": "ABCDEFGH",
    "key": "key",
    "phone": "+14155550100",
    "provider": "demo",
    "process": "login",
    "name": "Laptop",
    "account": "subject",
}


def resolved(spec, node):
    while isinstance(node, dict) and "$ref" in node:
        found = spec
        for part in node["$ref"].lstrip("#/").split("/"):
            found = found[part]
        node = found
    return node


def fields_of(spec, schema):
    """``{name: type}`` of the properties of a request body's schema, its ``allOf``,
    ``oneOf`` and ``anyOf`` parts included."""
    schema = resolved(spec, schema)
    found = {name: resolved(spec, value).get("type") for name, value in schema.get("properties", {}).items()}
    for part in ("allOf", "oneOf", "anyOf"):
        for sub in schema.get(part, []):
            found.update(fields_of(spec, sub))
    return found


def hostile(kind):
    """A value of JSON type ``kind`` holding the surrogate."""
    return {"string": SURROGATE, "object": {"id": SURROGATE}, "array": [SURROGATE]}.get(kind, SURROGATE)


def cases():
    spec = implemented_spec()
    found = []
    for path, operations in spec["paths"].items():
        if not path.startswith(PREFIX):
            continue  # the browser's redirect is a form post, not JSON
        for method, operation in operations.items():
            body = resolved(spec, operation.get("requestBody", {})).get("content", {}).get("application/json")
            if method == "parameters" or body is None:
                continue
            fields = fields_of(spec, body["schema"])
            plain = {name: PLAIN[name] for name, kind in fields.items() if kind == "string"}
            for name, kind in fields.items():
                route = path.removeprefix(PREFIX)
                found.append(pytest.param(method, route, {**plain, name: hostile(kind)}, id=f"{method} {route} {name}"))
    return found


CASES = cases()


def test_the_cases_cover_every_string_field_of_the_anonymous_operations():
    # The 4 anonymous operations that answered 500 on main among them.
    ids = {case.id for case in CASES}
    assert {"post auth/login password", "post auth/code/request email", "post auth/signup username"} <= ids
    assert len(CASES) >= 40


@pytest.mark.parametrize("client", ["app", "browser"])
@pytest.mark.parametrize("method,route,body", CASES)
def test_a_lone_surrogate_in_any_field_is_a_400_of_the_body(ddb, client, method, route, body):
    api = APIClient(client)

    response = api.request(method.upper(), route, body)

    assert response.status_code == 400, response.content[:500]
    (error,) = response.json()["errors"]
    assert error["code"] == "invalid"
    assert "surrogate" in error["message"]


def test_a_lone_surrogate_in_an_object_key_is_a_400(ddb):
    response = APIClient("app").post("auth/login", {"username": "ada", "password": PASSWORD, "\udfff": 1})

    assert response.status_code == 400


def test_a_whole_surrogate_pair_is_text_and_reaches_the_operation(ddb):
    # "\ud83d\ude00" is one character (an emoji), escaped as a pair: a login that fails.
    response = APIClient("app").post("auth/login", {"username": "ada\U0001f600", "password": PASSWORD})

    assert response.status_code == 400
    assert "surrogate" not in response.content.decode()
