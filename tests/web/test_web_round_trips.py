"""Requests per page, counted by a proxy in front of DynamoDB Local.

Goals (issues 4, 10, 17 and 18): signup exactly one TransactWriteItems plus the session's
write (issue 30: a TransactWriteItems too, with the session slot it takes); login from a browser that logged in before at most 4 requests (the lock, the
account with its sessions, its counter, the session write), also when it ends the oldest
session beyond ACCOUNTS_MAX_SESSIONS, and a refused attempt hashes nothing; any authenticated page at most 1 request (the session and
the account read together); logout and ending the other sessions at most 2; email and
username change at most 2 requests with exactly one TransactWriteItems; deletion at most 4;
never a Scan, and a Query only of the person's own account partition. Every mail counts
against the ``mail`` limit of its address: one UpdateItem per mail.
"""

import time

import pytest
from django.test import Client

from tests.mail import link_in, mails_to, path_of
from tests.web import OTHER_PASSWORD, PASSWORD, login, signed_up_client, signup_data

pytestmark = pytest.mark.dynamodb_local


def counted(proxy, send):
    """The response of ``send()`` and the DynamoDB requests it cost."""
    proxy.reset()
    response = send()
    return response, proxy.snapshot()


def test_the_proxy_sees_what_the_app_sends(proxy):
    signed_up_client()

    # The signup limit's counter, signup, the new session with its session slot (one
    # transaction), and the welcome page (the profile, which lists the sessions).
    assert proxy.snapshot() == {"UpdateItem": 1, "TransactWriteItems": 2, "Query": 1}


def test_signup_is_the_limit_one_transact_write_items_and_the_session_put(proxy):
    client = Client()
    data = signup_data(client)

    response, requests = counted(proxy, lambda: client.post("/accounts/signup/", data))

    assert response.status_code == 302
    # The new session is written with the session slot it takes, in one transaction.
    assert requests == {"UpdateItem": 1, "TransactWriteItems": 2}


def test_signup_without_rate_limits_is_one_transact_write_items_and_the_session_put(proxy, settings):
    settings.ACCOUNTS_RATE_LIMITS = False
    client = Client()
    data = signup_data(client)

    response, requests = counted(proxy, lambda: client.post("/accounts/signup/", data))

    assert response.status_code == 302
    assert requests == {"TransactWriteItems": 2}


def test_anonymous_signup_and_login_pages_cost_nothing(proxy):
    client = Client()

    for url in ("/", "/accounts/signup/", "/accounts/login/"):
        response, requests = counted(proxy, lambda url=url: client.get(url))
        assert response.status_code == 200
        assert requests == {}


def test_rejected_signup_costs_one_transact_write_items(proxy):
    signed_up_client()
    client = Client()
    data = signup_data(client)

    response, requests = counted(proxy, lambda: client.post("/accounts/signup/", data))

    assert response.status_code == 200
    assert requests == {"UpdateItem": 1, "TransactWriteItems": 1}


def test_second_post_of_the_same_signup_costs_a_transaction_and_one_read(proxy):
    data = signup_data(Client())
    Client().post("/accounts/signup/", data)

    response, requests = counted(proxy, lambda: Client().post("/accounts/signup/", data))

    assert response.status_code == 302
    # The new session guesses the first session slot free (no read of the partition), but
    # the first post's session holds it: the guard cancels that write, and the partition's
    # Query chooses the slot of the session written again (two requests more).
    assert requests == {"UpdateItem": 1, "TransactWriteItems": 3, "GetItem": 1, "Query": 1}


@pytest.mark.parametrize("login_name", ["ada", "ADA@example.com"])
def test_login_from_a_browser_that_logged_in_before_is_four_requests(proxy, login_name):
    client = signed_up_client()
    client.post("/accounts/logout/")

    response, requests = counted(proxy, lambda: login(client, login_name))

    assert response.status_code == 302
    # The lock item, the account with its sessions (ACCOUNTS_MAX_SESSIONS), the attempt
    # counted on that browser's counter, the session written with its session slot and the
    # counter deleted (one transaction).
    assert requests == {"GetItem": 1, "Query": 1, "UpdateItem": 1, "TransactWriteItems": 1}


