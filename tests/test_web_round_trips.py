"""Requests per page, counted by a proxy in front of DynamoDB Local.

Goals (issue 4): signup exactly one TransactWriteItems; login at most 2 GetItem; any
authenticated page at most 1 request; email change, username change and delete at most
2 requests with exactly one TransactWriteItems; never a Query or a Scan.
"""

import pytest
from django.test import Client

from tests.mail import link_in, mails_to, path_of
from tests.proxy import CountingProxy
from tests.web import PASSWORD, OTHER_PASSWORD, login, signed_up_client, signup_data

pytestmark = pytest.mark.dynamodb_local


@pytest.fixture
def proxy(ddb, settings):
    """DynamoDB Local behind a counting proxy, which the app now talks to."""
    with CountingProxy(ddb.endpoint_url) as proxy:
        settings.ACCOUNTS_ENDPOINT_URL = proxy.endpoint_url
        yield proxy
        settings.ACCOUNTS_ENDPOINT_URL = ddb.endpoint_url


def counted(proxy, send):
    """The response of ``send()`` and the DynamoDB requests it cost."""
    proxy.reset()
    response = send()
    return response, proxy.snapshot()


def test_the_proxy_sees_what_the_app_sends(proxy):
    signed_up_client()

    assert proxy.snapshot() == {"TransactWriteItems": 1, "GetItem": 1}


def test_signup_is_exactly_one_transact_write_items(proxy):
    client = Client()
    data = signup_data(client)

    response, requests = counted(proxy, lambda: client.post("/accounts/signup/", data))

    assert response.status_code == 302
    assert requests == {"TransactWriteItems": 1}


def test_anonymous_signup_and_login_pages_cost_nothing(proxy):
    client = Client()

    for url in ("/", "/accounts/signup/", "/accounts/login/"):
        response, requests = counted(proxy, lambda: client.get(url))
        assert response.status_code == 200
        assert requests == {}


def test_rejected_signup_costs_one_transact_write_items(proxy):
    signed_up_client()
    client = Client()
    data = signup_data(client)

    response, requests = counted(proxy, lambda: client.post("/accounts/signup/", data))

    assert response.status_code == 200
    assert requests == {"TransactWriteItems": 1}


def test_second_post_of_the_same_signup_costs_a_transaction_and_one_read(proxy):
    data = signup_data(Client())
    Client().post("/accounts/signup/", data)

    response, requests = counted(proxy, lambda: Client().post("/accounts/signup/", data))

    assert response.status_code == 302
    assert requests == {"TransactWriteItems": 1, "GetItem": 1}


@pytest.mark.parametrize("login_name", ["ada", "ADA@example.com"])
def test_login_is_at_most_two_get_item(proxy, login_name):
    signed_up_client()
    client = Client()

    response, requests = counted(proxy, lambda: login(client, login_name))

    assert response.status_code == 302
    assert requests == {"GetItem": 2}


def test_failed_login_is_at_most_two_get_item(proxy):
    signed_up_client()

    wrong_password, wrong_password_requests = counted(proxy, lambda: login(Client(), "ada", OTHER_PASSWORD))
    unknown, unknown_requests = counted(proxy, lambda: login(Client(), "nobody"))

    assert wrong_password.status_code == unknown.status_code == 200
    assert wrong_password_requests == {"GetItem": 2}
    assert unknown_requests == {"GetItem": 1}


@pytest.mark.parametrize(
    "url",
    ["/", "/accounts/profile/", "/accounts/email/", "/accounts/username/", "/accounts/password/", "/accounts/delete/"],
)
def test_authenticated_page_is_one_get_item(proxy, url):
    client = signed_up_client()

    response, requests = counted(proxy, lambda: client.get(url))

    assert response.status_code == 200
    assert requests == {"GetItem": 1}


def test_logout_is_one_get_item(proxy):
    client = signed_up_client()

    response, requests = counted(proxy, lambda: client.post("/accounts/logout/"))

    assert response.status_code == 302
    assert requests == {"GetItem": 1}


