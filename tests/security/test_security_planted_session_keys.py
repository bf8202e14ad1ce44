"""A session key far longer than any the site hands out (a 3 kB cookie, or a 3 kB
``X-Session-Token``) names no session: the request is anonymous, never a 500 (issue 35,
finding 8). Anyone who can plant a cookie for a victim's browser (a sibling subdomain, say)
could otherwise break every page for them. DynamoDB refuses a key over 2,048 bytes, so such
a key must never reach it."""

import pytest
from django.conf import settings
from django.test import Client

from accounts import sessions
from tests.headless import APIClient
from tests.web import login, signed_up_client

pytestmark = pytest.mark.dynamodb_local

PLANTED = "k" * 3000


def planted_browser():
    browser = Client()
    browser.cookies[settings.SESSION_COOKIE_NAME] = PLANTED
    return browser


@pytest.mark.parametrize("path,status", [("/accounts/login/", 200), ("/accounts/signup/", 200), ("/", 200)])
def test_a_3_kb_session_cookie_leaves_the_pages_anonymous(ddb, path, status):
    response = planted_browser().get(path)

    assert response.status_code == status


def test_a_3_kb_session_cookie_is_not_logged_in_on_a_private_page(ddb):
    response = planted_browser().get("/accounts/profile/")

    assert response.status_code == 302
    assert response["Location"].startswith("/accounts/login/")


def test_a_browser_with_a_3_kb_session_cookie_can_still_log_in(ddb):
    signed_up_client().post("/accounts/logout/")
    browser = planted_browser()

    response = login(browser, "ada")

    assert response.status_code == 302
    assert browser.get("/accounts/profile/").status_code == 200
    assert len(browser.cookies[settings.SESSION_COOKIE_NAME].value) <= sessions.MAX_KEY_LENGTH


def test_a_3_kb_session_cookie_is_anonymous_on_the_api(ddb):
    api = APIClient("browser", planted_browser())

    response = api.get("auth/session")

    assert response.status_code == 401
    assert response.json()["meta"]["is_authenticated"] is False


def test_a_3_kb_session_token_is_anonymous_on_the_api(ddb):
    api = APIClient("app")
    api.token = PLANTED

    assert api.get("auth/session").status_code == 401
    assert api.get("config").status_code == 200
    response = api.login("nobody", "wrong")
    assert response.status_code == 400


def test_a_key_of_the_longest_length_a_session_has_is_still_read(ddb):
    # The bound leaves room for every key the store makes: an account id and its secret.
    client = signed_up_client()
    key = client.cookies[settings.SESSION_COOKIE_NAME].value

    assert len(key) < sessions.MAX_KEY_LENGTH
    assert sessions.SessionStore(key).get("_auth_user_id") is not None