def test_login_from_a_new_browser_counts_on_the_account_and_the_address(proxy):
    signed_up_client()

    response, requests = counted(proxy, lambda: login(Client(), "ada"))

    assert response.status_code == 302
    # The lock, and the account with its sessions; the attempt counted on the account's and
    # the address's counters before the password is checked, taken back from the
    # address's; the session written with its session slot and the account's counter
    # deleted (one transaction).
    assert requests == {"GetItem": 1, "Query": 1, "UpdateItem": 3, "TransactWriteItems": 1}


def test_failed_login_is_counted_before_the_password_is_checked(proxy):
    signed_up_client()

    wrong_password, wrong_password_requests = counted(proxy, lambda: login(Client(), "ada", OTHER_PASSWORD))
    unknown, unknown_requests = counted(proxy, lambda: login(Client(), "nobody"))

    assert wrong_password.status_code == unknown.status_code == 200
    # The counters of the account (or of the unknown name's lock key) and of the address.
    assert wrong_password_requests == {"GetItem": 1, "Query": 1, "UpdateItem": 2}
    assert unknown_requests == {"GetItem": 1, "UpdateItem": 2}


def clear_of_a_window_boundary(period, margin=20):
    """Wait, when a rate counter's fixed window of ``period`` seconds ends within
    ``margin``, for the next one: attempts that straddle two windows are refused by the
    previous window's weight, which takes the count back (a request more)."""
    left = period - time.time() % period
    if left < margin:
        time.sleep(left + 0.1)


def test_a_refused_login_is_one_update_after_the_lookup(proxy):
    clear_of_a_window_boundary(5 * 60)  # login_failed's per-account rule: 5/5m/key
    signed_up_client()
    for _ in range(5):
        login(Client(), "ada", OTHER_PASSWORD)

    response, requests = counted(proxy, lambda: login(Client(), "ada"))

    assert response.status_code == 429
    # The account's counter refuses it by its condition: nothing written, nothing hashed.
    assert requests == {"GetItem": 1, "Query": 1, "UpdateItem": 1}


def test_login_without_rate_limits_is_the_lock_the_account_with_its_sessions_and_the_session_put(proxy, settings):
    settings.ACCOUNTS_RATE_LIMITS = {}
    signed_up_client()

    response, requests = counted(proxy, lambda: login(Client(), "ada"))

    assert response.status_code == 302
    assert requests == {"GetItem": 1, "Query": 1, "TransactWriteItems": 1}


def test_a_login_beyond_the_session_limit_ends_the_oldest_in_its_own_write(proxy, settings):
    settings.ACCOUNTS_MAX_SESSIONS = 2
    signed_up_client()
    login(Client(), "ada")

    response, requests = counted(proxy, lambda: login(Client(), "ada"))

    assert response.status_code == 302
    # As any login from a new browser: the oldest session's delete rides in the new one's
    # transaction, which takes its session slot.
    assert requests == {"GetItem": 1, "Query": 1, "UpdateItem": 3, "TransactWriteItems": 1}


def test_a_login_with_signed_cookie_sessions_reads_the_account_alone(proxy, settings):
    settings.SESSION_ENGINE = "django.contrib.sessions.backends.signed_cookies"
    signed_up_client()

    response, requests = counted(proxy, lambda: login(Client(), "ada"))

    assert response.status_code == 302
    # The lock and the account alone (no session items to count); the counters as any
    # login from a new browser, the account's deleted by itself (no session write).
    assert requests == {"GetItem": 2, "UpdateItem": 3, "BatchWriteItem": 1}


