"""An ``app`` client written with ``requests`` against the live server, as a mobile app
speaks the API: the ``X-Session-Token`` header, no cookies, no CSRF."""

import re
import threading
import time

import pyotp
import pytest
import requests

from accounts import store
from tests.mail import link_in, mails_to
from tests.web import PASSWORD, stored_accounts

pytestmark = pytest.mark.dynamodb_local


@pytest.fixture
def transactional_db():
    """pytest-django's live_server asks for this; this project has no SQL database."""


@pytest.fixture
def site(live_server, ddb, settings):
    settings.ACCOUNTS_SITE_URL = live_server.url
    settings.ACCOUNTS_EMAIL_VERIFICATION = "mandatory"
    return live_server.url


class App:
    """A mobile app's API client: it keeps the session token it was last handed."""

    def __init__(self, base_url):
        self.base = f"{base_url}/_allauth/app/v1/"
        self.token = None
        self.http = requests.Session()

    def call(self, method, operation, body=None, headers=None):
        headers = dict(headers or {})
        if self.token:
            headers["X-Session-Token"] = self.token
        response = self.http.request(method, self.base + operation, json=body, headers=headers, timeout=60)
        assert not response.cookies, f"an app gets no cookie: {response.cookies}"
        self.http.cookies.clear()
        token = response.json().get("meta", {}).get("session_token")
        if token:
            self.token = token
        return response


def test_sign_up_verify_log_in_with_totp_list_and_end_sessions_and_log_out(site):
    app, other_device = App(site), App(site)

    signed_up = app.call("POST", "auth/signup", {"email": "ada@example.com", "username": "ada", "password": PASSWORD})
    assert signed_up.status_code == 401
    assert {"id": "verify_email", "is_pending": True} in signed_up.json()["data"]["flows"]

    key = re.search(r"/accounts/verify/([^/]+)/", link_in(mails_to("ada@example.com")[-1])).group(1)
    info = app.call("GET", "auth/email/verify", headers={"X-Email-Verification-Key": key})
    assert info.status_code == 200 and info.json()["data"]["email"] == "ada@example.com"
    # The sign-up this app keeps pending, verified: its login goes on (allauth's verify_email stage).
    logged_in = app.call("POST", "auth/email/verify", {"key": key})
    assert logged_in.status_code == 200, logged_in.text
    assert logged_in.json()["data"]["user"]["username"] == "ada"
    assert (
        other_device.call("POST", "auth/login", {"email": "ada@example.com", "password": PASSWORD}).status_code == 200
    )

    setup = app.call("GET", "account/authenticators/totp")
    assert setup.status_code == 404
    totp = pyotp.TOTP(setup.json()["meta"]["secret"])
    activated = app.call("POST", "account/authenticators/totp", {"code": totp.now()})
    assert activated.status_code == 200, activated.text
    assert activated.json()["meta"]["recovery_codes_generated"] is True

    assert app.call("DELETE", "auth/session").status_code == 401
    app.token = None
    pending = app.call("POST", "auth/login", {"username": "ada", "password": PASSWORD})
    assert pending.status_code == 401
    flow = next(flow for flow in pending.json()["data"]["flows"] if flow.get("is_pending"))
    assert flow["id"] == "mfa_authenticate" and "totp" in flow["types"]
    assert app.call("GET", "auth/session").status_code == 401

    # The next period's code (the one used to set the app up is spent).
    second = app.call("POST", "auth/2fa/authenticate", {"code": totp.at(time.time() + 30)})
    assert second.status_code == 200, second.text
    assert [method["method"] for method in second.json()["data"]["methods"]] == ["password", "mfa"]

    listed = app.call("GET", "auth/sessions").json()["data"]
    assert len(listed) == 2
    other = next(session for session in listed if not session["is_current"])
    remaining = app.call("DELETE", "auth/sessions", {"sessions": [other["id"]]})
    assert remaining.status_code == 200
    assert [session["is_current"] for session in remaining.json()["data"]] == [True]
    assert other_device.call("GET", "auth/session").status_code == 410

    assert app.call("DELETE", "auth/session").status_code == 401
    assert app.call("GET", "auth/session").status_code == 410


def test_the_code_that_turned_the_app_on_does_not_reauthenticate(site):
    # The enrolment stores its code's step as spent (totp_step), not as a TOTP# record: a
    # reauthentication with that code must read it there, as the second step does
    # (protocol/factors.pml, F2: the enrolment counts as the code's use).
    app = App(site)
    app.call("POST", "auth/signup", {"email": "ada@example.com", "username": "ada", "password": PASSWORD})
    key = re.search(r"/accounts/verify/([^/]+)/", link_in(mails_to("ada@example.com")[-1])).group(1)
    assert app.call("POST", "auth/email/verify", {"key": key}).status_code == 200  # logged in
    totp = pyotp.TOTP(app.call("GET", "account/authenticators/totp").json()["meta"]["secret"])
    code = totp.now()
    assert app.call("POST", "account/authenticators/totp", {"code": code}).status_code == 200

    again = app.call("POST", "auth/2fa/reauthenticate", {"code": code})

    assert again.status_code == 400, again.text
    assert again.json()["errors"][0]["code"] == "incorrect_code"


def test_sixteen_concurrent_sign_ups_of_one_address_make_one_account_and_every_loser_an_email_error(site, settings):
    settings.ACCOUNTS_EMAIL_VERIFICATION = "none"
    settings.ACCOUNTS_RATE_LIMITS = False
    barrier = threading.Barrier(16)
    answers = [None] * 16

    def sign_up(index):
        barrier.wait()
        body = {"email": "ada@example.com", "username": f"ada{index}", "password": PASSWORD}
        answers[index] = App(site).call("POST", "auth/signup", body)

    threads = [threading.Thread(target=sign_up, args=(index,)) for index in range(16)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()

    assert [account.email for account in stored_accounts()] == ["ada@example.com"]
    assert sorted(answer.status_code for answer in answers) == [200] + [400] * 15
    for answer in answers:
        if answer.status_code == 400:
            assert [(error["param"], error["code"]) for error in answer.json()["errors"]] == [("email", "email_taken")]


def test_a_verification_link_opened_in_another_session_verifies_and_logs_nobody_in(site):
    app, elsewhere = App(site), App(site)
    app.call("POST", "auth/signup", {"email": "ada@example.com", "username": "ada", "password": PASSWORD})
    key = re.search(r"/accounts/verify/([^/]+)/", link_in(mails_to("ada@example.com")[-1])).group(1)

    verified = elsewhere.call("POST", "auth/email/verify", {"key": key})

    assert verified.status_code == 401
    assert elsewhere.call("GET", "auth/session").status_code == 401
    assert store.is_verified(store.get_by_username("ada"))
