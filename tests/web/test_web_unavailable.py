"""DynamoDB unreachable: every page answers 503 "temporarily unavailable", never a 500.
A change that was not sent says "Nothing was saved."; a page view says only that the
service is unavailable."""

import botocore.exceptions
import pytest
from django.test import Client

from accounts.dynamodb_local import free_port
from accounts.tables import dynamodb_client
from tests.web import PASSWORD, csrf_token_in, login, signed_up_client, signup_data, stored_accounts

pytestmark = pytest.mark.dynamodb_local


@pytest.fixture
def outage(ddb, settings):
    """Call it to make DynamoDB refuse connections; it is back for the table's teardown."""

    def start():
        settings.ACCOUNTS_ENDPOINT_URL = f"http://127.0.0.1:{free_port()}"

    yield start
    settings.ACCOUNTS_ENDPOINT_URL = ddb.endpoint_url


def refuse_transactions():
    """TransactWriteItems calls fail as if the connection dropped; reads still work."""

    def refuse(**kwargs):
        raise botocore.exceptions.EndpointConnectionError(endpoint_url="http://dynamodb.invalid")

    dynamodb_client().meta.events.register("before-call.dynamodb.TransactWriteItems", refuse)


def assert_unavailable_page(response, saved_nothing=True):
    assert response.status_code == 503
    html = response.content.decode()
    assert "Temporarily unavailable" in html
    assert ("Nothing was saved." in html) is saved_nothing
    assert "cannot tell whether" not in html
    assert "Please try again" in html
    assert response["Retry-After"] == "30"


def test_signup_during_an_outage_answers_503(ddb, outage):
    client = Client()
    data = signup_data(client)
    outage()

    assert_unavailable_page(client.post("/accounts/signup/", data))


def test_signup_whose_transaction_cannot_be_sent_answers_503_and_saves_nothing(ddb):
    client = Client()
    data = signup_data(client)
    refuse_transactions()

    assert_unavailable_page(client.post("/accounts/signup/", data))
    assert stored_accounts() == []


def test_login_during_an_outage_answers_503(ddb, outage):
    signed_up_client()
    client = Client()
    client.get("/accounts/login/")
    outage()

    assert_unavailable_page(login(client, "ada"))


@pytest.mark.parametrize("url", ["/", "/accounts/profile/", "/accounts/email/", "/accounts/signup/"])
def test_logged_in_page_during_an_outage_answers_503_without_loading_the_user(ddb, outage, url):
    client = signed_up_client()
    outage()

    response = client.get(url)

    assert_unavailable_page(response, saved_nothing=False)
    assert "The service is temporarily unavailable" in response.content.decode()
    # The page never showed who is logged in: loading the user is what failed.
    assert "Log out" not in response.content.decode()


def test_email_change_whose_transaction_cannot_be_sent_answers_503(ddb):
    client = signed_up_client()
    refuse_transactions()

    response = client.post("/accounts/email/", {"email": "new@example.com", "password": PASSWORD})

    assert_unavailable_page(response)


def test_delete_whose_transaction_cannot_be_sent_answers_503_and_keeps_the_session(ddb):
    client = signed_up_client()
    refuse_transactions()

    assert_unavailable_page(client.post("/accounts/delete/", {"password": PASSWORD}))
    assert len(stored_accounts()) == 1


def test_outage_answers_503_in_debug_mode_too(ddb, outage, settings):
    settings.DEBUG = True
    client = signed_up_client()
    outage()

    assert_unavailable_page(client.get("/accounts/profile/"), saved_nothing=False)


def test_csrf_failure_during_an_outage_is_a_plain_403(ddb, outage):
    client = signed_up_client()
    client.handler.enforce_csrf_checks = True
    stale = {"csrfmiddlewaretoken": csrf_token_in(Client().get("/accounts/login/"))}
    outage()

    assert client.post("/accounts/login/", stale).status_code == 403


def test_outage_is_logged_with_the_request(ddb, outage, caplog):
    client = signed_up_client()
    outage()

    client.get("/accounts/profile/")

    assert "DynamoDB unavailable during GET /accounts/profile/" in caplog.text
