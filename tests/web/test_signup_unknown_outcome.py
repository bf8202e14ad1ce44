"""A sign-up DynamoDB saved without answering in time: the page says it cannot tell (503),
and the person's next sign-up from that browser, from the 503 form or from a new page,
finds the account it made and mails its link again; never "This username is taken" for
their own account. The fault is real: a proxy in front of DynamoDB Local forwards the
transaction (it commits) only after the request's deadline, then answers nothing."""

import pytest
from django.core import mail
from django.test import Client

from accounts.unsettled_signups import COOKIE_NAME
from tests.mail import link_in, mails_to, path_of
from tests.proxy import DELAY, RESET
from tests.web import PASSWORD, SIGNUP_URL, signup, signup_data, stored_accounts

pytestmark = pytest.mark.dynamodb_local

DEADLINE = 4


@pytest.fixture
def saved_without_an_answer(proxy, settings):
    """Call it to make the next sign-up's transaction commit after the deadline, with no
    answer for anything after it (the engine's resend, its read-back), until it is healed
    by the returned function. The demo's settings: mandatory verification, enumeration
    prevention (their default), a deadline."""
    settings.ACCOUNTS_EMAIL_VERIFICATION = "mandatory"

    def break_it():
        committed = []

        def fault(operation):
            if committed:
                return RESET
            if operation == "TransactWriteItems":
                committed.append(operation)
                return DELAY
            return None

        proxy.delay_seconds = DEADLINE * 0.6  # past the read timeout (half the deadline)
        proxy.fault = fault
        settings.ACCOUNTS_REQUEST_DEADLINE = DEADLINE

        def heal():
            proxy.fault = None
            settings.ACCOUNTS_REQUEST_DEADLINE = None

        return heal

    return break_it


def post_unknown(client, data, saved_without_an_answer):
    """Post the sign-up ``data``, saved but unanswered: the 503 page, then DynamoDB healed."""
    heal = saved_without_an_answer()
    response = client.post(SIGNUP_URL, data)
    heal()
    assert response.status_code == 503
    assert "We cannot tell whether this was saved" in response.content.decode()
    assert [account.username for account in stored_accounts()] == ["ada"]  # saved all the same
    assert mail.outbox == []
    return response


def assert_the_link_is_mailed_again(response):
    assert response.status_code == 302, response.content.decode()
    assert response["Location"] == "/accounts/verify/sent/"
    [message] = mails_to("ada@example.com")
    assert "/accounts/verify/" in path_of(link_in(message))
    assert len(stored_accounts()) == 1


def test_a_new_signup_page_after_a_saved_signup_without_answer_mails_the_link_again(saved_without_an_answer):
    client = Client()
    post_unknown(client, signup_data(client), saved_without_an_answer)

    # The person opens the sign-up page anew (its form has a token of its own) and signs up.
    again = signup(client)

    assert_the_link_is_mailed_again(again)
    assert again.cookies[COOKIE_NAME].value == ""  # settled: forgotten


def test_the_503_form_sent_again_mails_the_link_again(saved_without_an_answer):
    client = Client()
    data = signup_data(client)
    post_unknown(client, data, saved_without_an_answer)

    again = client.post(SIGNUP_URL, {**data, "password1": PASSWORD, "password2": PASSWORD})

    assert_the_link_is_mailed_again(again)


def test_the_link_then_confirms_the_address_and_the_account_logs_in(saved_without_an_answer):
    client = Client()
    post_unknown(client, signup_data(client), saved_without_an_answer)
    signup(client)

    client.post(path_of(link_in(mails_to("ada@example.com")[0])))

    assert client.post("/accounts/login/", {"username": "ada", "password": PASSWORD}).status_code == 302


def test_after_an_unknown_outcome_a_signup_with_other_values_is_a_new_signup(saved_without_an_answer):
    client = Client()
    post_unknown(client, signup_data(client), saved_without_an_answer)

    other = signup(client, "grace@example.com", "grace")

    assert other.status_code == 302
    assert sorted(account.username for account in stored_accounts()) == ["ada", "grace"]


def test_another_browser_taking_the_same_username_is_still_refused(saved_without_an_answer):
    client = Client()
    post_unknown(client, signup_data(client), saved_without_an_answer)

    refused = signup(Client())

    assert refused.status_code == 200
    assert refused.context["form"].has_error("username", "username_taken")
