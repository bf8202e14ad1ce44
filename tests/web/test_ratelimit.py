"""Rate limits (``accounts.ratelimit``): counters in DynamoDB, shared by every process;
429 with ``Retry-After`` and the form again; a key over ``login_failed`` refuses even the
right password; a success forgets that key's failures."""

import json
import os
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import pytest
from django.contrib.auth.hashers import make_password
from django.core.exceptions import ImproperlyConfigured
from django.test import Client, RequestFactory
from django.utils import translation

from accounts import dynamo, ratelimit, store
from accounts.app_settings import DEFAULT_RATE_LIMITS
from accounts.models import User
from accounts.ratelimit import Counter, RateLimited, Rule
from accounts.tables import TableModel
from tests.web import OTHER_PASSWORD, PASSWORD, login, signup, signup_data

ROOT = Path(__file__).resolve().parents[2]


@pytest.fixture
def ada(ddb):
    account, _ = store.signup("ada@example.com", "ada", make_password(PASSWORD))
    return account


def refused(response):
    return response.status_code == 429 and response.context["form"].has_error("__all__", "rate_limited")


# Settings


def test_rules_in_allauth_notation():
    assert ratelimit.parse_rules("10/m/ip, 5/5m/key,1/2h/user,3/s/ip,1/d/key") == [
        Rule(10, 60, "ip"),
        Rule(5, 300, "key"),
        Rule(1, 7200, "user"),
        Rule(3, 1, "ip"),
        Rule(1, 86400, "key"),
    ]


@pytest.mark.parametrize("bad", ["10/m", "ten/m/ip", "10/w/ip", "10/m/email"])
def test_a_bad_rule_is_refused_with_its_text(bad):
    with pytest.raises(ImproperlyConfigured, match="Bad rate limit"):
        ratelimit.parse_rules(bad)


def test_defaults_as_in_the_issue(settings):
    assert DEFAULT_RATE_LIMITS == {
        "login_failed": "10/m/ip,5/5m/key",
        "signup": "20/m/ip",
        "reset_password": "20/m/ip,5/m/key",
        "change_email": "1/m/user",
        "resend_verification": "1/m/user",
        "mail": "5/m/key",
        "notice": "10/h/key",
        "mfa_attempt": "5/5m/key,20/d/key",
        "reauthenticate": "10/m/user",
        "change_phone": "1/m/user",
        "verify_phone": "1/30s/key,3/m/ip",
        "sms": "3/m/key,10/d/key",
    }
    assert set(ratelimit.limits()) == set(DEFAULT_RATE_LIMITS)


@pytest.mark.parametrize("off", [False, {}])
def test_false_or_empty_turns_every_limit_off(settings, off):
    settings.ACCOUNTS_RATE_LIMITS = off
    assert ratelimit.limits() == {}


def test_a_setting_replaces_the_actions_it_names_and_can_turn_one_off(settings):
    settings.ACCOUNTS_RATE_LIMITS = {"signup": "2/h/ip", "login_failed": None}
    rules = ratelimit.limits()
    assert rules["signup"] == [Rule(2, 3600, "ip")]
    assert "login_failed" not in rules
    assert rules["reset_password"] == [Rule(20, 60, "ip"), Rule(5, 60, "key")]


@pytest.mark.parametrize(("value", "expected"), [("off", "False"), ('{"signup": "1/m/ip"}', "{'signup': '1/m/ip'}")])
def test_the_demo_reads_the_environment_variable(value, expected):
    env = {**os.environ, "DJANGO_DEBUG": "1", "ACCOUNTS_RATE_LIMITS": value}
    code = "import project.settings as s; print(s.ACCOUNTS_RATE_LIMITS)"
    answer = subprocess.run([sys.executable, "-c", code], cwd=ROOT, env=env, capture_output=True, text=True, check=True)
    assert answer.stdout.strip() == expected


def test_the_demo_keeps_the_defaults_when_the_variable_is_unset():
    env = {name: value for name, value in os.environ.items() if name != "ACCOUNTS_RATE_LIMITS"}
    env["DJANGO_DEBUG"] = "1"
    code = "import project.settings as s; print(hasattr(s, 'ACCOUNTS_RATE_LIMITS'))"
    answer = subprocess.run([sys.executable, "-c", code], cwd=ROOT, env=env, capture_output=True, text=True, check=True)
    assert answer.stdout.strip() == "False"


