"""The login flow answers with its outcome (accounts.internal.flows.login.LoginOutcome),
which the login form and the API render: rate limited with how long to wait, unverified,
wrong credentials, a pending stage, done. Nothing of it travels on the request."""

import pytest
from django.contrib.auth import SESSION_KEY
from django.contrib.auth.hashers import make_password
from django.contrib.auth.signals import user_login_failed
from django.test import Client, RequestFactory

from accounts import sessions, store
from accounts.internal.flows import login as login_flow
from tests.mfa import enable_totp
from tests.web import OTHER_PASSWORD, PASSWORD, login, signed_up_client

pytestmark = pytest.mark.dynamodb_local


def a_request(address="198.51.100.7"):
    request = RequestFactory().post("/accounts/login/", REMOTE_ADDR=address)
    request.session = sessions.SessionStore()
    return request


def log_in(request, name, password=PASSWORD):
    return login_flow.log_in_with_password(request, login=name, password=password, redirect_to="/after/")


def test_the_right_password_of_an_account_without_stages_is_done_and_logged_in(ddb):
    signed_up_client()
    request = a_request()

    outcome = log_in(request, "ADA")

    assert outcome.status == login_flow.DONE and outcome.user.username == "ada"
    assert request.session[SESSION_KEY] == outcome.user.pk


def test_a_wrong_password_is_wrong_credentials_and_logs_nobody_in(ddb):
    signed_up_client()
    request = a_request()

    outcome = log_in(request, "ada", OTHER_PASSWORD)

    assert outcome.status == login_flow.WRONG_CREDENTIALS and outcome.refused
    assert outcome.user is None and SESSION_KEY not in request.session


def test_a_name_nobody_holds_is_wrong_credentials_too(ddb):
    assert log_in(a_request(), "nobody").status == login_flow.WRONG_CREDENTIALS


def test_the_right_password_of_an_unverified_account_names_the_account(ddb, settings):
    settings.ACCOUNTS_EMAIL_VERIFICATION = "mandatory"
    account, _ = store.signup("ada@example.com", "ada", make_password(PASSWORD))
    request = a_request()

    outcome = log_in(request, "ada")

    assert outcome.status == login_flow.UNVERIFIED and outcome.account.id == account.id
    assert SESSION_KEY not in request.session


def test_past_the_limit_the_outcome_says_how_long_to_wait(ddb):
    signed_up_client()
    for number in range(5):
        assert log_in(a_request(f"198.51.100.{number}"), "ada", OTHER_PASSWORD).status == login_flow.WRONG_CREDENTIALS

    outcome = log_in(a_request("198.51.100.99"), "ada")

    assert outcome.status == login_flow.RATE_LIMITED and outcome.refused
    assert outcome.retry_after is not None and outcome.retry_after > 0
    assert outcome.retry_after == outcome.refusal.retry_after


def test_an_account_with_a_second_factor_is_pending_its_stage(ddb):
    enable_totp(signed_up_client())
    request = a_request()

    outcome = log_in(request, "ada")

    assert outcome.status == login_flow.PENDING and outcome.user.username == "ada"
    assert outcome.pending.stage == "mfa_authenticate" and outcome.pending.account_id == outcome.user.pk
    assert SESSION_KEY not in request.session


def test_refusals_leave_nothing_on_the_request(ddb, settings):
    settings.ACCOUNTS_EMAIL_VERIFICATION = "mandatory"
    store.signup("ada@example.com", "ada", make_password(PASSWORD))
    unverified, limited = a_request(), a_request("198.51.100.99")

    outcomes = [log_in(unverified, "ada").status]
    for number in range(5):
        log_in(a_request(f"198.51.100.{number}"), "ada", OTHER_PASSWORD)
    outcomes.append(log_in(limited, "ada").status)

    assert outcomes == [login_flow.UNVERIFIED, login_flow.RATE_LIMITED]
    for request in (unverified, limited):
        assert [name for name in vars(request) if name.startswith("accounts")] == []


def test_the_login_page_renders_the_wait_of_a_rate_limited_outcome(ddb):
    signed_up_client()
    for number in range(5):
        login(Client(REMOTE_ADDR=f"198.51.100.{number}"), "ada", OTHER_PASSWORD)

    response = login(Client(REMOTE_ADDR="198.51.100.99"), "ada")

    assert response.status_code == 429 and int(response["Retry-After"]) > 0
    assert response.context["form"].has_error("__all__", "rate_limited")


def test_a_refused_login_page_post_sends_user_login_failed_once_and_a_right_one_none(ddb):
    signed_up_client()
    failures = []

    def receive(sender, credentials, request, **kwargs):
        failures.append((credentials, request.path))

    user_login_failed.connect(receive)
    try:
        login(Client(), "ada", OTHER_PASSWORD)
        login(Client(), "ada")
    finally:
        user_login_failed.disconnect(receive)

    assert failures == [({"username": "ada"}, "/accounts/login/")]