@pytest.mark.parametrize(
    "url",
    ["/", "/accounts/email/", "/accounts/username/", "/accounts/password/", "/accounts/delete/"],
)
def test_authenticated_page_is_one_batch_get_item_of_session_and_account(proxy, url):
    client = signed_up_client()

    response, requests = counted(proxy, lambda: client.get(url))

    assert response.status_code == 200
    assert requests == {"BatchGetItem": 1}


def test_profile_with_its_session_list_is_one_query(proxy):
    client = signed_up_client()
    login(Client(), "ada")

    response, requests = counted(proxy, lambda: client.get("/accounts/profile/"))

    assert len(response.context["sessions"]) == 2
    assert requests == {"Query": 1}


def test_logout_is_the_session_read_and_its_delete(proxy):
    client = signed_up_client()

    response, requests = counted(proxy, lambda: client.post("/accounts/logout/"))

    assert response.status_code == 302
    assert requests == {"BatchGetItem": 1, "DeleteItem": 1}


def test_ending_the_other_sessions_is_one_query_and_one_transaction(proxy):
    client = signed_up_client()
    for _ in range(3):
        login(Client(), "ada")

    response, requests = counted(proxy, lambda: client.post("/accounts/sessions/logout-others/"))

    assert response.status_code == 302
    assert requests == {"Query": 1, "TransactWriteItems": 1}


# Each change counts its current password against reauthenticate (one UpdateItem). An email
# change request also counts its change_email rate limit, and its two mails (the link, the
# notice to the old address) the mail limit: four UpdateItem; a username change its notice.
@pytest.mark.parametrize(
    ("url", "data", "limit"),
    [
        ("/accounts/email/", {"email": "lovelace@example.com", "password": PASSWORD}, {"UpdateItem": 4}),
        ("/accounts/username/", {"username": "lovelace", "password": PASSWORD}, {"UpdateItem": 2}),
    ],
)
def test_change_is_one_batch_get_item_and_one_transact_write_items(proxy, url, data, limit):
    client = signed_up_client()

    response, requests = counted(proxy, lambda: client.post(url, data))

    assert response.status_code == 302
    assert requests == {"BatchGetItem": 1, "TransactWriteItems": 1, **limit}


def test_password_change_also_ends_the_sessions_and_puts_this_one_anew(proxy):
    client = signed_up_client()
    data = {"old_password": PASSWORD, "new_password1": OTHER_PASSWORD, "new_password2": OTHER_PASSWORD}

    response, requests = counted(proxy, lambda: client.post("/accounts/password/", data))

    assert response.status_code == 302
    # The session's read, the change, the Query and delete of every session, the new session
    # (which deletes none again) with the session slot the old one held, the old password's
    # count against reauthenticate, and the budget of the notice to the account's address.
    assert requests == {"BatchGetItem": 1, "TransactWriteItems": 2, "Query": 1, "BatchWriteItem": 1, "UpdateItem": 2}


def test_delete_also_ends_the_sessions(proxy):
    client = signed_up_client()

    response, requests = counted(proxy, lambda: client.post("/accounts/delete/", {"password": PASSWORD}))

    assert response.status_code == 302
    # The password's count against reauthenticate; the logout that follows deletes no session
    # again: 5 requests.
    assert requests == {"BatchGetItem": 1, "TransactWriteItems": 1, "Query": 1, "BatchWriteItem": 1, "UpdateItem": 1}


def test_refused_email_change_is_one_batch_get_item_and_one_transact_write_items(proxy):
    signed_up_client("grace@example.com", "grace")
    client = signed_up_client()

    response, requests = counted(
        proxy, lambda: client.post("/accounts/email/", {"email": "grace@example.com", "password": PASSWORD})
    )

    assert response.context["form"].has_error("email", "email_taken")
    # + the password's count against reauthenticate, and the change_email limit
    assert requests == {"BatchGetItem": 1, "TransactWriteItems": 1, "UpdateItem": 2}