# The client address


def test_client_ip_is_remote_addr_by_default(settings):
    request = RequestFactory().get("/", REMOTE_ADDR="10.0.0.9", HTTP_X_FORWARDED_FOR="6.6.6.6")
    assert ratelimit.client_ip(request) == "10.0.0.9"


def test_client_ip_behind_trusted_proxies_is_read_from_the_right(settings):
    settings.ACCOUNTS_TRUSTED_PROXY_COUNT = 2
    # The client forged 6.6.6.6; the outer proxy saw 203.0.113.7; the inner saw the outer.
    request = RequestFactory().get("/", REMOTE_ADDR="10.0.0.2", HTTP_X_FORWARDED_FOR="6.6.6.6, 203.0.113.7, 10.0.0.1")
    assert ratelimit.client_ip(request) == "203.0.113.7"


def test_a_forwarded_header_while_no_proxy_is_trusted_is_logged_once(settings, caplog, monkeypatch):
    monkeypatch.setattr(ratelimit, "_warned_of_forwarding", False)
    request = RequestFactory().get("/", REMOTE_ADDR="10.0.0.2", HTTP_X_FORWARDED_FOR="203.0.113.7")

    with caplog.at_level("WARNING", logger="accounts.ratelimit"):
        for _ in range(3):
            assert ratelimit.client_ip(request) == "10.0.0.2"

    (warning,) = caplog.records
    assert "X-Forwarded-For" in warning.getMessage() and "ACCOUNTS_TRUSTED_PROXY_COUNT" in warning.getMessage()


def test_no_warning_without_the_header_or_with_a_trusted_proxy(settings, caplog, monkeypatch):
    monkeypatch.setattr(ratelimit, "_warned_of_forwarding", False)
    with caplog.at_level("WARNING", logger="accounts.ratelimit"):
        ratelimit.client_ip(RequestFactory().get("/", REMOTE_ADDR="10.0.0.2"))
        settings.ACCOUNTS_TRUSTED_PROXY_COUNT = 1
        ratelimit.client_ip(RequestFactory().get("/", REMOTE_ADDR="10.0.0.2", HTTP_X_FORWARDED_FOR="203.0.113.7"))

    assert caplog.records == []


@pytest.mark.parametrize(("value", "expected"), [("2", "2"), (None, "0")])
def test_the_demo_reads_the_trusted_proxy_count_from_the_environment(value, expected):
    env = {name: variable for name, variable in os.environ.items() if name != "ACCOUNTS_TRUSTED_PROXY_COUNT"}
    env["DJANGO_DEBUG"] = "1"
    if value is not None:
        env["ACCOUNTS_TRUSTED_PROXY_COUNT"] = value
    code = "import project.settings as s; print(s.ACCOUNTS_TRUSTED_PROXY_COUNT)"
    answer = subprocess.run([sys.executable, "-c", code], cwd=ROOT, env=env, capture_output=True, text=True, check=True)
    assert answer.stdout.strip() == expected


def test_client_ip_with_a_short_forwarded_header_is_remote_addr(settings):
    settings.ACCOUNTS_TRUSTED_PROXY_COUNT = 2
    request = RequestFactory().get("/", REMOTE_ADDR="10.0.0.2", HTTP_X_FORWARDED_FOR="203.0.113.7")
    assert ratelimit.client_ip(request) == "10.0.0.2"


# The sliding window


def counter(amount, period, previous, current):
    counter = Counter("signup", Rule(amount, period, "ip"), "x")
    counter.previous, counter.current = previous, current
    return counter


def test_the_estimate_weighs_the_previous_window_by_its_overlap():
    assert counter(10, 60, previous=8, current=2).estimate(now=6015) == pytest.approx(8 * 0.75 + 2)


def test_retry_after_is_zero_while_there_is_room():
    assert counter(5, 300, previous=0, current=4).retry_after(now=3000) == 0


