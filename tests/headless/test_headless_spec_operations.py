"""Every operation of django-allauth's specification answers, in JSON, with a status the
specification allows (or that allauth itself gives there), for each client it is for,
anonymously and logged in; a feature this site lacks answers as allauth answers while it
is off; and any other path under the API answers a JSON 404, never Django's HTML page
(allauth's client library reads every answer with ``resp.json()``)."""

import json

import pytest
from django.test import Client

from tests.headless import APIClient
from tests.headless_spec import BROWSER_PREFIX, PREFIX, allauth_spec, allowed_statuses, implemented_operations
from tests.web import PASSWORD

pytestmark = pytest.mark.dynamodb_local

APP_PREFIX = "/_allauth/app/v1/"
SPEC = allauth_spec()
SPEC_OPERATIONS = sorted(
    (method.upper(), path)
    for path, operations in SPEC["paths"].items()
    for method in operations
    if method != "parameters"
)


def clients_of(path):
    if path.startswith(BROWSER_PREFIX):
        return ["browser"]
    if path.startswith(APP_PREFIX):
        return ["app"]
    return ["app", "browser"]


def route_of(path):
    return path.removeprefix(PREFIX).removeprefix(BROWSER_PREFIX).removeprefix(APP_PREFIX)


def logged_in(client):
    api = APIClient(client)
    assert api.login("ada").status_code == 200
    return api


def answers_of(method, path):
    """The answers of ``method path`` (an empty body) for each of its clients, anonymously
    and logged in as ada: ``[(client, response)]``."""
    from accounts import store
    from tests.headless.test_headless_conformance import _password_hash

    store.signup("ada@example.com", "ada", _password_hash(), email_verified=True)
    answers = []
    for client in clients_of(path):
        for api in (APIClient(client), logged_in(client)):
            response = api.request(method, route_of(path), {} if method != "GET" else None)
            answers.append((client, response))
    return answers


@pytest.mark.parametrize(
    "method, path", SPEC_OPERATIONS, ids=[f"{method} {route_of(path)}" for method, path in SPEC_OPERATIONS]
)
def test_every_operation_of_allauths_spec_answers_json_with_a_status_it_allows(ddb, settings, method, path):
    # Off, a passkey sign-up answers a JSON 404, as allauth does not route it then: on, so
    # that its answers are checked (test_headless_passkeys.py checks the 404).
    settings.ACCOUNTS_PASSKEY_SIGNUP = True
    # The same for trusted browsers (allauth's MFA_TRUST_ENABLED): routed for the browser only.
    settings.ACCOUNTS_MFA_TRUST_ENABLED = True

    for client, response in answers_of(method, path):
        assert response["Content-Type"] == "application/json", (client, response.content[:200])
        assert response.status_code in allowed_statuses(method, path, SPEC), (client, response.content[:300])


# The operations whose answers change with several addresses per account.
ADDRESS_OPERATIONS = [
    (method, path) for method, path in SPEC_OPERATIONS if route_of(path) in ("account/email", "auth/email/verify")
]


@pytest.mark.parametrize(
    "method, path", ADDRESS_OPERATIONS, ids=[f"{method} {route_of(path)}" for method, path in ADDRESS_OPERATIONS]
)
def test_with_several_addresses_each_address_operation_answers_json_with_a_status_it_allows(
    ddb, settings, method, path
):
    settings.ACCOUNTS_MAX_EMAIL_ADDRESSES = 3

    for client, response in answers_of(method, path):
        assert response["Content-Type"] == "application/json", (client, response.content[:200])
        assert response.status_code in allowed_statuses(method, path, SPEC), (client, response.content[:300])


def test_the_site_implements_every_operation_of_allauths_spec():
    implemented = implemented_operations()

    missing = [
        f"{method} {route_of(path)}"
        for method, path in SPEC_OPERATIONS
        if method.lower() not in implemented.get(path, ())
    ]

    assert missing == []
    assert len(SPEC_OPERATIONS) == sum(len(methods) for methods in implemented.values())


# Features off, as allauth answers while they are off.


@pytest.mark.parametrize("client", ["app", "browser"])
def test_phone_numbers_answer_as_allauth_without_a_phone(ddb, client):
    from accounts import store
    from tests.headless.test_headless_conformance import _password_hash

    store.signup("ada@example.com", "ada", _password_hash(), email_verified=True)
    anonymous, ada = APIClient(client), logged_in(client)

    assert anonymous.get("account/phone").status_code == 401
    assert anonymous.get("account/phone").json()["data"]["flows"][0] == {"id": "login"}
    assert ada.get("account/phone").json() == {"status": 200, "data": []}
    for api in (anonymous, ada):
        assert api.post("account/phone", {"phone": "+15555550100"}).json() == {"status": 409}
        assert api.post("auth/phone/verify", {"code": "123456"}).json() == {"status": 409}
        assert api.post("auth/phone/verify/resend").json() == {"status": 409}


@pytest.mark.parametrize("operation", ["request", "confirm", "resend"])
def test_reauthentication_by_code_answers_as_allauth_while_it_is_off(ddb, settings, operation):
    from accounts import store
    from tests.headless.test_headless_conformance import _password_hash

    settings.ACCOUNTS_REAUTHENTICATION_BY_CODE_ENABLED = False
    store.signup("ada@example.com", "ada", _password_hash(), email_verified=True)
    anonymous, ada = APIClient("app"), logged_in("app")

    assert anonymous.post(f"auth/reauthenticate/code/{operation}", {"email": "ada@example.com"}).status_code == 401
    assert ada.post(f"auth/reauthenticate/code/{operation}", {"email": "ada@example.com"}).json() == {"status": 403}


# Any other path.

UNKNOWN_PATHS = [
    "/_allauth/browser/v1/nothing",
    "/_allauth/app/v1/auth/nothing/at/all",
    "/_allauth/app/v2/config",
    "/_allauth/browser/v1/config/",
    "/_allauth/",
    "/_allauth/openapi.yaml",
    "/_allauth/app/v1/auth/login/%00",
]


@pytest.mark.parametrize("path", UNKNOWN_PATHS)
@pytest.mark.parametrize("method", ["get", "post", "put", "patch", "delete", "options"])
def test_any_other_path_under_the_api_answers_a_json_404(path, method):
    # A browser with no CSRF token: the 404 does nothing, so it needs none (never a 403 page).
    client = Client(enforce_csrf_checks=True)
    if method == "get":
        response = client.get(path)
    else:
        response = getattr(client, method)(path, data=json.dumps({}), content_type="application/json")

    assert response.status_code == 404
    assert response["Content-Type"] == "application/json"
    assert response.json()["status"] == 404
    assert response.json()["errors"][0]["code"] == "not_found"


def test_a_path_outside_the_api_still_answers_the_site_404_page():
    response = Client().get("/no-such-page/")

    assert response.status_code == 404
    assert not response["Content-Type"].startswith("application/json")


def test_an_operation_the_api_has_still_answers_as_before_the_catch_all(ddb):
    assert Client().get("/_allauth/app/v1/config").status_code == 200
    assert Client().get("/_allauth/openapi.json").status_code == 200
    assert APIClient("app").post("auth/login", {"username": "nobody", "password": PASSWORD}).status_code == 400
