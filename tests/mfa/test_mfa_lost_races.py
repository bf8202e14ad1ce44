"""A right code that loses a race is "already used", never "wrong code", and is not counted
against the second step's limit (``mfa_attempt``), on DynamoDB Local: one right recovery code
sent by 16 half-logins lets one in, tells the 15 others it was used, and the next codes work."""

import time

import pytest

from accounts import store
from accounts.mfa import totp
from tests.mfa import code_of, enable_totp, second_step
from tests.mfa.test_mfa_limits import half_logged_in, next_code_of
from tests.web import signed_up_client
from tests.web.test_login_limits import sixteen_at_once

pytestmark = pytest.mark.dynamodb_local

PROFILE, LOGIN = "/accounts/profile/", "/accounts/login/"


def answer_of(response):
    """What a second step answered: where it sent the browser, the code's error, or 429."""
    if response.status_code == 200:
        errors = response.context["form"].errors.as_data()
        return ",".join(error.code or "?" for field in sorted(errors) for error in errors[field])
    return response.get("Location", response.status_code)


def test_one_right_recovery_code_sent_by_16_half_logins_is_accepted_once_and_used_for_the_others(ddb, capsys):
    secret, codes = enable_totp(signed_up_client())
    browsers = [half_logged_in(number) for number in range(16)]

    def send(number):
        # Half of them start later, to read the account after the winner spent the code.
        time.sleep(0.5 * (number % 2))
        return answer_of(second_step(browsers[number], codes[0]))

    answers = sixteen_at_once(send)

    with capsys.disabled():
        print(f"\n16 half-logins, one recovery code: {sorted(answers, key=str)}")
    assert answers.count(PROFILE) == 1
    # Cancelled with the spend (to the login page, told it was used) or read after it (the
    # form again, "already used"): never wrong, never over the limit.
    assert set(answers) - {PROFILE} <= {LOGIN, "already_used"}
    assert second_step(half_logged_in(20), codes[1])["Location"] == PROFILE
    assert second_step(half_logged_in(21), codes[2])["Location"] == PROFILE
    assert second_step(half_logged_in(22), next_code_of(secret))["Location"] == PROFILE


def test_a_used_recovery_code_is_told_used_and_not_counted(ddb, settings):
    settings.ACCOUNTS_RATE_LIMITS = {"mfa_attempt": "1/h/key"}
    _, codes = enable_totp(signed_up_client())
    assert second_step(half_logged_in(1), codes[0])["Location"] == PROFILE
    browser = half_logged_in(2)

    answers = [answer_of(second_step(browser, codes[0])) for _ in range(3)]

    assert answers == ["already_used"] * 3
    assert second_step(browser, codes[1])["Location"] == PROFILE


def test_the_confirming_code_of_the_enrolment_is_told_used_at_login(ddb):
    client = signed_up_client()
    page = client.get("/accounts/mfa/totp/")
    secret = page.context["secret"]
    confirming = code_of(secret)
    assert client.post("/accounts/mfa/totp/", {"code": confirming}).status_code == 200

    # Spent by the enrolment's own write (no record of its own): told used, as a step a
    # sign-in spent is (log in again).
    assert answer_of(second_step(half_logged_in(1), confirming)) == LOGIN
    assert store.get_by_username("ada").totp_step == totp.matching_step(secret, confirming)