def test_retry_after_waits_for_the_previous_window_to_weigh_less():
    # 4 of 5 used in the previous window, 1 now: one more fits when 4 * (1 - f) <= 3.
    assert counter(5, 60, previous=4, current=1).retry_after(now=6000) == 15


def test_retry_after_waits_into_the_next_window_when_this_one_is_full():
    # 5 of 5 this window, 10 s in: 50 s to its end, then until 5 * (1 - g) <= 4.
    assert counter(5, 60, previous=0, current=5).retry_after(now=6010) == 50 + 12


# How long to wait, in words (never "0 minutes")


@pytest.mark.parametrize(
    ("seconds", "words"),
    [(1, "1 second"), (27, "27 seconds"), (59, "59 seconds"), (60, "1 minute"), (61, "2 minutes"), (300, "5 minutes")],
)
def test_the_wait_is_said_in_seconds_under_a_minute_else_in_whole_minutes(seconds, words):
    error = RateLimited("login_failed", seconds).validation_error()

    # Django writes "2\xa0minutes" (a no-break space), so that the number stays with its unit.
    text = (error.message % error.params).replace("\xa0", " ")
    assert text == f"Too many attempts. Please wait {words} before trying again."


@pytest.mark.parametrize(
    ("language", "seconds", "words"),
    [
        ("fr", 27, "27 secondes"),
        ("ja", 27, "27秒"),
        ("tr", 27, "27 saniye"),
        ("fr", 1, "1 seconde"),
        ("ja", 120, "2分"),
    ],
)
def test_the_wait_is_translated(language, seconds, words):
    with translation.override(language):
        error = RateLimited("login_failed", seconds).validation_error()
        text = (str(error.message) % error.params).replace("\xa0", " ")

    assert words in text


# One unit test per action name, on DynamoDB Local


def request_from(ip="192.0.2.1", user=None):
    request = RequestFactory().post("/", REMOTE_ADDR=ip)
    if user is not None:
        request.user = user
    return request


@pytest.mark.dynamodb_local
def test_signup_limit_counts_per_address(ddb, settings):
    settings.ACCOUNTS_RATE_LIMITS = {"signup": "2/m/ip"}
    ratelimit.consume(request_from(), "signup")
    ratelimit.consume(request_from(), "signup")
    with pytest.raises(RateLimited) as raised:
        ratelimit.consume(request_from(), "signup")
    assert 1 <= raised.value.retry_after <= 120
    ratelimit.consume(request_from("192.0.2.2"), "signup")


@pytest.mark.dynamodb_local
def test_reset_password_limit_counts_per_address_and_per_key(ddb):
    for _ in range(5):
        ratelimit.consume(request_from(), "reset_password", key="ada@example.com")
    with pytest.raises(RateLimited):
        ratelimit.consume(request_from("192.0.2.2"), "reset_password", key="ada@example.com")
    ratelimit.consume(request_from(), "reset_password", key="grace@example.com")


@pytest.mark.dynamodb_local
@pytest.mark.parametrize("action", ["change_email", "resend_verification"])
def test_once_a_minute_per_user(ddb, ada, action):
    user = User.from_account(ada)
    ratelimit.consume(request_from(user=user), action)
    with pytest.raises(RateLimited):
        ratelimit.consume(request_from("192.0.2.9", user=user), action)
    # Another user is not held back, nor is an anonymous request (no user, no rule).
    ratelimit.consume(request_from(user=User(id="someone-else")), action)
    ratelimit.consume(request_from(), action)


@pytest.mark.dynamodb_local
def test_login_failed_counts_failures_only_and_a_success_forgets_the_key(ddb):
    for _ in range(5):
        attempt = ratelimit.Attempt(request_from(), "login_failed", key="ada")
        attempt.check()
        attempt.fail()
    with pytest.raises(RateLimited):
        ratelimit.Attempt(request_from(), "login_failed", key="ada").check()
    ratelimit.Attempt(request_from(), "login_failed", key="grace").check()


@pytest.mark.dynamodb_local
def test_a_refused_attempt_is_taken_back(ddb, settings, count_requests):
    settings.ACCOUNTS_RATE_LIMITS = {"signup": "1/m/ip"}
    ratelimit.consume(request_from(), "signup")
    for _ in range(3):
        with pytest.raises(RateLimited):
            ratelimit.consume(request_from(), "signup")
    [item] = [raw for raw in TableModel._get_connection().scan()["Items"] if raw["PK"]["S"].startswith("RATE#")]
    counts = [int(value["N"]) for name, value in item.items() if name.startswith("w")]
    assert sum(counts) == 1


