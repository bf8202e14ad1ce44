"""The password reset and password change flows, called as both front ends call them, on
DynamoDB Local: the request, the key's check, the new password, each outcome."""

import pytest
from django.core import mail
from django.utils.encoding import force_bytes
from django.utils.http import urlsafe_base64_encode

from accounts import dynamo, ratelimit, store
from accounts.exceptions import StaleItem
from accounts.internal.flows import email_change, password_change, password_reset
from accounts.models import User
from accounts.password_reset import token_generator
from accounts.tables import account_pk
from tests.flow_requests import flow_request, stored_account
from tests.mail import mails_to
from tests.support import RequestCounter
from tests.web import OTHER_PASSWORD, PASSWORD

pytestmark = pytest.mark.dynamodb_local


def reset_key(account):
    user = User.from_account(account)
    return f"{urlsafe_base64_encode(force_bytes(user.pk))}:{token_generator.make_token(user)}"


def counters_of(account):
    return dynamo.query_partition(account_pk(account.id), ratelimit.COUNTER_PREFIX, attributes=["PK", "SK"])


def test_a_reset_request_mails_the_link_only_when_send_link_runs(ddb):
    stored_account()

    requested = password_reset.request_password_reset(flow_request(), email="ADA@example.com")

    assert mail.outbox == []
    requested.send_link()
    assert "/accounts/password/reset/" in mails_to("ada@example.com")[-1].body


def test_a_reset_request_for_an_unknown_address_mails_nobody(ddb):
    password_reset.request_password_reset(flow_request(), email="nobody@example.com").send_link()

    assert mail.outbox == []


def test_reset_requests_past_the_limit_of_the_address_are_refused(ddb, settings):
    settings.ACCOUNTS_RATE_LIMITS = {"reset_password": "1/m/key"}
    password_reset.request_password_reset(flow_request(), email="ada@example.com")

    with pytest.raises(ratelimit.RateLimited):
        password_reset.request_password_reset(flow_request(), email="Ada@Example.com")


def test_a_valid_key_names_its_user_and_a_damaged_one_nobody(ddb):
    account = stored_account()
    key = reset_key(account)
    uidb64, _separator, token = key.partition(":")

    assert password_reset.user_of_key(key=key).pk == account.id
    assert password_reset.user_of_key(key=f"{uidb64}:{token[:-1]}x") is None
    assert password_reset.user_of_key(key=key.replace(":", "")) is None
    assert password_reset.user_of_key(key=f"!!!:{token}") is None


def test_a_link_whose_id_cannot_be_an_account_id_is_not_looked_up(ddb):
    with RequestCounter() as counter:
        found = [password_reset.user_of_link(urlsafe_base64_encode(value)) for value in (b"a" * 65, b"x#PROFILE", b"")]

    assert found == [None, None, None]
    assert sum(counter.counts.values()) == 0


def test_a_reset_sets_the_password_ends_its_key_forgets_the_counters_and_tells_the_address(ddb):
    account = stored_account()
    rule = ratelimit.limits()["login_failed"][0]
    ratelimit.count_attempt("login_failed", [ratelimit.Counter("login_failed", rule, "guess", account_id=account.id)])
    assert counters_of(account)
    key = reset_key(account)

    resetting = password_reset.reset_password(
        flow_request(), user=password_reset.user_of_key(key=key), password=OTHER_PASSWORD
    )

    assert resetting.refusal is None
    assert User.from_account(store.get_account(account.id)).check_password(OTHER_PASSWORD)
    assert password_reset.user_of_key(key=key) is None
    assert counters_of(account) == []
    assert "password" in mails_to("ada@example.com")[-1].subject.lower()


def test_a_reset_of_an_account_changed_since_it_was_read_is_refused_stale_and_changes_nothing(ddb):
    account = stored_account()
    user = password_reset.user_of_key(key=reset_key(account))
    store.change_username(store.get_account(account.id), "countess")

    resetting = password_reset.reset_password(flow_request(), user=user, password=OTHER_PASSWORD)

    assert isinstance(resetting.refusal, StaleItem)
    assert User.from_account(store.get_account(account.id)).check_password(PASSWORD)
    assert mail.outbox == []


def test_a_password_change_keeps_this_session_cancels_the_pending_change_and_tells_the_address(ddb):
    account = stored_account()
    email_change.request_email_change(flow_request(account), account=account, email="lovelace@example.com")
    account = store.get_account(account.id)
    request = flow_request(account)
    mailed = len(mails_to("ada@example.com"))

    changing = password_change.change_password(request, user=request.user, password=OTHER_PASSWORD)

    assert changing == password_change.PasswordChange(cancelled="lovelace@example.com")
    stored = store.get_account(account.id)
    assert User.from_account(stored).check_password(OTHER_PASSWORD) and stored.pending_email is None
    assert request.session["_auth_user_hash"] == request.user.get_session_auth_hash()
    assert len(mails_to("ada@example.com")) == mailed + 1


def test_a_password_change_of_an_account_changed_since_it_was_read_is_refused_stale(ddb):
    account = stored_account()
    request = flow_request(account)
    store.change_username(store.get_account(account.id), "countess")

    changing = password_change.change_password(request, user=request.user, password=OTHER_PASSWORD)

    assert changing.cancelled is None and isinstance(changing.refusal, StaleItem)
    assert User.from_account(store.get_account(account.id)).check_password(PASSWORD)
