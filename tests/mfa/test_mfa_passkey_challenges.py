"""No session item before it is needed (issue 26, finding 9): the challenge of an anonymous
passkey ceremony (a login, a signup) is signed into a cookie, and the sign-in that answers it
records it as used in its own transaction, so it is still single-use."""

import pytest
from django.test import Client

from accounts.mfa import passkeys
from tests import authenticator
from tests.invariants import scan_everything
from tests.mfa import ORIGIN, add_passkey, options
from tests.web import signed_up_client

pytestmark = pytest.mark.dynamodb_local

LOGIN_OPTIONS = "/accounts/mfa/passkey/options/login/"
PASSKEY_LOGIN = "/accounts/mfa/passkey/login/"


def session_items():
    return [item for item in scan_everything() if item["PK"]["S"].startswith("SESSION#")]


def test_a_hundred_cookieless_requests_for_login_options_write_no_session(ddb):
    for _ in range(100):
        response = Client().post(LOGIN_OPTIONS)
        assert response.status_code == 200
        assert passkeys.CHALLENGE_COOKIE in response.cookies

    assert session_items() == []


def test_a_passkey_login_from_a_browser_without_a_session_still_signs_in(ddb):
    credential, _ = add_passkey(signed_up_client())
    visitor = Client()
    answer = authenticator.get(credential, options(visitor, "login"), ORIGIN)

    response = visitor.post(PASSKEY_LOGIN, {"credential": answer})

    assert response["Location"] == "/accounts/profile/"
    assert visitor.get("/accounts/profile/").status_code == 200
    assert response.cookies[passkeys.CHALLENGE_COOKIE].value == ""


def test_an_answer_replayed_by_an_authenticator_without_a_counter_is_refused(ddb):
    # Counter 0 on every use (as many platform passkeys do): only the record of the used
    # challenge stops the same answer from signing in twice.
    credential, _ = add_passkey(signed_up_client())
    visitor = Client()
    answer = authenticator.get(credential, options(visitor, "login"), ORIGIN, counter=0)
    challenge_cookie = visitor.cookies[passkeys.CHALLENGE_COOKIE].value

    first = visitor.post(PASSKEY_LOGIN, {"credential": answer})
    replay = Client()
    replay.cookies[passkeys.CHALLENGE_COOKIE] = challenge_cookie
    again = replay.post(PASSKEY_LOGIN, {"credential": answer}, follow=True)

    assert first["Location"] == "/accounts/profile/"
    assert again.redirect_chain == [("/accounts/login/", 302)]
    assert replay.get("/accounts/profile/").status_code == 302


def test_a_challenge_cookie_of_another_purpose_or_tampered_with_is_refused(ddb):
    credential, _ = add_passkey(signed_up_client())
    visitor = Client()
    answer = authenticator.get(credential, options(visitor, "login"), ORIGIN)
    visitor.cookies[passkeys.CHALLENGE_COOKIE] = visitor.cookies[passkeys.CHALLENGE_COOKIE].value + "x"

    response = visitor.post(PASSKEY_LOGIN, {"credential": answer}, follow=True)

    assert "The passkey request expired." in response.content.decode()


def test_the_passkey_signups_options_leave_its_session_as_it_was(ddb, settings, count_requests):
    settings.ACCOUNTS_PASSKEY_SIGNUP = True
    client = Client()
    page = client.get("/accounts/mfa/signup/passkey/")
    token = page.context["form"]["token"].value()
    client.post("/accounts/mfa/signup/passkey/", {"email": "ada@example.com", "username": "ada", "token": token})
    before = session_items()
    count_requests.reset()

    response = client.post("/accounts/mfa/passkey/options/signup/")

    assert response.status_code == 200
    assert count_requests.counts["PutItem"] == 0
    assert session_items() == before