@pytest.mark.parametrize(
    ("url", "data"),
    [
        ("/accounts/email/", {"email": "lovelace@example.com", "password": PASSWORD}),
        ("/accounts/username/", {"username": "lovelace", "password": PASSWORD}),
        (
            "/accounts/password/",
            {"old_password": PASSWORD, "new_password1": OTHER_PASSWORD, "new_password2": OTHER_PASSWORD},
        ),
        ("/accounts/delete/", {"password": PASSWORD}),
    ],
)
def test_change_or_delete_is_one_get_item_and_one_transact_write_items(proxy, url, data):
    client = signed_up_client()

    response, requests = counted(proxy, lambda: client.post(url, data))

    assert response.status_code == 302
    assert requests == {"GetItem": 1, "TransactWriteItems": 1}


def test_refused_email_change_is_one_get_item_and_one_transact_write_items(proxy):
    signed_up_client("grace@example.com", "grace")
    client = signed_up_client()

    response, requests = counted(
        proxy, lambda: client.post("/accounts/email/", {"email": "grace@example.com", "password": PASSWORD})
    )

    assert response.context["form"].has_error("email", "email_taken")
    assert requests == {"GetItem": 1, "TransactWriteItems": 1}


def test_a_whole_visit_never_queries_or_scans(proxy):
    client = signed_up_client()
    client.post("/accounts/email/", {"email": "lovelace@example.com", "password": PASSWORD})
    client.post("/accounts/username/", {"username": "lovelace", "password": PASSWORD})
    client.post("/accounts/logout/")
    login(client, "lovelace@example.com")
    client.post("/accounts/delete/", {"password": PASSWORD})

    operations = set(proxy.snapshot())
    assert operations == {"GetItem", "TransactWriteItems"}


# Email ownership (issue 9): sign-up stays one transaction; a link is one read and one
# transaction; a reset request at most two reads.


def test_mandatory_signup_is_exactly_one_transact_write_items(proxy, settings):
    settings.ACCOUNTS_EMAIL_VERIFICATION = "mandatory"
    client = Client()
    data = signup_data(client)

    response, requests = counted(proxy, lambda: client.post("/accounts/signup/", data))

    assert response["Location"] == "/accounts/verify/sent/"
    assert requests == {"TransactWriteItems": 1}


def test_opening_a_verification_link_is_one_get_item_and_one_transact_write_items(proxy, settings):
    settings.ACCOUNTS_EMAIL_VERIFICATION = "mandatory"
    Client().post("/accounts/signup/", signup_data(Client()))
    path = path_of(link_in(mails_to("ada@example.com")[0]))
    client = Client()

    page, shown = counted(proxy, lambda: client.get(path))
    response, requests = counted(proxy, lambda: client.post(path))

    assert page.status_code == response.status_code == 200
    assert shown == {}
    assert requests == {"GetItem": 1, "TransactWriteItems": 1}


def test_opening_an_email_change_link_is_one_get_item_and_one_transact_write_items(proxy):
    client = signed_up_client()
    client.post("/accounts/email/", {"email": "lovelace@example.com", "password": PASSWORD})
    path = path_of(link_in(mails_to("lovelace@example.com")[0]))

    response, requests = counted(proxy, lambda: Client().post(path))

    assert response.status_code == 200
    assert requests == {"GetItem": 1, "TransactWriteItems": 1}


def test_email_change_request_is_one_get_item_and_one_transact_write_items(proxy):
    client = signed_up_client()

    response, requests = counted(
        proxy, lambda: client.post("/accounts/email/", {"email": "lovelace@example.com", "password": PASSWORD})
    )

    assert response.status_code == 302
    assert requests == {"GetItem": 1, "TransactWriteItems": 1}


@pytest.mark.parametrize("email", ["ada@example.com", "nobody@example.com"])
def test_password_reset_request_is_at_most_two_get_item(proxy, email):
    signed_up_client()

    response, requests = counted(proxy, lambda: Client().post("/accounts/password/reset/", {"email": email}))

    assert response.status_code == 302
    assert set(requests) <= {"GetItem"} and requests.get("GetItem", 0) <= 2
