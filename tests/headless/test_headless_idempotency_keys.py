"""``Idempotency-Key`` is the caller's, for one operation, and bound to its first request
(issue 35, finding 7), as payment APIs have it: another caller's request with the same key
gets its own answer; the same caller sending the key again with another body gets a 422 that
says so, never the first request's answer and never a 500 (DynamoDB's
IdempotentParameterMismatchException included); the same request sent again gets the first
answer and makes one change. On DynamoDB Local."""

import threading

import pytest

from accounts import store
from tests.headless import APIClient
from tests.headless.test_headless_providers import SUBJECT, forged, post_token, token_of  # noqa: F401 (a fixture)
from tests.mail import mails_to
from tests.web import stored_accounts

pytestmark = pytest.mark.dynamodb_local

KEY = {"Idempotency-Key": "1"}


def assert_key_reused(response):
    assert response.status_code == 422, response.content
    (error,) = response.json()["errors"]
    assert error["code"] == "idempotency_key_reused"
    assert "Idempotency-Key" in error["message"]


def browser(csrf):
    """A browser's API client holding the CSRF cookie ``csrf`` (what identifies it before
    it logs in)."""
    api = APIClient("browser")
    api.http.cookies["csrftoken"] = csrf
    return api


def signed_up(email="ada@example.com", username="ada"):
    api = APIClient("app")
    assert api.signup(email, username).status_code == 200
    return api


# Another caller's key: its own answer.


def test_another_browsers_signup_with_the_same_key_is_its_own(ddb):
    first = browser("a" * 32).signup("ada@example.com", "ada", headers=KEY)

    second = browser("b" * 32).signup("bob@example.com", "bob", headers=KEY)

    assert first.status_code == second.status_code == 200, second.content
    assert second.json()["data"]["user"]["username"] == "bob"
    assert second.json()["data"]["user"]["id"] != first.json()["data"]["user"]["id"]
    assert len(stored_accounts()) == 2


def test_another_accounts_email_change_with_the_same_key_is_its_own(ddb, mailoutbox):
    ada, bob = signed_up(), signed_up("bob@example.com", "bob")
    assert ada.post("account/email", {"email": "lovelace@example.com"}, headers=KEY).status_code == 200

    response = bob.post("account/email", {"email": "robert@example.com"}, headers=KEY)

    assert response.status_code == 200
    assert store.get_by_username("bob").pending_email == "robert@example.com"
    assert mails_to("robert@example.com")


def pending_provider_signup(forged, subject):  # noqa: F811 (forged: the fixture's value)
    api = APIClient("app")
    assert post_token(api, forged, token_of(forged, sub=subject, email=f"{subject}@example.com")).status_code == 401
    return api


def test_another_provider_signup_with_the_same_key_is_its_own_not_a_500(forged):  # noqa: F811
    first = pending_provider_signup(forged, "first-subject")
    second = pending_provider_signup(forged, "second-subject")
    created = first.post("auth/provider/signup", {"email": "one@example.com", "username": "one"}, headers=KEY)
    assert created.status_code == 200

    response = second.post("auth/provider/signup", {"email": "two@example.com", "username": "two"}, headers=KEY)

    assert response.status_code == 200, response.content
    assert response.json()["data"]["user"]["username"] == "two"
    assert store.get_by_username("two") is not None


# The same caller, the same key, another body: 422.


def test_an_email_change_sent_again_with_the_key_and_another_address_is_a_422(ddb, mailoutbox):
    ada = signed_up()
    assert ada.post("account/email", {"email": "lovelace@example.com"}, headers=KEY).status_code == 200

    response = ada.post("account/email", {"email": "countess@example.com"}, headers=KEY)

    assert_key_reused(response)
    assert store.get_by_username("ada").pending_email == "lovelace@example.com"
    assert mails_to("countess@example.com") == []


def test_a_signup_corrected_and_sent_again_with_its_key_is_a_422(ddb):
    signed_up("ada@example.com", "ada")
    api = browser("c" * 32)
    assert api.signup("grace@example.com", "ada", headers=KEY).status_code == 400

    response = api.signup("grace@example.com", "grace", headers=KEY)

    assert_key_reused(response)
    assert store.get_by_username("grace") is None


def test_a_provider_signup_corrected_and_sent_again_with_its_key_is_a_422_not_a_500(forged):  # noqa: F811
    signed_up("taken@example.com", "taken")
    api = pending_provider_signup(forged, SUBJECT)
    assert (
        api.post("auth/provider/signup", {"email": "new@example.com", "username": "taken"}, headers=KEY).status_code
        == 400
    )

    response = api.post("auth/provider/signup", {"email": "new@example.com", "username": "newcomer"}, headers=KEY)

    assert_key_reused(response)
    assert store.get_by_username("newcomer") is None


def test_two_email_changes_racing_with_one_key_and_two_addresses_make_one_change_and_one_422(ddb, mailoutbox):
    ada = signed_up()
    second = APIClient("app")
    second.token = ada.token
    barrier = threading.Barrier(2)
    answers = {}

    def change(api, email):
        barrier.wait()
        answers[email] = api.post("account/email", {"email": email}, headers=KEY)

    threads = [
        threading.Thread(target=change, args=(ada, "lovelace@example.com")),
        threading.Thread(target=change, args=(second, "countess@example.com")),
    ]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()

    statuses = sorted(answer.status_code for answer in answers.values())
    assert statuses == [200, 422], {email: answer.content for email, answer in answers.items()}
    (made,) = [email for email, answer in answers.items() if answer.status_code == 200]
    assert store.get_by_username("ada").pending_email == made
    assert [
        message.to for message in mailoutbox if "example.com" in message.to[0] and message.to[0] != "ada@example.com"
    ] == [[made]]


# The same request again: the first answer.


def test_an_email_change_sent_again_with_its_key_gets_the_first_answer_and_changes_once(ddb, mailoutbox):
    ada = signed_up()
    first = ada.post("account/email", {"email": "lovelace@example.com"}, headers=KEY)

    again = ada.post("account/email", {"email": "lovelace@example.com"}, headers=KEY)

    assert first.status_code == again.status_code == 200
    assert again.json() == first.json()
    assert len(mails_to("lovelace@example.com")) == 1


def test_a_browser_signup_sent_again_with_its_key_gets_the_first_answer(ddb):
    first = browser("d" * 32).signup(headers=KEY)

    again = browser("d" * 32).signup(headers=KEY)

    assert first.status_code == again.status_code == 200
    assert again.json()["data"]["user"]["id"] == first.json()["data"]["user"]["id"]
    assert len(stored_accounts()) == 1


def test_an_apps_first_request_is_scoped_by_its_body(ddb):
    # An app's sign-up carries no session token yet: nothing but the request identifies
    # it, so the same key with another body is another request, not another's replay.
    first = APIClient("app").signup("ada@example.com", "ada", headers=KEY)

    other = APIClient("app").signup("bob@example.com", "bob", headers=KEY)

    assert first.status_code == other.status_code == 200
    assert other.json()["data"]["user"]["username"] == "bob"
