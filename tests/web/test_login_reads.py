"""What a login reads, counted by the proxy in front of DynamoDB Local: the lock and the
account in one BatchGetItem from a browser that logged in to the account before, when the
login has no sessions to count (the likely accounts travel to the lookup as an argument)."""

import pytest
from django.test import Client

from tests.web import login, signed_up_client
from tests.web.test_web_round_trips import counted

pytestmark = pytest.mark.dynamodb_local


@pytest.fixture
def without_session_limit(settings):
    settings.ACCOUNTS_MAX_SESSIONS = None
    settings.ACCOUNTS_RATE_LIMITS = {}


def test_a_login_from_a_browser_that_logged_in_before_reads_lock_and_account_in_one_batch(proxy, without_session_limit):
    client = signed_up_client()
    client.post("/accounts/logout/")

    response, requests = counted(proxy, lambda: login(client, "ada"))

    assert response.status_code == 302
    assert requests.get("BatchGetItem") == 1 and "GetItem" not in requests


def test_a_login_from_a_new_browser_reads_the_lock_then_the_account(proxy, without_session_limit):
    signed_up_client()

    response, requests = counted(proxy, lambda: login(Client(), "ada"))

    assert response.status_code == 302
    assert requests.get("GetItem") == 2 and "BatchGetItem" not in requests
