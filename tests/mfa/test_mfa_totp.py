"""The authenticator app (TOTP) and the second step of a login, on DynamoDB Local: the
set-up page, a code accepted once per time step, ±1 step of drift, no session before the
second factor, the second step's rate limit and its deadline."""

import re
import time
from urllib.parse import parse_qs, urlsplit

import pyotp
import pytest
from django.test import Client

from accounts import dynamo, store
from accounts.mfa import totp
from accounts.mfa.flows import login as login_flow
from accounts.tables import account_pk
from tests.mfa import code_of, enable_totp, password_login, second_step
from tests.web import signed_up_client

pytestmark = pytest.mark.dynamodb_local


def test_the_set_up_page_shows_the_secret_its_uri_and_qr_code_above_a_form_with_one_text_input(ddb):
    client = signed_up_client()

    page = client.get("/accounts/mfa/totp/")

    html = page.content.decode()
    secret, uri = page.context["secret"], page.context["uri"]
    assert len(secret) == 32 and secret in html
    assert uri.startswith("otpauth://totp/") and parse_qs(urlsplit(uri).query)["secret"] == [secret]
    assert f'href="{uri.replace("&", "&amp;")}"' in html
    # The QR code encodes that same URI (segno draws the same symbol for the same text).
    assert totp.qr_code_svg(uri, "testserver") in html
    assert "style=" not in page.context["qr_code"]
    form = html[html.index('action="/accounts/mfa/totp/"') :]
    form = form[: form.index("</form>")]
    text_inputs = re.findall(r'<input type="text" name="(\w+)"', form)
    assert text_inputs == ["code"]
    assert html.index(secret) < html.index('action="/accounts/mfa/totp/"')


def test_the_profile_links_to_each_authenticator_by_name(ddb):
    page = signed_up_client().get("/accounts/profile/").content.decode()

    for text, url in [
        ("Authenticator app (two-factor)", "/accounts/mfa/totp/"),
        ("Passkeys", "/accounts/mfa/passkeys/"),
        ("Recovery codes", "/accounts/mfa/recovery-codes/"),
    ]:
        assert f'<a href="{url}">{text}</a>' in page


def test_a_wrong_code_does_not_turn_it_on(ddb):
    client = signed_up_client()
    secret = client.get("/accounts/mfa/totp/").context["secret"]
    wrong = f"{(int(code_of(secret)) + 1) % 10**6:06d}"

    response = client.post("/accounts/mfa/totp/", {"code": wrong})

    assert response.context["form"].has_error("code")
    assert store.get_by_username("ada").totp_secret is None


def test_turning_it_on_shows_ten_recovery_codes_as_a_list_and_login_asks_for_a_code(ddb):
    client = signed_up_client()

    secret, codes = enable_totp(client)

    assert len(codes) == 10 and len(set(codes)) == 10
    ada = store.get_by_username("ada")
    assert ada.totp_secret == secret and len(ada.recovery_codes) == 10
    assert not set(codes) & ada.recovery_codes  # stored as digests only
    response = password_login(Client())
    assert response["Location"] == "/accounts/mfa/authenticate/"


def test_no_session_is_logged_in_before_the_second_factor(ddb):
    secret, _ = enable_totp(signed_up_client())
    client = Client()
    password_login(client)

    ada = store.get_by_username("ada")
    sessions = dynamo.query_partition(account_pk(ada.id), "SESSION#")
    assert len(sessions) == 1  # the one that enabled it; none for this login
    assert "_auth_user_id" not in client.session
    assert client.get("/accounts/profile/")["Location"].startswith("/accounts/login/")

    response = second_step(client, code_of(secret, at=time.time() + totp.STEP_SECONDS))

    assert response["Location"] == "/accounts/profile/"
    assert len(dynamo.query_partition(account_pk(ada.id), "SESSION#")) == 2


def test_the_second_step_has_one_text_field_and_a_passkey_button_when_there_are_passkeys(ddb):
    from tests.mfa import add_passkey

    client = signed_up_client()
    enable_totp(client)
    add_passkey(client)
    visitor = Client()
    password_login(visitor)

    html = visitor.get("/accounts/mfa/authenticate/").content.decode()

    code_form = html[html.index('action="/accounts/mfa/authenticate/"') :]
    code_form = code_form[: code_form.index("</form>")]
    assert re.findall(r'<input type="(?:text|password|email|number)" name="(\w+)"', code_form) == ["code"]
    assert re.search(r"<button[^>]*>Use a passkey</button>", html)


