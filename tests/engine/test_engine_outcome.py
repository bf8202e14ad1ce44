"""What the engine says when no answer comes: ``OutcomeUnknown`` (with the token to resend)
once a transaction may have been sent, ``Unavailable`` only when nothing was; every
attempt, the engine's token-keeping resends included, fits the request deadline."""

import time

import botocore.exceptions
import pytest

from accounts import deadline, store, transactions
from accounts.exceptions import OutcomeUnknown, Unavailable
from accounts.tables import dynamodb_client
from tests.engine.test_engine import table_items
from tests.support import answer_before_call

pytestmark = pytest.mark.dynamodb_local


@pytest.fixture
def sent_tokens():
    tokens = []
    dynamodb_client().meta.events.register(
        "provide-client-params.dynamodb.TransactWriteItems",
        lambda params, **kwargs: tokens.append(params["ClientRequestToken"]),
    )
    return tokens


def lose_every_answer():
    def drop_answer(**kwargs):
        raise botocore.exceptions.ReadTimeoutError(endpoint_url="http://dynamodb.local")

    dynamodb_client().meta.events.register("after-call.dynamodb.TransactWriteItems", drop_answer)


def test_every_answer_lost_is_an_unknown_outcome_carrying_the_token(ddb, sent_tokens):
    lose_every_answer()
    transaction = transactions.plan_create(store.build_account("ada@example.org", "ada", "hash"))

    with pytest.raises(OutcomeUnknown) as raised:
        transactions.run(transaction)

    assert raised.value.token == sent_tokens[0]
    assert len(set(sent_tokens)) == 1 and len(sent_tokens) == transactions.TRANSPORT_ATTEMPTS
    # It did commit, once: only the answers were lost.
    assert len(table_items()) == 4


def test_transaction_in_progress_to_the_end_is_an_unknown_outcome(ddb, monkeypatch):
    monkeypatch.setattr(transactions.running.time, "sleep", lambda seconds: None)
    in_progress = {
        "Error": {"Code": "TransactionInProgressException", "Message": "in progress"},
        "ResponseMetadata": {"HTTPStatusCode": 400},
    }
    answer_before_call(dynamodb_client(), [in_progress] * transactions.TRANSPORT_ATTEMPTS)
    transaction = transactions.plan_create(store.build_account("ada@example.org", "ada", "hash"))

    with pytest.raises(OutcomeUnknown) as raised:
        transactions.run(transaction)
    assert raised.value.token == transaction.token


def test_a_refused_connection_is_unavailable_nothing_was_sent(settings, monkeypatch):
    from project.dynamodb_local import free_port

    monkeypatch.setattr(transactions.running.time, "sleep", lambda seconds: None)
    settings.ACCOUNTS_ENDPOINT_URL = f"http://127.0.0.1:{free_port()}"

    with pytest.raises(Unavailable) as raised:
        store.signup("ada@example.org", "ada", "hash")
    assert not isinstance(raised.value, OutcomeUnknown)


def failing_sends(error):
    """Each TransactWriteItems attempt that goes out waits 0.2 s, then fails with ``error``;
    returns the list of attempts that went out."""
    sent = []

    def fail(request, **kwargs):
        if b"TransactWriteItems" in request.headers.get("X-Amz-Target", b""):
            sent.append(True)
            time.sleep(0.2)
            raise error

    # On the deadline hook's own event, after it: only attempts it lets out get here.
    dynamodb_client().meta.events.register("before-send.dynamodb", fail)
    return sent


def test_no_resend_goes_out_once_the_deadline_leaves_no_room(ddb, settings):
    settings.ACCOUNTS_REQUEST_DEADLINE = 0.4  # attempts of 0.1 + 0.2 s
    sent = failing_sends(botocore.exceptions.ReadTimeoutError(endpoint_url="http://dynamodb.local"))

    started = time.monotonic()
    with deadline.started(), pytest.raises(OutcomeUnknown):
        store.signup("ada@example.org", "ada", "hash")

    # One attempt went out unanswered; the resend did not fit and was not sent.
    assert len(sent) == 1
    assert time.monotonic() - started < 0.4 + 0.3


def test_nothing_sent_before_the_deadline_is_unavailable(ddb, settings):
    settings.ACCOUNTS_REQUEST_DEADLINE = 0.4
    sent = failing_sends(botocore.exceptions.EndpointConnectionError(endpoint_url="http://dynamodb.local"))

    with deadline.started(), pytest.raises(Unavailable) as raised:
        store.signup("ada@example.org", "ada", "hash")

    assert not isinstance(raised.value, OutcomeUnknown)
    assert len(sent) == 1
    assert table_items() == {}
