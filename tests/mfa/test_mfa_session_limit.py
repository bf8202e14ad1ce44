"""ACCOUNTS_MAX_SESSIONS at each way in through a second factor, one login at a time: the
second step of a login and a login with a passkey alone end the account's least recently
seen sessions beyond the limit that they counted, in their one transaction, as a password
login's write does, without a request more (the second step's count comes from the password
step's read; a passkey login's from its read of the account's partition). Concurrent logins
each end the excess they read, so together they may leave more: these tests do not show a
bound under concurrency."""

import time

import pytest
from django.test import Client

from tests.mfa import add_passkey, enable_totp, passkey_login, password_login, second_step
from tests.web import signed_up_client
from tests.web.test_sessions import account_id_of, is_logged_in, session_items

pytestmark = pytest.mark.dynamodb_local


@pytest.fixture
def two_sessions_at_most(settings):
    settings.ACCOUNTS_MAX_SESSIONS = 2
    # Every request refreshes "last seen", so the test can choose the least recently seen.
    settings.ACCOUNTS_SESSION_TOUCH_INTERVAL = 0


def seen_later(client):
    """Make ``client``'s session strictly more recently seen than the others ("last seen" is
    in whole seconds)."""
    time.sleep(1.05)
    assert is_logged_in(client)


def test_a_second_step_beyond_the_session_limit_ends_the_least_recently_seen(ddb, two_sessions_at_most):
    first = signed_up_client()
    _, codes = enable_totp(first)
    second = Client()
    password_login(second)
    assert second_step(second, codes[0])["Location"] == "/accounts/profile/"
    seen_later(second)

    third = Client()
    password_login(third)
    assert second_step(third, codes[1])["Location"] == "/accounts/profile/"

    assert len(session_items(account_id_of(first))) == 2
    assert not is_logged_in(first)
    assert is_logged_in(second) and is_logged_in(third)


def test_a_passkey_login_beyond_the_session_limit_ends_the_least_recently_seen(ddb, two_sessions_at_most):
    first = signed_up_client()
    credential, _ = add_passkey(first)
    second = Client()
    assert passkey_login(second, credential)["Location"] == "/accounts/profile/"
    seen_later(second)

    third = Client()
    assert passkey_login(third, credential)["Location"] == "/accounts/profile/"

    assert len(session_items(account_id_of(first))) == 2
    assert not is_logged_in(first)
    assert is_logged_in(second) and is_logged_in(third)
