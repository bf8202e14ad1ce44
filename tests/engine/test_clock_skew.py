"""Two app servers whose clocks differ, on DynamoDB Local: a value an expired claim held is
taken only past ACCOUNTS_CLOCK_SKEW_MARGIN, a server's ``:now`` is its own clock read when
the request is planned (again for every new attempt, never for a resend), and beyond the
margin the held-lock guard still keeps a stale verification from making two holders."""

import copy
from datetime import timedelta

import pytest

from accounts import audit, lookups, store, transactions
from accounts.exceptions import StaleItem, UniqueViolation
from accounts.tables import dynamodb_client
from tests.engine.test_engine import locks
from tests.invariants import violations
from tests.support import answer_before_call, cancellation

pytestmark = pytest.mark.dynamodb_local

HASH = "argon2$not-a-real-hash"
IN_PROGRESS = {
    "Error": {"Code": "TransactionInProgressException", "Message": "in progress"},
    "ResponseMetadata": {"HTTPStatusCode": 400},
}


@pytest.fixture(autouse=True)
def mandatory(settings):
    settings.ACCOUNTS_EMAIL_VERIFICATION = "mandatory"


@pytest.fixture
def sent(ddb):
    """The parameters of every TransactWriteItems call, as the engine made them."""
    requests = []

    def record(params, **kwargs):
        requests.append(copy.deepcopy(params))

    dynamodb_client().meta.events.register("provide-client-params.dynamodb.TransactWriteItems", record)
    return requests


def sign_up_unverified(settings, email, username, seconds):
    settings.ACCOUNTS_UNVERIFIED_EXPIRY = timedelta(seconds=seconds)
    return store.signup(email, username, HASH)[0]


def test_a_server_two_minutes_fast_cannot_take_a_username_whose_sign_up_still_lives(ddb, clocks, settings):
    # The review's case: bob's unverified sign-up has 99 s to live on the true clock.
    carol = sign_up_unverified(settings, "carol@example.org", "bob", 99)

    with clocks.server(120), pytest.raises(UniqueViolation) as caught:
        store.signup("bob@example.org", "bob", HASH, email_verified=True)

    assert caught.value.fields == {"username"}
    assert locks()["UNIQ#HANDLE#bob"] == carol.PK
    assert locks()["UNIQ#HANDLE_SKEL#bob"] == carol.PK


def test_an_expired_claim_is_free_only_once_it_is_older_than_the_margin(lagging_ttl, settings):
    settings.ACCOUNTS_CLOCK_SKEW_MARGIN = 60
    young = sign_up_unverified(settings, "young@example.org", "young", -30)
    old = sign_up_unverified(settings, "old@example.org", "old", -90)

    # Both are gone to every read...
    assert store.get_account(young.id) is None and store.get_by_username("young") is None
    # ...but only the one expired longer ago than the margin gives its name away.
    with pytest.raises(UniqueViolation):
        store.signup("other@example.org", "young", HASH, email_verified=True)
    taker, _ = store.signup("taker@example.org", "old", HASH, email_verified=True)

    assert locks()["UNIQ#HANDLE#young"] == young.PK
    assert locks()["UNIQ#HANDLE#old"] == taker.PK != old.PK


def test_beyond_the_margin_the_held_lock_guard_refuses_the_stale_verification(ddb, clocks, settings):
    # The assumption broken: a server 120 s fast with a margin of 60 s takes bob from a
    # sign-up that has 30 s to live. Only `owner = me` on the kept username lock stops the
    # slow holder's verification from making two verified, lasting holders of bob.
    settings.ACCOUNTS_CLOCK_SKEW_MARGIN = 60
    carol = sign_up_unverified(settings, "carol@example.org", "bob", 30)
    with clocks.server(120):
        bob, _ = store.signup("bob@example.org", "bob", HASH, email_verified=True)
    assert locks()["UNIQ#HANDLE#bob"] == bob.PK

    with pytest.raises(StaleItem):
        store.verify_email(store.get_account(carol.id))

    assert store.get_account(carol.id).email_verified is False
    assert locks()["UNIQ#HANDLE#bob"] == locks()["UNIQ#HANDLE_SKEL#bob"] == bob.PK
    # Two live holders until carol's claim expires, which the audit says resolves itself...
    kinds = {finding.key: finding.kind for finding in audit.run_audit().findings}
    assert kinds["UNIQ#HANDLE#bob"] == audit.TRANSIENT
    # ...and it does: once it has expired, nothing is left to repair.
    with clocks.server(31):
        assert violations() == []


