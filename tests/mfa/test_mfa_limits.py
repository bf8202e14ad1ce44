"""The second step's limit, ``mfa_attempt``, on DynamoDB Local: concurrent wrong codes cannot
outrun it, wrong codes counted after a right code's read still stop it (its transaction
checks the counters), a busy DynamoDB is a 503 whatever the code, and a login through a
second factor or a passkey trusts the browser (its device cookie) as a password login does."""

import time
from types import SimpleNamespace

import pytest
from django.conf import settings as django_settings
from django.test import Client

from accounts import devices, dynamo, ratelimit, store
from accounts.mfa import totp
from accounts.mfa.flows import login as login_flow
from accounts.tables import account_pk, dynamodb_client, plain_client
from tests import authenticator
from tests.mail import link_in, mails_to, path_of
from tests.mfa import ORIGIN, add_passkey, code_of, enable_totp, options, passkey_login, password_login, second_step
from tests.web import OTHER_PASSWORD, PASSWORD, login, signed_up_client
from tests.web.test_login_limits import CONFLICT, NEW_PASSWORD, answering, error_answer, from_address, sixteen_at_once
from tests.web.test_ratelimit import refused

pytestmark = pytest.mark.dynamodb_local

ACTION = "mfa_attempt"


def wrong_code_of(secret):
    return f"{(int(code_of(secret)) + 500_000) % 10**6:06d}"


def next_code_of(secret):
    """A right code no other step of the test used: the next time step's (±1 step is accepted)."""
    return code_of(secret, at=time.time() + totp.STEP_SECONDS)


def half_logged_in(number=1):
    """A new browser at its own address, past the password step of ada's login."""
    client = from_address(number)
    assert password_login(client)["Location"] == "/accounts/mfa/authenticate/"
    return client


def still_half_logged_in(client, response):
    """The refusal left the half-login as it was: no cookie was changed or dropped, nobody is
    logged in, and the second step is still asked for."""
    assert django_settings.SESSION_COOKIE_NAME not in response.cookies
    assert "_auth_user_id" not in client.session
    assert login_flow.STAGE_SESSION_KEY in client.session


@pytest.fixture
def clock(monkeypatch):
    """The limiter's clock stopped 1 s into the current hour (only accounts.ratelimit's)."""
    instant = time.time() // 3600 * 3600 + 1
    monkeypatch.setattr(ratelimit, "time", SimpleNamespace(time=lambda: instant))
    return instant


def counter_of(account_id, text):
    (rule,) = ratelimit.parse_rules(text)
    return ratelimit.Counter(ACTION, rule, account_id)


def on_judging(monkeypatch, interleave):
    """Run ``interleave()`` right after the second step judged the code, before it writes:
    as other requests would at that moment."""
    judge = login_flow._spends_for_code

    def judged(account, code, origin):
        found = judge(account, code, origin)
        interleave()
        return found

    monkeypatch.setattr(login_flow, "_spends_for_code", judged)


# Atomic counting: at most the limit of wrong codes get an answer.


def test_16_concurrent_wrong_codes_get_at_most_the_limit_of_answers(ddb, capsys):
    secret, _ = enable_totp(signed_up_client())
    clients = [half_logged_in(number) for number in range(16)]
    wrong = wrong_code_of(secret)

    answers = sixteen_at_once(lambda number: second_step(clients[number], wrong))

    statuses = sorted(answer.status_code for answer in answers)
    with capsys.disabled():
        print(f"\n16 concurrent wrong codes: {statuses.count(200)} judged wrong, {statuses.count(429)} refused")
    # The limit is 5 per account (5/5m/key): 5 answered "wrong code", 11 refused.
    assert statuses == [200] * 5 + [429] * 11
    assert all(int(answer["Retry-After"]) > 0 for answer in answers if answer.status_code == 429)
    # Over the limit, the right code waits too.
    assert refused(second_step(half_logged_in(99), next_code_of(secret)))


def test_wrong_codes_counted_after_a_right_codes_read_stop_it(ddb, settings, clock, monkeypatch):
    settings.ACCOUNTS_RATE_LIMITS = {ACTION: "3/h/key"}
    secret, _ = enable_totp(signed_up_client())
    ada = store.get_by_username("ada")
    client = half_logged_in()
    # Three wrong codes of other browsers are counted between this request's read of the
    # counters (none) and its sign-in.
    counter = counter_of(ada.id, "3/h/key")
    on_judging(monkeypatch, lambda: [counter.count(clock) for _ in range(3)])
    right = next_code_of(secret)

    response = second_step(client, right)

    assert refused(response) and int(response["Retry-After"]) > 0
    still_half_logged_in(client, response)
    # Nothing was written: the code's time step is not spent.
    step = totp.matching_step(secret, right)
    records = dynamo.query_partition(account_pk(ada.id), "TOTP#")
    assert f"TOTP#{step}" not in {raw["SK"]["S"] for raw in records}


def test_over_the_limit_a_used_code_is_refused_not_told_used(ddb, settings, clock, monkeypatch):
    settings.ACCOUNTS_RATE_LIMITS = {ACTION: "3/h/key"}
    secret, _ = enable_totp(signed_up_client())
    ada = store.get_by_username("ada")
    right = next_code_of(secret)
    assert second_step(half_logged_in(1), right)["Location"] == "/accounts/profile/"
    client = half_logged_in(2)
    counter = counter_of(ada.id, "3/h/key")
    on_judging(monkeypatch, lambda: [counter.count(clock) for _ in range(3)])

    response = second_step(client, right)

    # Both the spent step and the limit refuse it: the limit answers, saying nothing of the code.
    assert refused(response)
    still_half_logged_in(client, response)


