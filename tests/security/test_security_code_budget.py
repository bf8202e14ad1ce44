"""Every code of the authenticator app typed anywhere draws on one budget per account, the
second step's ``mfa_attempt`` with its daily cap (issue 35, finding 1), on DynamoDB Local.
A stolen session guessing through reauthentication (the page or ``auth/2fa/reauthenticate``)
meets the daily cap, and guesses split between a login's second step and reauthentication
count together."""

import time
from types import SimpleNamespace

import pytest
from django.conf import settings as django_settings
from django.test import Client

from accounts import ratelimit
from accounts.mfa.flows import reauthentication
from tests.headless import APIClient
from tests.mfa import code_of, enable_totp, password_login, second_step
from tests.mfa.test_mfa_reauthentication import age
from tests.web import signed_up_client

pytestmark = pytest.mark.dynamodb_local

TOTP_URL = "/accounts/mfa/reauthenticate/totp/"


@pytest.fixture
def clock(monkeypatch):
    """The limiter's clock (only accounts.ratelimit's), stopped 1 s into tomorrow (UTC) and
    moved by the test: ``clock.now``."""
    state = SimpleNamespace(now=(time.time() // 86400 + 1) * 86400 + 1)
    monkeypatch.setattr(ratelimit, "time", SimpleNamespace(time=lambda: state.now))
    return state


def owner_with_totp():
    """Ada's browser, with the authenticator app on, its proof too old for sensitive pages."""
    owner = signed_up_client()
    secret, _ = enable_totp(owner)
    age(owner, 301)
    return owner, secret


def stolen(owner):
    """Another browser with the owner's session cookie alone (not its device cookie)."""
    thief = Client()
    thief.cookies[django_settings.SESSION_COOKIE_NAME] = owner.cookies[django_settings.SESSION_COOKIE_NAME].value
    return thief


def wrong_code(secret, number):
    """A code of the app that no time step around now matches."""
    right = {code_of(secret, time.time() + 30 * step) for step in (-1, 0, 1, 2)}
    return next(code for offset in range(number, number + 10) if (code := f"{offset:06d}") not in right)


def test_a_stolen_session_guessing_through_reauthentication_meets_the_daily_cap(ddb, clock):
    owner, secret = owner_with_totp()
    thief = stolen(owner)

    # Five wrong codes every ten minutes: under the 5-minute rule, never under the daily one.
    answers = []
    for batch in range(4):
        clock.now += 600 if batch else 0
        answers += [thief.post(TOTP_URL, {"code": wrong_code(secret, 5 * batch + n)}).status_code for n in range(5)]
    clock.now += 600
    capped = thief.post(TOTP_URL, {"code": wrong_code(secret, 20)})
    right = thief.post(TOTP_URL, {"code": code_of(secret, time.time() + 30)})

    assert answers == [200] * 20
    assert capped.status_code == 429
    assert capped.context["totp_form"].has_error("__all__", "rate_limited")
    assert right.status_code == 429
    assert thief.get("/accounts/email/").status_code == 302


def test_guesses_at_the_second_step_and_through_reauthentication_share_one_budget(ddb):
    owner, secret = owner_with_totp()
    # Someone who knows the password, at the second step from a browser of their own...
    intruder = Client()
    assert password_login(intruder)["Location"] == "/accounts/mfa/authenticate/"
    at_second_step = [second_step(intruder, wrong_code(secret, n)).status_code for n in range(3)]
    # ... and through the API with the stolen session.
    api = APIClient("browser", stolen(owner))
    reauthenticating = [api.post("auth/2fa/reauthenticate", {"code": wrong_code(secret, n)}) for n in (3, 4)]

    refused_here = api.post("auth/2fa/reauthenticate", {"code": wrong_code(secret, 5)})
    refused_there = second_step(intruder, wrong_code(secret, 6))

    assert at_second_step == [200, 200, 200]
    assert [answer.status_code for answer in reauthenticating] == [400, 400]
    assert refused_here.status_code == 429
    assert refused_there.status_code == 429


def test_the_owners_browser_keeps_its_own_budget(ddb):
    owner, secret = owner_with_totp()
    intruder = Client()
    password_login(intruder)
    for n in range(5):
        second_step(intruder, wrong_code(secret, n))

    response = owner.post(f"{TOTP_URL}?next=/accounts/email/", {"code": code_of(secret, time.time() + 30)})

    assert response["Location"] == "/accounts/email/"


def test_wrong_codes_counted_after_a_right_codes_read_stop_its_reauthentication(ddb, monkeypatch):
    owner, secret = owner_with_totp()
    thief = stolen(owner)
    account_id = owner.session["_auth_user_id"]
    matching_step = reauthentication.totp.matching_step

    def judged_then_guessed_elsewhere(*args):
        found = matching_step(*args)
        for _ in range(5):
            ratelimit.consume(None, "mfa_attempt", key=account_id)
        return found

    monkeypatch.setattr(reauthentication.totp, "matching_step", judged_then_guessed_elsewhere)

    response = thief.post(TOTP_URL, {"code": code_of(secret, time.time() + 30)})

    assert response.status_code == 429
    assert thief.get("/accounts/email/").status_code == 302