def test_a_code_is_accepted_once_in_its_time_step(ddb):
    secret, _ = enable_totp(signed_up_client())
    code = code_of(secret, at=time.time() + totp.STEP_SECONDS)  # next step's: not the enrolment's
    first, second = Client(), Client()
    password_login(first)
    password_login(second)

    accepted = second_step(first, code)
    replayed = second_step(second, code)

    assert accepted["Location"] == "/accounts/profile/"
    assert replayed["Location"] == "/accounts/login/"
    assert "_auth_user_id" not in second.session


def test_the_code_that_turned_it_on_cannot_log_in(ddb):
    client = signed_up_client()
    page = client.get("/accounts/mfa/totp/")
    code = code_of(page.context["secret"])
    client.post("/accounts/mfa/totp/", {"code": code})
    visitor = Client()
    password_login(visitor)

    assert second_step(visitor, code)["Location"] == "/accounts/login/"


@pytest.mark.parametrize(("steps", "accepted"), [(-1, True), (1, True), (-2, False), (2, False)])
def test_a_clock_drift_of_one_step_is_accepted_and_no_more(steps, accepted):
    secret = pyotp.random_base32(32)
    now = 1_700_000_015
    code = pyotp.TOTP(secret).at(now + steps * totp.STEP_SECONDS)

    step = totp.matching_step(secret, code, now=now)

    assert (step == now // totp.STEP_SECONDS + steps) if accepted else step is None


def test_wrong_codes_hit_the_per_account_limit_and_then_even_the_right_code_waits(ddb, settings):
    settings.ACCOUNTS_RATE_LIMITS = {"mfa_attempt": "3/m/key"}
    secret, _ = enable_totp(signed_up_client())
    wrong = f"{(int(code_of(secret)) + 500_000) % 10**6:06d}"
    for _ in range(3):
        client = Client()
        password_login(client)
        assert second_step(client, wrong).status_code == 200
    client = Client()
    password_login(client)

    response = second_step(client, code_of(secret, at=time.time() + totp.STEP_SECONDS))

    assert response.status_code == 429 and int(response["Retry-After"]) > 0
    assert "_auth_user_id" not in client.session
    # The limit counts per account: another account's second step is not held back.
    other_secret, _ = enable_totp(signed_up_client("grace@example.com", "grace"))
    other = Client()
    password_login(other, "grace")
    assert second_step(other, code_of(other_secret, at=time.time() + totp.STEP_SECONDS)).status_code == 302


@pytest.mark.parametrize("margin_minutes", [5, 15])
def test_a_used_steps_record_outlives_its_last_instant_by_the_clock_skew_margin(settings, margin_minutes):
    # A server whose clock is behind DynamoDB's (TTL's) by up to the margin still accepts the
    # step's code after its last instant: the record must not be deletable before then.
    settings.ACCOUNTS_CLOCK_SKEW_MARGIN = margin_minutes * 60
    step = 1000
    first_instant_refused = (step + totp.DRIFT + 1) * totp.STEP_SECONDS
    assert totp.step_record_expires(step) == first_instant_refused + margin_minutes * 60


def test_a_half_login_expires(ddb, monkeypatch):
    secret, _ = enable_totp(signed_up_client())
    client = Client()
    monkeypatch.setattr(login_flow, "STAGE_SECONDS", -1)
    password_login(client)

    response = second_step(client, code_of(secret, at=time.time() + totp.STEP_SECONDS))

    assert response["Location"] == "/accounts/login/"
    assert "_auth_user_id" not in client.session


def test_turning_it_off_logs_in_with_the_password_alone(ddb):
    client = signed_up_client()
    enable_totp(client)

    client.post("/accounts/mfa/totp/deactivate/")

    ada = store.get_by_username("ada")
    assert ada.totp_secret is None and ada.recovery_codes is None
    assert password_login(Client())["Location"] == "/accounts/profile/"
