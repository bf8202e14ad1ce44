"""What the HTML pages guarantee holds on the API: the same round trips, rate limits (429
with ``Retry-After``), enumeration prevention, an honest 503 when DynamoDB is gone, a safe
resend (``Idempotency-Key``), and never a 500 on any input."""

import pytest
from django.test import Client

from tests.headless import APIClient
from tests.web import OTHER_PASSWORD, PASSWORD, signed_up_client, stored_accounts
from tests.web.test_web_round_trips import counted
from tests.web.test_web_unavailable import outage, refuse_transactions  # noqa: F401 (a fixture)

pytestmark = pytest.mark.dynamodb_local


# Round trips: what the HTML twins cost (tests/web/test_web_round_trips.py).


@pytest.mark.parametrize("client", ["browser", "app"])
def test_api_signup_costs_what_the_signup_page_costs(proxy, client):
    api = APIClient(client)

    response, requests = counted(proxy, lambda: api.signup())

    assert response.status_code == 200
    # As the page: the signup limit's counter, the one transaction, the session written
    # with the session slot it takes (a transaction of its own).
    assert requests == {"UpdateItem": 1, "TransactWriteItems": 2}


@pytest.mark.parametrize("client", ["browser", "app"])
def test_api_login_costs_what_the_login_page_costs(proxy, client):
    signed_up_client()
    api = APIClient(client)

    response, requests = counted(proxy, lambda: api.login("ada"))

    assert response.status_code == 200
    # As the page from a new browser: the lock, the account with its sessions, the attempt
    # on two counters and taken back from one, the session written with its session slot
    # and the counter deleted (one transaction).
    assert requests == {"GetItem": 1, "Query": 1, "UpdateItem": 3, "TransactWriteItems": 1}


@pytest.mark.parametrize("client", ["browser", "app"])
def test_authenticated_api_get_is_one_batch_get_item_of_session_and_account(proxy, client):
    api = APIClient(client)
    api.signup()

    response, requests = counted(proxy, lambda: api.get("account/email"))

    assert response.status_code == 200
    assert requests == {"BatchGetItem": 1}


# Rate limits.


def test_signup_past_its_limit_answers_429_with_retry_after(ddb, settings):
    settings.ACCOUNTS_RATE_LIMITS = {"signup": "1/m/ip"}
    APIClient("app").signup()

    refused = APIClient("app").signup("grace@example.com", "grace")

    assert refused.status_code == 429
    assert int(refused["Retry-After"]) > 0
    assert refused.json()["errors"][0]["code"] == "rate_limited"
    assert [account.username for account in stored_accounts()] == ["ada"]


def test_failed_logins_past_the_limit_answer_429_even_with_the_right_password(ddb, settings):
    settings.ACCOUNTS_RATE_LIMITS = {"login_failed": "2/m/ip"}
    signed_up_client()
    api = APIClient("app")
    assert [api.login("ada", OTHER_PASSWORD).status_code for _ in range(2)] == [400, 400]

    refused = api.login("ada", PASSWORD)

    assert refused.status_code == 429
    assert int(refused["Retry-After"]) > 0


def test_password_reset_requests_past_the_limit_answer_429(ddb, settings):
    settings.ACCOUNTS_RATE_LIMITS = {"reset_password": "1/m/key"}
    api = APIClient("app")
    assert api.post("auth/password/request", {"email": "ada@example.com"}).status_code == 200

    assert api.post("auth/password/request", {"email": "ADA@example.com"}).status_code == 429


# Enumeration.


def test_with_enumeration_prevention_a_registered_address_signs_up_as_a_free_one(ddb, settings):
    settings.ACCOUNTS_PREVENT_ENUMERATION = True
    settings.ACCOUNTS_EMAIL_VERIFICATION = "optional"
    APIClient("app").signup()
    from accounts import store

    store.verify_email(store.get_by_username("ada"))

    taken = APIClient("app").signup("ada@example.com", "grace")
    free = APIClient("app").signup("hopper@example.com", "hopper")

    assert taken.status_code == free.status_code == 401
    assert taken.json()["data"] == free.json()["data"]


def test_password_reset_request_answers_the_same_for_any_address(ddb):
    signed_up_client()

    known = APIClient("app").post("auth/password/request", {"email": "ada@example.com"})
    unknown = APIClient("app").post("auth/password/request", {"email": "nobody@example.com"})

    assert known.status_code == unknown.status_code == 200
    assert known.json() == unknown.json()


def test_a_wrong_password_and_an_unknown_name_get_the_same_error(ddb):
    signed_up_client()

    wrong = APIClient("app").login("ada", OTHER_PASSWORD)
    unknown = APIClient("app").login("nobody", OTHER_PASSWORD)

    assert wrong.status_code == unknown.status_code == 400
    assert wrong.json() == unknown.json()


