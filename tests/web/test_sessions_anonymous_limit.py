"""Sessions of nobody are limited per address (issue 26, finding 9): each is a table item
that lives until it expires, so one address may start at most
ACCOUNTS_ANONYMOUS_SESSION_LIMIT of them; over it the answer is 429 and nothing is written."""

import pytest
from django.test import Client

from tests.invariants import scan_everything

pytestmark = pytest.mark.dynamodb_local

FIRST_PAGE = "/accounts/mfa/signup/passkey/"


@pytest.fixture
def passkey_signup(settings):
    # Its first page keeps the address and username in a session of nobody.
    settings.ACCOUNTS_PASSKEY_SIGNUP = True
    settings.ACCOUNTS_ANONYMOUS_SESSION_LIMIT = "3/h/ip"


def start_a_passkey_signup(number, address="198.51.100.7"):
    client = Client(REMOTE_ADDR=address)
    token = client.get(FIRST_PAGE).context["form"]["token"].value()
    return client.post(FIRST_PAGE, {"email": f"user{number}@example.com", "username": f"user{number}", "token": token})


def anonymous_sessions():
    return [item for item in scan_everything() if item["PK"]["S"].startswith("SESSION#")]


def test_an_address_starts_at_most_the_limit_of_anonymous_sessions(ddb, passkey_signup):
    answers = [start_a_passkey_signup(number) for number in range(5)]

    assert [answer.status_code for answer in answers] == [302] * 3 + [429] * 2
    assert int(answers[3]["Retry-After"]) > 0
    assert "sessionid" not in answers[3].cookies
    assert len(anonymous_sessions()) == 3


def test_another_address_has_a_limit_of_its_own(ddb, passkey_signup):
    for number in range(3):
        start_a_passkey_signup(number)

    assert start_a_passkey_signup(9, address="203.0.113.9").status_code == 302


def test_a_session_of_nobody_saved_again_is_not_counted_again(ddb, passkey_signup):
    client = Client(REMOTE_ADDR="198.51.100.7")
    for number in range(5):
        token = client.get(FIRST_PAGE).context["form"]["token"].value()
        answer = client.post(FIRST_PAGE, {"email": f"u{number}@example.com", "username": f"u{number}", "token": token})
        assert answer.status_code == 302

    assert len(anonymous_sessions()) == 1


def test_without_a_limit_every_address_starts_as_many_as_it_likes(ddb, passkey_signup, settings):
    settings.ACCOUNTS_ANONYMOUS_SESSION_LIMIT = None

    assert [start_a_passkey_signup(number).status_code for number in range(5)] == [302] * 5
