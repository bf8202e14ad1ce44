"""Login by a mailed code through the API (``auth/code/request``, ``auth/code/confirm``), on
DynamoDB Local: the same flow as the pages, so a code logs in once, within its ten minutes,
after at most three tries; the second factor still applies; asking tells nothing about the
address; the limits answer 429 with ``Retry-After``."""

import re
import time

import pytest

from accounts import store
from accounts.login_codes import flows
from tests.headless import APIClient
from tests.headless_spec import conforms
from tests.mfa import code_of, enable_totp
from tests.web import signed_up_client

pytestmark = pytest.mark.dynamodb_local


def ask(api, email, mailoutbox):
    """Ask for a code for ``email``: the answer, and the mailed code (``None``: no mail)."""
    mailoutbox.clear()
    response = api.post("auth/code/request", {"email": email})
    codes = [re.search(r"log in: (\w{8})", message.body).group(1) for message in mailoutbox]
    return response, (codes[-1] if codes else None)


def pending_flow_ids(response):
    return [flow["id"] for flow in response.json()["data"]["flows"] if flow.get("is_pending")]


@pytest.mark.parametrize("client", ["app", "browser"])
def test_a_mailed_code_logs_in_through_the_api(ddb, mailoutbox, client):
    signed_up_client()
    api = APIClient(client)
    asked, code = ask(api, "ada@example.com", mailoutbox)
    assert asked.status_code == 401
    assert pending_flow_ids(asked) == ["login_by_code"]

    response = api.post("auth/code/confirm", {"code": code.lower()})

    assert response.status_code == 200, response.content
    body = response.json()
    assert body["data"]["user"]["username"] == "ada"
    assert body["data"]["methods"][-1]["method"] == "code"
    assert body["data"]["methods"][-1]["email"] == "ada@example.com"
    assert api.get("auth/session").status_code == 200


def test_config_says_login_by_code_is_enabled(ddb):
    config = APIClient("app").get("config").json()["data"]

    assert config["account"]["login_by_code_enabled"] is True


def test_asking_for_an_unknown_address_answers_as_for_a_known_one(ddb, mailoutbox):
    signed_up_client()
    known, _ = ask(APIClient("app"), "ada@example.com", mailoutbox)
    unknown, code = ask(APIClient("app"), "nobody@example.com", mailoutbox)

    assert code is None
    assert (unknown.status_code, unknown.json()["data"]) == (known.status_code, known.json()["data"])


def test_a_used_code_is_refused_through_the_api(ddb, mailoutbox):
    signed_up_client()
    api = APIClient("app")
    _, code = ask(api, "ada@example.com", mailoutbox)
    asking_token = api.token
    assert api.post("auth/code/confirm", {"code": code}).status_code == 200

    # The same session again: logged in, no code pending.
    assert api.post("auth/code/confirm", {"code": code}).status_code == 409
    # The session that held the code (a stolen token): ended by the sign-in.
    replay = APIClient("app")
    replay.token = asking_token
    response = replay.post("auth/code/confirm", {"code": code})
    assert response.status_code == 410
    assert response.json()["meta"]["is_authenticated"] is False


def test_an_expired_code_is_refused_through_the_api(ddb, mailoutbox, monkeypatch):
    signed_up_client()
    api = APIClient("app")
    _, code = ask(api, "ada@example.com", mailoutbox)
    later = time.time() + flows.CODE_SECONDS + 1
    monkeypatch.setattr(flows.time, "time", lambda: later)

    response = api.post("auth/code/confirm", {"code": code})

    assert response.status_code == 409
    assert api.get("auth/session").status_code == 401


def test_a_wrong_code_is_an_error_of_the_code_and_three_end_it(ddb, mailoutbox, settings):
    settings.ACCOUNTS_RATE_LIMITS = {"login_failed": "100/m/ip,100/5m/key"}
    signed_up_client()
    api = APIClient("app")
    _, code = ask(api, "ada@example.com", mailoutbox)
    for _ in range(flows.MAX_TRIES):
        wrong = api.post("auth/code/confirm", {"code": "WRONGCOD"})
        assert wrong.status_code == 400
        assert wrong.json()["errors"] == [
            {"message": wrong.json()["errors"][0]["message"], "code": "incorrect_code", "param": "code"}
        ]

    response = api.post("auth/code/confirm", {"code": code})

    assert response.status_code == 429
    assert int(response["Retry-After"]) > 0
    assert api.get("auth/session").status_code == 401


def test_the_second_factor_still_applies_after_a_code_through_the_api(ddb, mailoutbox):
    owner = signed_up_client()
    secret, _ = enable_totp(owner)
    api = APIClient("app")
    _, code = ask(api, "ada@example.com", mailoutbox)

    response = api.post("auth/code/confirm", {"code": code})

    assert response.status_code == 401
    assert pending_flow_ids(response) == ["mfa_authenticate"]
    second = api.post("auth/2fa/authenticate", {"code": code_of(secret, at=time.time() + 30)})
    assert second.status_code == 200
    assert [method["method"] for method in second.json()["data"]["methods"]] == ["code", "mfa"]
    assert second.json()["data"]["user"]["id"] == store.get_by_username("ada").id


def test_asking_too_often_answers_429_with_retry_after(ddb, mailoutbox, settings):
    settings.ACCOUNTS_RATE_LIMITS = {"reset_password": "2/h/key"}
    signed_up_client()
    api = APIClient("app")
    for _ in range(2):
        assert ask(api, "ada@example.com", mailoutbox)[0].status_code == 401

    response, code = ask(api, "ADA@example.com", mailoutbox)

    assert response.status_code == 429
    assert int(response["Retry-After"]) > 0
    assert code is None


def test_confirming_with_no_code_asked_is_a_conflict(ddb):
    assert APIClient("app").post("auth/code/confirm", {"code": "ABCDEFGH"}).status_code == 409


def test_asking_without_an_address_is_an_error_of_the_email(ddb):
    response = APIClient("app").post("auth/code/request", {"email": ""})

    assert response.status_code == 400
    assert response.json()["errors"][0]["param"] == "email"


def test_every_answer_of_a_code_login_has_the_shape_of_allauths_specification(ddb, mailoutbox):
    signed_up_client()
    api = APIClient("app")
    asked, code = ask(api, "ada@example.com", mailoutbox)
    wrong = api.post("auth/code/confirm", {"code": "WRONGCOD"})
    confirmed = api.post("auth/code/confirm", {"code": code})

    assert conforms("AuthenticationResponse", asked.json())
    assert conforms("ErrorResponse", wrong.json())
    assert conforms("AuthenticatedResponse", confirmed.json())