# Errors of the one cancelled transaction.


def test_a_signup_whose_email_and_username_are_both_taken_gets_both_errors(ddb):
    APIClient("app").signup()

    refused = APIClient("app").signup("ADA@example.com", "Ada")

    assert refused.status_code == 400
    assert [(error["param"], error["code"]) for error in refused.json()["errors"]] == [
        ("email", "email_taken"),
        ("username", "username_taken"),
    ]


# Resending.


def test_a_signup_resent_with_its_idempotency_key_gets_the_first_answer_and_one_account(ddb):
    headers = {"Idempotency-Key": "0f8fad5b-d9cb-469f-a165-70867728950e"}
    first = APIClient("app").signup(headers=headers)

    again = APIClient("app").signup(headers=headers)

    assert first.status_code == again.status_code == 200
    assert again.json()["data"]["user"]["id"] == first.json()["data"]["user"]["id"]
    assert len(stored_accounts()) == 1


def test_a_signup_with_another_idempotency_key_is_a_new_signup(ddb):
    APIClient("app").signup(headers={"Idempotency-Key": "first"})

    refused = APIClient("app").signup(headers={"Idempotency-Key": "second"})

    assert refused.status_code == 400
    assert len(stored_accounts()) == 1


def test_a_resent_key_with_another_password_is_not_the_first_signup(ddb):
    headers = {"Idempotency-Key": "shared"}
    APIClient("app").signup(headers=headers)

    refused = APIClient("app").signup(password=OTHER_PASSWORD, headers=headers)

    assert refused.status_code == 400
    assert {error["param"] for error in refused.json()["errors"]} == {"email", "username"}


# DynamoDB gone.


def assert_unavailable(response, code):
    assert response.status_code == 503
    assert response["Content-Type"] == "application/json"
    assert response.json()["errors"][0]["code"] == code
    assert response["Retry-After"] == "30"


@pytest.mark.parametrize("client", ["browser", "app"])
def test_signup_during_an_outage_answers_503_not_saved(ddb, outage, client):
    outage()

    assert_unavailable(APIClient(client).signup(), "not_saved")


def test_signup_whose_transaction_cannot_be_sent_answers_503_and_saves_nothing(ddb):
    refuse_transactions()

    assert_unavailable(APIClient("app").signup(), "not_saved")
    assert stored_accounts() == []


@pytest.mark.parametrize("client", ["browser", "app"])
def test_a_logged_in_get_during_an_outage_answers_503(ddb, outage, client):
    api = APIClient(client)
    api.signup()
    outage()

    assert_unavailable(api.get("auth/session"), "unavailable")


# Bad input.


@pytest.mark.parametrize(
    "body",
    [b"not json", b"[1, 2]", b'"text"', b"\xff\xfe", b'{"email": 1, "username": [], "password": {}}'],
)
def test_a_body_that_is_not_the_operation_s_object_is_a_400(ddb, body):
    response = Client().post("/_allauth/app/v1/auth/signup", body, content_type="application/json")

    assert response.status_code == 400
    assert response.json()["status"] == 400
    assert all("code" in error and "message" in error for error in response.json()["errors"])


def test_values_no_lock_key_can_hold_are_field_errors(ddb):
    response = APIClient("app").signup("a" * 300 + "@example.com", "b" * 5000)

    assert response.status_code == 400
    assert {error["param"] for error in response.json()["errors"]} <= {"email", "username", "password"}


def test_a_method_the_operation_lacks_is_a_405(ddb):
    assert APIClient("app").request("PUT", "auth/login", {}).status_code == 405


# A feature this site lacks answers as allauth answers while it is off:
# tests/headless/test_headless_spec_operations.py.


# The app's session token.


def test_a_session_token_of_a_session_that_ended_answers_410(ddb):
    api = APIClient("app")
    api.signup()
    token = api.token
    assert api.delete("auth/session").status_code == 401
    api.token = token

    gone = api.get("auth/session")

    assert gone.status_code == 410
    assert gone.json() == {"status": 410, "data": {}, "meta": {"is_authenticated": False}}


def test_an_app_gets_no_cookie_and_a_browser_gets_its_session_cookie(ddb):
    app, browser = APIClient("app"), APIClient("browser")

    app_answer, browser_answer = app.signup(), browser.signup("grace@example.com", "grace")

    assert not app_answer.cookies
    assert app_answer.json()["meta"]["session_token"]
    assert {"sessionid", "accounts_device"} <= set(browser_answer.cookies)
    assert "session_token" not in browser_answer.json()["meta"]