def test_a_count_landing_in_the_previous_window_after_the_read_stops_a_right_code(ddb, settings, clock, monkeypatch):
    settings.ACCOUNTS_RATE_LIMITS = {ACTION: "3/h/key"}
    secret, _ = enable_totp(signed_up_client())
    ada = store.get_by_username("ada")
    client = half_logged_in()
    # Three counts sent just before the hour turned land after the read: the previous window
    # is full, and its weight (3 x 3599/3600) leaves no room for this code.
    previous = f"w{int(clock // 3600) - 1}"
    key = counter_of(ada.id, "3/h/key").key

    def late_counts():
        dynamo.call(
            "update_item",
            TableName=dynamo.table_name(),
            Key=key,
            UpdateExpression="ADD #previous :three SET expires = :expires",
            ExpressionAttributeNames={"#previous": previous},
            ExpressionAttributeValues={":three": {"N": "3"}, ":expires": {"N": str(int(clock) + 3600)}},
        )

    on_judging(monkeypatch, late_counts)

    response = second_step(client, next_code_of(secret))

    assert refused(response)
    still_half_logged_in(client, response)


def test_a_password_reset_does_not_clear_the_second_steps_counters(ddb, settings):
    # Whoever guesses at the second step knows the password; were a reset (whoever holds the
    # mailbox can complete one) to clear these counters, each reset would buy more guesses.
    settings.ACCOUNTS_RATE_LIMITS = {ACTION: "1/h/key"}
    secret, _ = enable_totp(signed_up_client())
    assert second_step(half_logged_in(1), wrong_code_of(secret)).status_code == 200

    Client().post("/accounts/password/reset/", {"email": "ada@example.com"})
    browser = Client()
    form_page = browser.get(path_of(link_in(mails_to("ada@example.com")[-1])), follow=True)
    new_password = {"new_password1": NEW_PASSWORD, "new_password2": NEW_PASSWORD}
    assert browser.post(form_page.redirect_chain[-1][0], new_password).status_code == 302
    client = from_address(2)
    assert login(client, "ada", NEW_PASSWORD)["Location"] == "/accounts/mfa/authenticate/"

    assert refused(second_step(client, next_code_of(secret)))


# A busy DynamoDB: the honest 503, never a 500, and never a judged but uncounted code.


@pytest.mark.parametrize("code", ["TransactionConflictException", "ThrottlingException"])
def test_a_wrong_code_whose_count_meets_contention_is_a_503(ddb, code):
    secret, _ = enable_totp(signed_up_client())
    client = half_logged_in()

    with answering(plain_client(), "UpdateItem", error_answer(code)):
        response = second_step(client, wrong_code_of(secret))

    assert response.status_code == 503 and response["Retry-After"]
    still_half_logged_in(client, response)
    assert second_step(client, next_code_of(secret))["Location"] == "/accounts/profile/"


def test_a_right_code_whose_sign_in_meets_contention_is_the_same_503(ddb):
    secret, _ = enable_totp(signed_up_client())
    client = half_logged_in()

    with answering(dynamodb_client(), "TransactWriteItems", CONFLICT):
        response = second_step(client, next_code_of(secret))

    assert response.status_code == 503 and response["Retry-After"]
    still_half_logged_in(client, response)
    assert second_step(client, next_code_of(secret))["Location"] == "/accounts/profile/"


# The device cookie: a login through a second factor, or with a passkey, trusts the browser.


def guesses_lock_out_strangers(login_name="ada"):
    """Five wrong passwords from rotating addresses: a browser without the cookie waits."""
    for number in range(5):
        assert login(from_address(number), login_name, OTHER_PASSWORD).status_code == 200
    assert refused(login(from_address(98), login_name))


def assert_strangers_guesses_do_not_lock_out_a_browser_that(log_in):
    """A browser that logged in to ada's account by ``log_in(browser)``, then logged out,
    is trusted for it (its device cookie): after strangers' guesses lock the account for
    everyone else, its password still leads on to the second step."""
    owner = from_address(7)
    assert log_in(owner)["Location"] == "/accounts/profile/"
    owner.post("/accounts/logout/")

    guesses_lock_out_strangers()

    trusted = devices.trusted_accounts(owner.get("/accounts/login/").wsgi_request)
    assert store.get_by_username("ada").id in trusted
    assert login(owner, "ada", PASSWORD)["Location"] == "/accounts/mfa/authenticate/"


@pytest.mark.parametrize("factor", ["totp", "recovery_code"])
def test_a_login_through_the_second_step_with_a_code_trusts_the_browser(ddb, factor):
    secret, recovery_codes = enable_totp(signed_up_client())
    code = next_code_of(secret) if factor == "totp" else recovery_codes[0]

    def log_in(browser):
        password_login(browser)
        return second_step(browser, code)

    assert_strangers_guesses_do_not_lock_out_a_browser_that(log_in)


def test_a_login_through_the_second_step_with_a_passkey_trusts_the_browser(ddb):
    credential, _ = add_passkey(signed_up_client())

    def log_in(browser):
        password_login(browser)
        answer = authenticator.get(credential, options(browser, "second_factor"), ORIGIN)
        return browser.post("/accounts/mfa/authenticate/passkey/", {"credential": answer})

    assert_strangers_guesses_do_not_lock_out_a_browser_that(log_in)


def test_a_login_with_a_passkey_alone_trusts_the_browser(ddb):
    credential, _ = add_passkey(signed_up_client())

    assert_strangers_guesses_do_not_lock_out_a_browser_that(lambda browser: passkey_login(browser, credential))
