"""Sessions end after ACCOUNTS_SESSION_IDLE_TIMEOUT of inactivity and after an absolute
lifetime (SESSION_COOKIE_AGE from the login), with a controllable clock (tests/clocks.py);
inactivity is tracked without a write on every request."""

import pytest

from accounts import sessions
from tests.web import signed_up_client

pytestmark = pytest.mark.dynamodb_local

PROFILE = "/accounts/profile/"
HOUR = 3600


def is_logged_in(client):
    return client.get(PROFILE).status_code == 200


@pytest.fixture
def clock(clocks):
    clocks.stop()
    return clocks


def test_a_session_idle_past_the_timeout_has_ended(ddb, clock):
    client = signed_up_client()
    clock.advance(12 * HOUR + 1)

    assert not is_logged_in(client)


def test_a_session_idle_just_under_the_timeout_lives(ddb, clock):
    client = signed_up_client()
    clock.advance(12 * HOUR - 1)

    assert is_logged_in(client)


def test_a_session_in_use_outlives_the_idle_timeout(ddb, settings, clock):
    settings.ACCOUNTS_SESSION_IDLE_TIMEOUT = HOUR
    client = signed_up_client()

    for _ in range(6):  # 3 hours in all, a request every half hour
        clock.advance(HOUR / 2)
        assert is_logged_in(client)


def test_requests_within_the_touch_interval_write_nothing(ddb, settings, clock, count_requests):
    settings.ACCOUNTS_SESSION_IDLE_TIMEOUT = HOUR
    client = signed_up_client()
    count_requests.reset()

    for _ in range(10):  # 25 minutes: under half the idle timeout
        clock.advance(150)
        assert is_logged_in(client)
    untouched = count_requests.counts["PutItem"]
    clock.advance(HOUR / 2 - 1500)
    assert is_logged_in(client)

    assert untouched == 0
    assert count_requests.counts["PutItem"] == 1


def test_the_touch_interval_is_at_most_half_the_idle_timeout(settings):
    settings.ACCOUNTS_SESSION_IDLE_TIMEOUT = HOUR
    settings.ACCOUNTS_SESSION_TOUCH_INTERVAL = None
    assert sessions.touch_interval() == HOUR / 2
    settings.ACCOUNTS_SESSION_TOUCH_INTERVAL = 60
    assert sessions.touch_interval() == 60
    settings.ACCOUNTS_SESSION_IDLE_TIMEOUT = None
    assert sessions.touch_interval() == 60


def test_a_session_in_use_ends_at_its_absolute_lifetime(ddb, settings, clock):
    settings.SESSION_COOKIE_AGE = 4 * HOUR
    settings.ACCOUNTS_SESSION_IDLE_TIMEOUT = HOUR
    client = signed_up_client()

    for _ in range(7):  # 3.5 hours, a request every half hour: each refreshes it
        clock.advance(HOUR / 2)
        assert is_logged_in(client)
    clock.advance(HOUR / 2 + 1)

    assert not is_logged_in(client)


def test_without_an_idle_timeout_a_session_lives_to_its_absolute_lifetime(ddb, settings, clock):
    settings.ACCOUNTS_SESSION_IDLE_TIMEOUT = None
    client = signed_up_client()
    clock.advance(13 * 24 * HOUR)

    assert is_logged_in(client)


def test_an_idle_session_is_not_listed_among_the_accounts_sessions(ddb, settings, clock):
    settings.ACCOUNTS_SESSION_IDLE_TIMEOUT = HOUR
    idle = signed_up_client()
    account_id = idle.cookies["sessionid"].value.rpartition(".")[0]
    clock.advance(HOUR + 1)

    assert sessions.list_sessions(account_id) == []
