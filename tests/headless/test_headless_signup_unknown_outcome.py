"""``auth/signup`` saved by DynamoDB without an answer in time: 503 ``outcome_unknown``, then
the same sign-up sent again (from the same browser, or with the same ``Idempotency-Key``)
finds its account and mails the link again: the pending ``verify_email`` flow, never a
400 "username taken" for the person's own account. The fault is on the wire, as in
tests/web/test_signup_unknown_outcome.py."""

import pytest
from django.core import mail

from accounts.unsettled_signups import COOKIE_NAME
from tests.headless import APIClient
from tests.mail import mails_to
from tests.web import stored_accounts
from tests.web.test_signup_unknown_outcome import saved_without_an_answer  # noqa: F401 (a fixture)

pytestmark = pytest.mark.dynamodb_local


def signup_unknown(api, saved_without_an_answer, **kwargs):
    heal = saved_without_an_answer()
    response = api.signup(**kwargs)
    heal()
    assert response.status_code == 503
    assert response.json()["errors"][0]["code"] == "outcome_unknown"
    assert [account.username for account in stored_accounts()] == ["ada"]
    assert mail.outbox == []
    return response


def assert_pending_verification_with_the_link_mailed(response):
    assert response.status_code == 401, response.content.decode()
    flows = response.json()["data"]["flows"]
    assert {"id": "verify_email", "is_pending": True} in flows
    assert len(mails_to("ada@example.com")) == 1
    assert len(stored_accounts()) == 1


def test_a_browser_sending_the_signup_again_without_a_key_is_mailed_the_link(saved_without_an_answer):
    api = APIClient("browser")
    signup_unknown(api, saved_without_an_answer)

    again = api.signup()

    assert_pending_verification_with_the_link_mailed(again)
    assert again.cookies[COOKIE_NAME].value == ""


def test_an_app_sending_the_signup_again_with_its_idempotency_key_is_mailed_the_link(saved_without_an_answer):
    headers = {"Idempotency-Key": "5b1b8a2e-first-signup"}
    signup_unknown(APIClient("app"), saved_without_an_answer, headers=headers)

    again = APIClient("app").signup(headers=headers)

    assert_pending_verification_with_the_link_mailed(again)


def test_another_browser_taking_the_same_username_is_still_refused(saved_without_an_answer):
    signup_unknown(APIClient("browser"), saved_without_an_answer)

    refused = APIClient("browser").signup()

    assert refused.status_code == 400
    assert {"param": "username", "code": "username_taken"}.items() <= refused.json()["errors"][0].items()