def counter_items():
    return [raw for raw in TableModel._get_connection().scan()["Items"] if raw["SK"]["S"].startswith("RATE")]


def window_counts(raw):
    return {name: int(value["N"]) for name, value in raw.items() if name.startswith("w")}


@pytest.mark.dynamodb_local
def test_an_attempt_over_the_current_window_is_refused_by_its_guard_writing_nothing(ddb, settings, count_requests):
    settings.ACCOUNTS_RATE_LIMITS = {"signup": "1/h/ip"}
    ratelimit.consume(request_from(), "signup")
    count_requests.reset()

    with pytest.raises(RateLimited):
        ratelimit.consume(request_from(), "signup")

    # One conditional UpdateItem, refused: no write to take back.
    assert dict(count_requests.counts) == {"UpdateItem": 1}


def window_start(period):
    """The start of a window some way ahead: its items' expiry has not passed, so DynamoDB
    Local's TTL sweep leaves them alone."""
    return (int(time.time()) // period + 1000) * period


@pytest.mark.dynamodb_local
def test_the_previous_windows_weight_refuses_and_the_count_is_taken_back(ddb):
    counter = Counter("signup", Rule(2, 100, "ip"), "192.0.2.1")
    start = window_start(100)
    assert counter.count(start - 10) and counter.count(start - 1)
    # 10 s into the next window the previous window's 2 attempts still weigh 1.8.
    assert counter.count(start + 10) is False

    assert counter.retry_after(start + 10) == 40
    [item] = counter_items()
    window = start // 100
    assert window_counts(item) == {f"w{window - 1}": 2, f"w{window}": 0}


@pytest.mark.dynamodb_local
def test_a_take_back_after_the_counter_was_forgotten_leaves_no_negative_count(ddb):
    counter = Counter("login_failed", Rule(2, 3600, "key"), "ada", account_id="a1")
    now = window_start(3600) + 0.5
    assert counter.count(now)

    ratelimit.forget_account("a1")
    counter.take_back(now)

    assert counter_items() == []
    assert [counter.count(now), counter.count(now), counter.count(now)] == [True, True, False]


@pytest.mark.dynamodb_local
def test_the_windows_of_a_counter_that_outlived_its_expiry_are_swept(ddb):
    counter = Counter("signup", Rule(5, 60, "ip"), "192.0.2.1")
    now = window_start(60) + 10.0
    window = int(now // 60)
    stale = {f"w{window - age}": {"N": "5"} for age in (3, 7, 40)}
    # Expired, but TTL (days late on AWS) had not deleted it yet.
    dynamo.call(
        "put_item", TableName=dynamo.table_name(), Item={**counter.key, **stale, "expires": {"N": str(int(now) - 100)}}
    )

    assert counter.count(now)

    [item] = counter_items()
    assert window_counts(item) == {f"w{window}": 1}


@pytest.mark.dynamodb_local
def test_a_refusal_by_a_later_rule_takes_back_the_earlier_counts(ddb, settings):
    settings.ACCOUNTS_RATE_LIMITS = {"reset_password": "3/h/ip,1/h/key"}
    ratelimit.consume(request_from(), "reset_password", key="UNIQ#EMAIL#ada@example.com")
    with pytest.raises(RateLimited):
        ratelimit.consume(request_from(), "reset_password", key="UNIQ#EMAIL#ada@example.com")

    # The refused attempt left nothing on the address's counter: two more fit, not one.
    ratelimit.consume(request_from(), "reset_password", key="UNIQ#EMAIL#grace@example.com")
    ratelimit.consume(request_from(), "reset_password", key="UNIQ#EMAIL#alan@example.com")
    with pytest.raises(RateLimited):
        ratelimit.consume(request_from(), "reset_password", key="UNIQ#EMAIL#joan@example.com")


@pytest.mark.dynamodb_local
def test_counters_are_ignored_by_the_audit(ddb, ada):
    from accounts import audit

    ratelimit.consume(request_from(), "signup")
    ratelimit.Attempt(request_from(), "login_failed", key="ada").check()
    ratelimit.Counter("login_failed", Rule(5, 300, "key"), ada.id, account_id=ada.id).count(time.time())
    assert audit.run_audit().consistent


# On the pages


@pytest.mark.dynamodb_local
def test_six_failed_logins_then_the_right_password_is_refused(ada):
    answers = [login(Client(), "ada", OTHER_PASSWORD) for _ in range(6)]
    assert [answer.status_code for answer in answers] == [200] * 5 + [429]

    right = login(Client(), "ada")

    assert refused(right)
    assert int(right["Retry-After"]) > 0
    assert "Too many attempts. Please wait" in right.content.decode()
    assert "_auth_user_id" not in right.wsgi_request.session


@pytest.mark.dynamodb_local
def test_a_success_clears_the_failures_of_its_key(ada):
    for _ in range(4):
        login(Client(), "ada", OTHER_PASSWORD)
    assert login(Client(), "ada").status_code == 302
    for _ in range(4):
        assert login(Client(), "ada", OTHER_PASSWORD).status_code == 200

    assert login(Client(), "ada").status_code == 302


@pytest.mark.dynamodb_local
def test_failed_logins_from_one_address_are_limited_across_names(ada):
    for number in range(10):
        assert login(Client(), f"nobody{number}", OTHER_PASSWORD).status_code == 200

    assert refused(login(Client(), "ada"))
    assert login(Client(REMOTE_ADDR="192.0.2.50"), "ada").status_code == 302


@pytest.mark.dynamodb_local
def test_signup_over_the_limit_is_429_with_the_form_as_typed(ddb, settings):
    settings.ACCOUNTS_RATE_LIMITS = {"signup": "1/m/ip"}
    assert signup(Client()).status_code == 302
    client = Client()
    data = signup_data(client, "grace@example.com", "grace")

    response = client.post("/accounts/signup/", data)

    assert refused(response)
    assert response["Retry-After"]
    assert response.context["form"]["username"].value() == "grace"
    assert store.get_by_username("grace") is None


@pytest.mark.dynamodb_local
def test_no_limit_when_turned_off(ada, settings):
    settings.ACCOUNTS_RATE_LIMITS = False
    for _ in range(7):
        login(Client(), "ada", OTHER_PASSWORD)
    assert login(Client(), "ada").status_code == 302


LOGIN_SCRIPT = textwrap.dedent(
    """
    import json, os, sys
    os.environ["DJANGO_SETTINGS_MODULE"] = "tests.settings"
    import django
    django.setup()
    from django.conf import settings
    from django.test.utils import setup_test_environment
    settings.ACCOUNTS_ENDPOINT_URL, settings.ACCOUNTS_TABLE_NAME = sys.argv[1], sys.argv[2]
    from accounts.tables import configure
    configure()
    setup_test_environment()
    from django.test import Client
    answers = [
        Client().post("/accounts/login/", {"username": "ada", "password": password}).status_code
        for password in sys.argv[3:]
    ]
    print(json.dumps(answers))
    """
)


def logins_in_another_process(ddb, *passwords):
    """The status of each login, sent by a Django process of its own."""
    args = [sys.executable, "-c", LOGIN_SCRIPT, ddb.endpoint_url, TableModel.Meta.table_name, *passwords]
    answer = subprocess.run(args, cwd=ROOT, capture_output=True, text=True, timeout=120)
    assert answer.returncode == 0, answer.stderr
    return json.loads(answer.stdout.strip().splitlines()[-1])


# The other processes' counters are written where the plugin cannot see them.
@pytest.mark.slow  # starts other processes
@pytest.mark.dynamodb_local
@pytest.mark.accounts_table_emptied
def test_two_processes_share_one_limit(ddb, ada):
    first = logins_in_another_process(ddb, *[OTHER_PASSWORD] * 3)
    second = logins_in_another_process(ddb, *[OTHER_PASSWORD] * 3, PASSWORD)

    # 5 failures in all: the second process refuses the 6th attempt, the right password.
    assert first == [200, 200, 200]
    assert second == [200, 200, 429, 429]
