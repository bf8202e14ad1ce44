"""``auth/code/resend`` (issue 34), on DynamoDB Local: a new code for the pending
``login_by_code`` flow, as allauth's (200, 409 when none is pending or it was resent too
often, 429 past the request's limits); the old code stops working the moment the new one
is asked for, the new one has tries of its own and dies with the request, and asking tells
nothing about the address."""

import re
import time

import pytest

from accounts.login_codes import flows
from tests.headless import APIClient
from tests.headless_spec import conforms
from tests.web import signed_up_client

pytestmark = pytest.mark.dynamodb_local


@pytest.fixture
def limits(settings):
    # Room for the requests of one test; the request limit has tests of its own below.
    settings.ACCOUNTS_RATE_LIMITS = {"reset_password": "100/m/ip,100/m/key", "login_failed": "100/m/ip,100/5m/key"}


def mailed_codes(mailoutbox):
    return [re.search(r"log in: (\w{8})", message.body).group(1) for message in mailoutbox]


def asked(mailoutbox, email="ada@example.com", client="app"):
    api = APIClient(client)
    assert api.post("auth/code/request", {"email": email}).status_code == 401
    return api


@pytest.mark.parametrize("client", ["app", "browser"])
def test_a_resent_code_logs_in_and_the_first_one_no_longer_does(ddb, mailoutbox, limits, client):
    signed_up_client()
    mailoutbox.clear()
    api = asked(mailoutbox, client=client)

    resent = api.post("auth/code/resend")

    assert resent.status_code == 200 and resent.json() == {"status": 200}
    first, second = mailed_codes(mailoutbox)
    assert first != second
    wrong = api.post("auth/code/confirm", {"code": first})
    assert wrong.status_code == 400 and wrong.json()["errors"][0]["code"] == "incorrect_code"
    assert api.post("auth/code/confirm", {"code": second}).status_code == 200


def test_a_resent_code_has_tries_of_its_own(ddb, mailoutbox, limits):
    signed_up_client()
    mailoutbox.clear()
    api = asked(mailoutbox)
    for _ in range(flows.MAX_TRIES):
        assert api.post("auth/code/confirm", {"code": "WRONGCOD"}).status_code == 400
    assert api.post("auth/code/confirm", {"code": mailed_codes(mailoutbox)[0]}).status_code == 429

    assert api.post("auth/code/resend").status_code == 200

    assert api.post("auth/code/confirm", {"code": mailed_codes(mailoutbox)[-1]}).status_code == 200


def test_a_code_is_resent_at_most_twice(ddb, mailoutbox, limits):
    signed_up_client()
    mailoutbox.clear()
    api = asked(mailoutbox)

    answers = [api.post("auth/code/resend").status_code for _ in range(flows.MAX_RESENDS + 1)]

    assert answers == [200] * flows.MAX_RESENDS + [409]
    assert len(mailoutbox) == 1 + flows.MAX_RESENDS
    assert api.post("auth/code/confirm", {"code": mailed_codes(mailoutbox)[-1]}).status_code == 200


def test_a_resent_code_expires_with_the_request(ddb, mailoutbox, limits, monkeypatch):
    signed_up_client()
    mailoutbox.clear()
    api = asked(mailoutbox)
    assert api.post("auth/code/resend").status_code == 200
    later = time.time() + flows.CODE_SECONDS + 1
    monkeypatch.setattr(flows.time, "time", lambda: later)

    assert api.post("auth/code/confirm", {"code": mailed_codes(mailoutbox)[-1]}).status_code == 409
    assert api.post("auth/code/resend").status_code == 409


def test_resending_with_no_code_pending_is_a_conflict(ddb):
    response = APIClient("app").post("auth/code/resend")

    assert response.status_code == 409
    assert conforms("ConflictResponse", response.json())


def test_resending_after_the_code_logged_in_is_a_conflict(ddb, mailoutbox, limits):
    signed_up_client()
    mailoutbox.clear()
    api = asked(mailoutbox)
    assert api.post("auth/code/confirm", {"code": mailed_codes(mailoutbox)[0]}).status_code == 200

    assert api.post("auth/code/resend").status_code == 409
    assert len(mailoutbox) == 1


def test_resending_for_an_unknown_address_answers_as_for_a_known_one(ddb, mailoutbox, limits):
    signed_up_client()
    mailoutbox.clear()
    known = asked(mailoutbox).post("auth/code/resend")
    unknown = asked(mailoutbox, "nobody@example.com").post("auth/code/resend")

    assert (unknown.status_code, unknown.json()) == (known.status_code, known.json()) == (200, {"status": 200})
    assert [message.to for message in mailoutbox] == [["ada@example.com"]] * 2


def test_resending_counts_against_the_request_limit(ddb, mailoutbox, settings):
    # Per client here (the request and the resends share one budget); per address, under
    # the address's lock key (flows.request_limit_key), every spelling of it alike.
    settings.ACCOUNTS_RATE_LIMITS = {"reset_password": "2/h/ip"}
    signed_up_client()
    mailoutbox.clear()
    api = asked(mailoutbox)
    assert api.post("auth/code/resend").status_code == 200

    refused = api.post("auth/code/resend")

    assert refused.status_code == 429
    assert int(refused["Retry-After"]) > 0
    assert len(mailoutbox) == 2
    # The code mailed last still logs in: a refused resend changed nothing.
    assert api.post("auth/code/confirm", {"code": mailed_codes(mailoutbox)[-1]}).status_code == 200


def test_a_resend_answers_as_allauths_specification_says(ddb, mailoutbox, limits):
    signed_up_client()
    mailoutbox.clear()

    response = asked(mailoutbox).post("auth/code/resend")

    assert conforms("StatusOK", response.json(), kind="responses")


def test_a_resend_ignores_its_body_as_allauths(ddb, mailoutbox, limits):
    signed_up_client()
    mailoutbox.clear()
    api = asked(mailoutbox)

    response = api.http.post(
        api.url("auth/code/resend"), data="not json", content_type="text/plain", headers={"X-Session-Token": api.token}
    )

    assert response.status_code == 200
