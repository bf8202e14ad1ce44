"""Injected faults: lost answers, conflicts, outages. Tokens make resends idempotent;
conflicts are retried briefly; failed conditions are never retried."""

import botocore.exceptions
import pytest

from accounts import store, transactions
from accounts.exceptions import Busy, Unavailable, UniqueViolation
from accounts.tables import dynamodb_client
from tests.engine.test_engine import signup, table_items
from tests.support import answer_before_call, cancellation


@pytest.fixture
def sent_tokens():
    """The ClientRequestToken of every TransactWriteItems call the engine makes."""
    tokens = []

    def record(params, **kwargs):
        tokens.append(params.get("ClientRequestToken"))

    dynamodb_client().meta.events.register("provide-client-params.dynamodb.TransactWriteItems", record)
    return tokens


def lose_next_answer(client):
    """The next TransactWriteItems is sent and committed, but its answer never arrives."""
    lost = []

    def drop_answer(**kwargs):
        if not lost:
            lost.append(True)
            raise botocore.exceptions.ReadTimeoutError(endpoint_url=client.meta.endpoint_url)

    client.meta.events.register("after-call.dynamodb.TransactWriteItems", drop_answer)
    return lost


@pytest.fixture
def no_sleep(monkeypatch):
    """Record backoff sleeps instead of sleeping."""
    slept = []
    monkeypatch.setattr(transactions.running.time, "sleep", slept.append)
    return slept


@pytest.mark.dynamodb_local
def test_lost_answer_after_commit_is_resent_with_the_same_token_and_writes_once(ddb, sent_tokens):
    lost = lose_next_answer(dynamodb_client())
    account, created = store.signup("ada@example.org", "ada", "hash")
    assert lost and created
    assert len(sent_tokens) == 2 and sent_tokens[0] == sent_tokens[1]
    assert set(table_items()) == {account.PK, "UNIQ#EMAIL#ada@example.org", "UNIQ#HANDLE#ada", "UNIQ#HANDLE_SKEL#ada"}


@pytest.mark.moto
def test_lost_answer_on_an_engine_that_ignores_tokens_is_recognised_as_our_own_commit(moto_ddb, sent_tokens):
    # moto ignores ClientRequestToken: the resend is cancelled on our own fresh locks.
    lose_next_answer(dynamodb_client())
    account, _ = store.signup("ada@example.org", "ada", "hash")
    assert len(sent_tokens) == 2
    assert store.get_by_email("ada@example.org").PK == account.PK


@pytest.mark.moto
def test_a_collision_after_a_lost_answer_is_still_a_collision(moto_ddb):
    signup("ada@example.org", "ada")
    lose_next_answer(dynamodb_client())
    with pytest.raises(UniqueViolation) as raised:
        signup("ada@example.org", "babbage")
    assert raised.value.fields == {"email"}


@pytest.mark.dynamodb_local
def test_transaction_conflict_is_retried_with_a_new_token_then_commits(ddb, sent_tokens, no_sleep):
    intercepted = answer_before_call(
        dynamodb_client(),
        [cancellation("None", "TransactionConflict", "None")] * 2,
    )
    account, created = store.signup("ada@example.org", "ada", "hash")
    assert created and len(intercepted) == 2
    assert len(sent_tokens) == 3 and len(set(sent_tokens)) == 3
    assert len(no_sleep) == 2
    assert store.get_account(account.id).email == "ada@example.org"


@pytest.mark.dynamodb_local
def test_persistent_conflict_becomes_busy_after_a_few_brief_attempts(ddb, sent_tokens, no_sleep):
    answer_before_call(dynamodb_client(), [cancellation("TransactionConflict", "None", "None")] * 10)
    with pytest.raises(Busy):
        store.signup("ada@example.org", "ada", "hash")
    assert len(sent_tokens) == transactions.CONFLICT_ATTEMPTS
    assert sum(no_sleep) < 0.5
    assert table_items() == {}


@pytest.mark.dynamodb_local
def test_failed_condition_is_answered_at_once_never_retried(ddb, count_requests, no_sleep):
    signup("ada@example.org", "ada")
    count_requests.reset()
    with pytest.raises(UniqueViolation):
        signup("ada@example.org", "babbage")
    assert dict(count_requests.counts) == {"TransactWriteItems": 1}
    assert no_sleep == []


@pytest.mark.dynamodb_local
def test_conflict_and_collision_together_report_the_collision(ddb, no_sleep):
    answer_before_call(dynamodb_client(), [cancellation("None", "ConditionalCheckFailed", "TransactionConflict")])
    with pytest.raises(UniqueViolation) as raised:
        store.signup("ada@example.org", "ada", "hash")
    assert raised.value.fields == {"email"}


def test_unreachable_dynamodb_raises_unavailable_after_resending(settings, no_sleep):
    from accounts.dynamodb_local import free_port

    settings.ACCOUNTS_ENDPOINT_URL = f"http://127.0.0.1:{free_port()}"
    with pytest.raises(Unavailable):
        store.signup("ada@example.org", "ada", "hash")
    assert len(no_sleep) == transactions.TRANSPORT_ATTEMPTS - 1


@pytest.mark.dynamodb_local
def test_in_progress_answer_is_resent_with_the_same_token(ddb, sent_tokens, no_sleep):
    in_progress = {
        "Error": {"Code": "TransactionInProgressException", "Message": "in progress"},
        "ResponseMetadata": {"HTTPStatusCode": 400},
    }
    answer_before_call(dynamodb_client(), [in_progress])
    account, created = store.signup("ada@example.org", "ada", "hash")
    assert created and len(sent_tokens) == 2 and sent_tokens[0] == sent_tokens[1]
    assert store.get_account(account.id)
