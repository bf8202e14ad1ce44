"""DynamoDB stalls, loses answers, resets connections: a proxy between the site and
DynamoDB Local does it for real. Each request answers by ACCOUNTS_REQUEST_DEADLINE, says
only what it knows ("cannot tell whether" once a write went out), re-renders the form as
sent with its one-time token, and sending it again makes exactly one account."""

import time

import pytest
from django.test import Client

from tests.proxy import DROP_ANSWER, RESET, STALL
from tests.web import PASSWORD, signed_up_client, signup_data, stored_accounts

pytestmark = pytest.mark.dynamodb_local

DEADLINE = 4
# Time the test machine may need beyond the deadline (hashing a password, rendering, a
# loaded CI machine); the bound asserted is on waiting for DynamoDB.
SLACK = 2


@pytest.fixture
def deadline(settings):
    """Call it to put the next requests under DEADLINE, and again with ``None`` to lift it.

    Set up without it: DynamoDB Local answers the first request of a kind slowly (its
    JVM warms up), which a real DynamoDB does not."""

    def set_deadline(seconds=DEADLINE):
        settings.ACCOUNTS_REQUEST_DEADLINE = seconds

    return set_deadline


def timed(send):
    started = time.monotonic()
    response = send()
    return response, time.monotonic() - started


def assert_outcome_unknown_form(response, data):
    assert response.status_code == 503
    assert response["Retry-After"] == "30"
    html = response.content.decode()
    assert "cannot tell whether this was saved" in html
    assert "Nothing was saved" not in html
    form = response.context["form"]
    assert form["email"].value() == data["email"]
    assert form["username"].value() == data["username"]
    assert form["token"].value() == data["token"]
    assert PASSWORD not in html


def test_a_stalled_page_view_answers_503_by_the_deadline(proxy, deadline):
    client = signed_up_client()
    deadline()
    proxy.fail("*", STALL)

    response, seconds = timed(lambda: client.get("/accounts/profile/"))

    assert response.status_code == 503
    assert seconds < DEADLINE + SLACK
    html = response.content.decode()
    assert "The service is temporarily unavailable" in html
    assert "Nothing was saved" not in html and "cannot tell" not in html


def test_a_stalled_login_answers_503_by_the_deadline_saying_nothing_was_saved(proxy, deadline):
    signed_up_client()
    deadline()
    proxy.fail("*", STALL)

    response, seconds = timed(lambda: Client().post("/accounts/login/", {"username": "ada", "password": PASSWORD}))

    assert response.status_code == 503
    assert seconds < DEADLINE + SLACK
    assert "Nothing was saved." in response.content.decode()


# A dropped answer is settled by the engine itself (the sign-up reads its account back and
# finds it): see test_an_answer_lost_after_commit_is_settled_... below.
@pytest.mark.parametrize("fault", [STALL, RESET])
def test_a_signup_without_an_answer_says_the_outcome_is_unknown_and_resending_makes_one_account(proxy, deadline, fault):
    signed_up_client("grace@example.com", "grace")
    client = Client()
    data = signup_data(client)
    deadline()
    proxy.fail("TransactWriteItems", fault)

    response, seconds = timed(lambda: client.post("/accounts/signup/", data))

    assert seconds < DEADLINE + SLACK
    assert_outcome_unknown_form(response, data)
    proxy.heal()
    deadline(None)

    # Sent again as the page shows it, with the password typed again.
    resent = client.post("/accounts/signup/", {**data, "password1": PASSWORD, "password2": PASSWORD})

    assert resent.status_code == 302
    assert sorted(account.username for account in stored_accounts()) == ["ada", "grace"]
    assert client.get("/accounts/profile/").status_code == 200


def test_an_answer_lost_after_commit_is_settled_by_the_engine_when_a_resend_is_answered(proxy):
    client = Client()
    data = signup_data(client)
    lost = []

    def lose_the_first_answer(operation):
        if operation == "TransactWriteItems" and not lost:
            lost.append(operation)
            return DROP_ANSWER
        return None

    proxy.fault = lose_the_first_answer

    response = client.post("/accounts/signup/", data)

    assert lost
    assert response.status_code == 302
    assert len(stored_accounts()) == 1


def test_an_email_change_without_an_answer_says_the_outcome_is_unknown(proxy, deadline, settings):
    settings.ACCOUNTS_RATE_LIMITS = False  # the resend below comes within the change_email minute
    client = signed_up_client()
    client.post("/accounts/username/", {"username": "lovelace", "password": PASSWORD})
    deadline()
    proxy.fail("TransactWriteItems", DROP_ANSWER)

    response = client.post("/accounts/email/", {"email": "lovelace@example.com", "password": PASSWORD})

    assert response.status_code == 503
    assert "cannot tell whether this was saved" in response.content.decode()
    assert response.context["form"]["email"].value() == "lovelace@example.com"
    proxy.heal()
    deadline(None)
    # It was committed: sent again, the request is recorded once more (a new link; the
    # address changes when the link is opened) and lands on success.
    resent = client.post("/accounts/email/", {"email": "lovelace@example.com", "password": PASSWORD})
    assert resent.status_code == 302
    (account,) = stored_accounts()
    assert (account.email, account.pending_email) == ("ada@example.com", "lovelace@example.com")
