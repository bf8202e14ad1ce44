"""The owner keeps the second step, on DynamoDB Local: its attempts (``mfa_attempt``) are
counted per browser as a password login's are (the device cookie), so wrong codes sent from
elsewhere by someone who knows the password lock out only the browsers without the cookie,
and the owner's browser still signs in with the right code or a recovery code."""

import pytest

from tests.mfa import enable_totp, password_login, second_step
from tests.mfa.test_mfa_limits import half_logged_in, next_code_of, wrong_code_of
from tests.web import signed_up_client
from tests.web.test_login_limits import from_address
from tests.web.test_ratelimit import refused

pytestmark = pytest.mark.dynamodb_local

PROFILE = "/accounts/profile/"


def trusted_browser(code):
    """The owner's browser: it logged in through the second step with ``code`` (which
    gives it the device cookie), then logged out."""
    owner = from_address(7)
    password_login(owner)
    assert second_step(owner, code)["Location"] == PROFILE
    owner.post("/accounts/logout/")
    return owner


def strangers_lock_the_second_step(secret):
    """Five wrong codes from other browsers and addresses: a sixth browser waits."""
    for number in range(5):
        assert second_step(half_logged_in(number), wrong_code_of(secret)).status_code == 200
    assert refused(second_step(half_logged_in(40), wrong_code_of(secret)))


@pytest.mark.parametrize("factor", ["totp", "recovery_code"])
def test_wrong_codes_from_elsewhere_do_not_lock_the_owners_browser_out_of_the_second_step(ddb, factor):
    secret, codes = enable_totp(signed_up_client())
    owner = trusted_browser(codes[1] if factor == "totp" else next_code_of(secret))

    strangers_lock_the_second_step(secret)

    assert password_login(owner)["Location"] == "/accounts/mfa/authenticate/"
    right = next_code_of(secret) if factor == "totp" else codes[0]
    assert second_step(owner, right)["Location"] == PROFILE


def test_the_owners_browser_has_a_limit_of_its_own(ddb):
    secret, codes = enable_totp(signed_up_client())
    owner = trusted_browser(codes[1])
    password_login(owner)

    for _ in range(5):
        assert second_step(owner, wrong_code_of(secret)).status_code == 200

    assert refused(second_step(owner, codes[0]))
    # Its wrong codes were its own: a stranger's browser is not held back by them.
    assert second_step(half_logged_in(41), codes[0])["Location"] == PROFILE