def test_a_duplicate_no_holder_of_which_is_about_to_expire_is_a_decision_for_staff(ddb, clocks, settings):
    settings.ACCOUNTS_CLOCK_SKEW_MARGIN = 60
    carol = sign_up_unverified(settings, "carol@example.org", "bob", 30)
    with clocks.server(120):
        store.signup("bob@example.org", "bob", HASH, email_verified=True)

    # 40 s later by this clock, carol's claim is expired but still within the margin:
    # still transient. 100 s earlier it had 130 s to live: a duplicate for a person.
    with clocks.process(-100):
        kinds = {finding.key: finding.kind for finding in audit.run_audit().findings}
    assert kinds["UNIQ#HANDLE#bob"] == audit.DUPLICATE
    assert store.get_account(carol.id) is not None


def test_at_now_equal_to_expires_an_item_lives_for_every_read_and_guard(lagging_ttl, clocks, settings):
    # One boundary everywhere, DynamoDB TTL's: an item lives through the second its expires
    # names and is gone once expires < now.
    clocks.stop()
    carol = sign_up_unverified(settings, "carol@example.org", "carol", 0)
    assert carol.expires == int(clocks.time())

    assert store.get_account(carol.id) is not None
    assert store.get_by_username("carol").PK == carol.PK
    assert lookups.lock_owner(type(carol), "UNIQ#HANDLE#carol") == carol.PK
    assert audit.run_audit().accounts == 1
    with clocks.server(clocks.offset() + 1):
        assert store.get_account(carol.id) is None
        assert store.get_by_username("carol") is None
    with clocks.process(clocks.offset() + 1):
        assert audit.run_audit().accounts == 0

    store.verify_email(store.get_account(carol.id))

    assert store.get_account(carol.id).email_verified is True


def test_a_verification_one_second_after_expires_is_refused(lagging_ttl, clocks, settings):
    clocks.stop()
    carol = sign_up_unverified(settings, "carol@example.org", "carol", 0)
    as_read = store.get_account(carol.id)

    clocks.advance(1)

    with pytest.raises(StaleItem):
        store.verify_email(as_read)


def test_a_conflict_retry_is_planned_again_with_the_clock_read_again(ddb, clocks, sent, monkeypatch):
    answer_before_call(dynamodb_client(), [cancellation("None", "TransactionConflict", "None", "None")])
    monkeypatch.setattr(transactions.running, "_backoff", lambda attempt: clocks.advance(50))

    store.signup("ada@example.org", "ada", HASH, email_verified=True)

    first, second = sent
    assert first["ClientRequestToken"] != second["ClientRequestToken"]
    cutoffs = [int(request["TransactItems"][1]["Put"]["ExpressionAttributeValues"][":0"]["N"]) for request in sent]
    assert cutoffs[1] - cutoffs[0] == 50


def test_a_settle_resend_with_the_same_token_is_the_very_same_request(ddb, clocks, sent, monkeypatch):
    # DynamoDB applies a token once only for identical parameters: a resend never plans
    # again, however much time passed, or a request in doubt could apply twice.
    answer_before_call(dynamodb_client(), [IN_PROGRESS] * transactions.TRANSPORT_ATTEMPTS)
    monkeypatch.setattr(transactions.running.time, "sleep", lambda seconds: clocks.advance(seconds + 10))

    account, created = store.signup("ada@example.org", "ada", HASH, email_verified=True)

    assert created and store.get_account(account.id) is not None
    assert len(sent) == transactions.TRANSPORT_ATTEMPTS + 1
    assert all(request == sent[0] for request in sent)