def test_a_whole_visit_never_scans(proxy):
    client = signed_up_client()
    client.post("/accounts/email/", {"email": "lovelace@example.com", "password": PASSWORD})
    client.post("/accounts/username/", {"username": "lovelace", "password": PASSWORD})
    client.post("/accounts/logout/")
    login(client, "lovelace@example.com")
    client.post("/accounts/delete/", {"password": PASSWORD})

    operations = set(proxy.snapshot())
    assert "Scan" not in operations
    assert operations <= {
        "GetItem",
        "BatchGetItem",
        "Query",
        "PutItem",
        "UpdateItem",
        "DeleteItem",
        "BatchWriteItem",
        "TransactWriteItems",
    }


# Email ownership (issue 9): sign-up stays one transaction; a link is one read and one
# transaction; a reset request at most two reads.


def test_mandatory_signup_is_exactly_one_transact_write_items(proxy, settings):
    settings.ACCOUNTS_EMAIL_VERIFICATION = "mandatory"
    client = Client()
    data = signup_data(client)

    response, requests = counted(proxy, lambda: client.post("/accounts/signup/", data))

    assert response["Location"] == "/accounts/verify/sent/"
    # The signup limit's and the mail limit's counters, the anonymous session remembering
    # where the link went, and (enumeration prevention, on in this mode) the address's lock,
    # read to choose the mail: the link, or its owner's notice.
    assert requests == {"TransactWriteItems": 1, "UpdateItem": 2, "PutItem": 1, "GetItem": 1}


def test_opening_a_verification_link_is_one_get_item_and_one_transact_write_items(proxy, settings):
    settings.ACCOUNTS_EMAIL_VERIFICATION = "mandatory"
    Client().post("/accounts/signup/", signup_data(Client()))
    path = path_of(link_in(mails_to("ada@example.com")[0]))
    client = Client()

    page, shown = counted(proxy, lambda: client.get(path))
    response, requests = counted(proxy, lambda: client.post(path))

    assert page.status_code == response.status_code == 200
    assert shown == {"GetItem": 1}  # the account the page names
    assert requests == {"GetItem": 1, "TransactWriteItems": 1}


def test_opening_an_email_change_link_is_one_get_item_and_one_transact_write_items(proxy):
    client = signed_up_client()
    client.post("/accounts/email/", {"email": "lovelace@example.com", "password": PASSWORD})
    path = path_of(link_in(mails_to("lovelace@example.com")[0]))

    response, requests = counted(proxy, lambda: Client().post(path))

    assert response.status_code == 200
    assert requests == {"GetItem": 1, "TransactWriteItems": 1, "UpdateItem": 1}  # + the notice's mail limit


def test_email_change_request_is_one_batch_get_item_and_one_transact_write_items(proxy):
    client = signed_up_client()

    response, requests = counted(
        proxy, lambda: client.post("/accounts/email/", {"email": "lovelace@example.com", "password": PASSWORD})
    )

    assert response.status_code == 302
    # + the password's count against reauthenticate, the change_email limit, and the mail
    # limit of the link and of the notice
    assert requests == {"BatchGetItem": 1, "TransactWriteItems": 1, "UpdateItem": 4}


@pytest.mark.parametrize("email", ["ada@example.com", "nobody@example.com"])
def test_password_reset_request_is_its_limit_and_at_most_two_get_item(proxy, email):
    signed_up_client()

    response, requests = counted(proxy, lambda: Client().post("/accounts/password/reset/", {"email": email}))

    assert response.status_code == 302
    # The reset_password limit's two counters (the address asking, the address asked for),
    # and the mail limit of the link's address when a link is sent.
    assert requests.pop("UpdateItem") == (3 if email == "ada@example.com" else 2)
    assert set(requests) <= {"GetItem"} and requests.get("GetItem", 0) <= 2
