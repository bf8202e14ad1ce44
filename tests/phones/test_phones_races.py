"""Races of phone numbers on DynamoDB Local: the ``PHONE`` lock, not luck, decides who holds
a number, and a code verifies its number once."""

import pytest
from django.test import RequestFactory

from accounts import sessions, store
from accounts.models import User
from accounts.phones import flows
from tests.engine.test_engine_concurrency import race
from tests.invariants import violations
from tests.phones import phone_lock_owner, with_number
from tests.sms import NUMBER, NUMBER_E164, code_for, phone_site  # noqa: F401

pytestmark = pytest.mark.dynamodb_local


@pytest.fixture
def unlimited(phone_site, settings):
    """The phone site without rate limits: every claimant gets its code."""
    settings.ACCOUNTS_RATE_LIMITS = False
    return phone_site


def session_of(account):
    """A request of a signed-in session of ``account``, as the flows get it."""
    request = RequestFactory().post("/")
    request.session = sessions.SessionStore()
    request.user = User.from_account(account)
    return request


def without_number(email):
    account, _ = store.signup(email, "", "md5$salt$" + "0" * 32, email_verified=True)
    return account


def test_16_accounts_claiming_one_number_at_once_leave_one_holder(unlimited):
    accounts = [without_number(f"claimant{i}@example.com") for i in range(16)]
    requests = [session_of(account) for account in accounts]
    for request, account in zip(requests, accounts, strict=True):
        asked = flows.request_change(request, account=account, phone=NUMBER_E164)
        assert asked.outcome == "sent"
    codes = [code_for(account.id, NUMBER_E164) for account in accounts]

    outcomes = race(16, lambda i: flows.verify_change(requests[i], code=codes[i]).outcome)

    assert sorted(outcomes) == [flows.TAKEN] * 15 + [flows.VERIFIED]
    winner = accounts[outcomes.index(flows.VERIFIED)]
    assert phone_lock_owner(NUMBER_E164) == winner.PK
    holders = [account for account in map(store.get_account, (a.id for a in accounts)) if account.phone]
    assert [holder.id for holder in holders] == [winner.id]
    assert violations() == []


def test_16_signups_verifying_one_number_at_once_leave_one_holder(unlimited):
    accounts = [with_number(f"signup{i}@example.com", NUMBER, verified=False) for i in range(16)]
    requests = []
    for account in accounts:
        request = session_of(account)
        request.user = User.from_account(account)
        flows.stage(request, request.user, "", signup=True)
        requests.append(request)
    codes = [code_for(account.id, NUMBER_E164) for account in accounts]

    outcomes = race(16, lambda i: flows.verify_staged(requests[i], code=codes[i]).outcome)

    assert sorted(outcomes) == [flows.TAKEN] * 15 + [flows.VERIFIED]
    winner = accounts[outcomes.index(flows.VERIFIED)]
    assert phone_lock_owner(NUMBER_E164) == winner.PK
    verified = [account.id for account in map(store.get_account, (a.id for a in accounts)) if account.phone_verified]
    assert verified == [winner.id]
    assert violations() == []


def test_one_code_posted_twice_at_once_verifies_once(unlimited):
    account = with_number()
    request = session_of(account)
    flows.request_change(request, account=account, phone="+447911123456")
    code = code_for(account.id, "+447911123456")
    twin = session_of(account)
    twin.session[flows.CHANGE_SESSION_KEY] = request.session[flows.CHANGE_SESSION_KEY]
    both = [request, twin]

    outcomes = race(2, lambda i: flows.verify_change(both[i], code=code).outcome)

    assert sorted(outcomes) == [flows.STALE, flows.VERIFIED]
    assert (phone_lock_owner("+447911123456"), phone_lock_owner(NUMBER_E164)) == (account.PK, None)
    assert violations() == []


def test_eight_guesses_at_once_get_at_most_the_tries_answered(unlimited, settings):
    settings.ACCOUNTS_PHONE_VERIFICATION_MAX_ATTEMPTS = 3
    account = with_number()
    request = session_of(account)
    flows.request_change(request, account=account, phone="+447911123456")
    code = code_for(account.id, "+447911123456")
    guesses = ["AAAAAAAA"] * 7 + [code]
    twins = []
    for _ in guesses:
        twin = session_of(account)
        twin.session[flows.CHANGE_SESSION_KEY] = request.session[flows.CHANGE_SESSION_KEY]
        twins.append(twin)

    outcomes = race(8, lambda i: flows.verify_change(twins[i], code=guesses[i]).outcome)

    judged = [outcome for outcome in outcomes if outcome in (flows.WRONG_CODE, flows.VERIFIED)]
    assert len(judged) <= 3
    assert store.get_account(account.id).phone in (NUMBER_E164, "+447911123456")
    assert violations() == []
