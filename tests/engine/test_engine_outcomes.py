"""Unknown outcomes and old locks that change hands: "nothing was written" is said only when
it is known, a request in doubt is settled with its own token, and a lock handed back to
us between two attempts is released, never left behind."""

import uuid

import botocore.exceptions
import pytest

from accounts import audit, signals, store, transactions
from accounts.exceptions import Busy, OutcomeUnknown, Unavailable
from accounts.tables import Lock, dynamodb_client
from tests.engine.test_engine import locks, signup, table_items
from tests.engine.test_engine_faults import no_sleep, sent_tokens  # noqa: F401 (fixtures)
from tests.support import answer_before_call

pytestmark = pytest.mark.dynamodb_local

IN_PROGRESS = {
    "Error": {"Code": "TransactionInProgressException", "Message": "in progress"},
    "ResponseMetadata": {"HTTPStatusCode": 400},
}


@pytest.fixture
def created_signals():
    received = []

    def receiver(sender, account, **kwargs):
        received.append(account.PK)

    signals.account_created.connect(receiver)
    yield received
    signals.account_created.disconnect(receiver)


def break_connection_after_sending(client, times, *, commit_first=True):
    """The next ``times`` TransactWriteItems lose their answer; the first one (only) is
    really sent and committed when ``commit_first``; the rest never reach DynamoDB."""
    calls = []

    def before(**kwargs):
        calls.append(True)
        if len(calls) > 1 and len(calls) <= times:
            raise botocore.exceptions.ConnectionClosedError(endpoint_url=client.meta.endpoint_url)
        if len(calls) == 1 and not commit_first:
            raise botocore.exceptions.ConnectionClosedError(endpoint_url=client.meta.endpoint_url)
        return None

    def after(**kwargs):
        if len(calls) == 1:
            raise botocore.exceptions.ReadTimeoutError(endpoint_url=client.meta.endpoint_url)

    client.meta.events.register("before-call.dynamodb.TransactWriteItems", before)
    client.meta.events.register("after-call.dynamodb.TransactWriteItems", after)
    return calls


def test_in_progress_three_times_is_settled_with_the_same_token(ddb, sent_tokens, no_sleep, created_signals):
    answer_before_call(dynamodb_client(), [IN_PROGRESS] * transactions.TRANSPORT_ATTEMPTS)
    account, created = store.signup("ada@example.org", "ada", "hash")
    assert created and store.get_account(account.id)
    assert len(set(sent_tokens)) == 1 and len(sent_tokens) == transactions.TRANSPORT_ATTEMPTS + 1
    assert created_signals == [account.PK]


def test_in_progress_that_never_ends_is_an_unknown_outcome_with_its_token_not_busy(ddb, sent_tokens, no_sleep):
    answer_before_call(dynamodb_client(), [IN_PROGRESS] * 100)
    with pytest.raises(OutcomeUnknown) as raised:
        store.signup("ada@example.org", "ada", "hash")
    assert not isinstance(raised.value, Busy)
    assert raised.value.token == sent_tokens[0] and len(set(sent_tokens)) == 1
    assert table_items() == {}


def test_run_alone_reports_in_progress_exhausted_as_unknown(ddb, no_sleep):
    answer_before_call(dynamodb_client(), [IN_PROGRESS] * transactions.TRANSPORT_ATTEMPTS)
    transaction = transactions.plan_create(store.build_account("ada@example.org", "ada", "h"))
    with pytest.raises(OutcomeUnknown) as raised:
        transactions.run(transaction)
    assert raised.value.token == transaction.token


def test_a_committed_signup_whose_answers_all_broke_is_found_and_announced(ddb, no_sleep, created_signals):
    attempts = transactions.TRANSPORT_ATTEMPTS * (1 + len(transactions.SETTLE_DELAYS))
    calls = break_connection_after_sending(dynamodb_client(), attempts)
    account, created = store.signup("ada@example.org", "ada", "hash")
    assert len(calls) == attempts
    assert created and created_signals == [account.PK]
    assert set(table_items()) == {
        account.PK,
        "UNIQ#EMAIL#ada@example.org",
        "UNIQ#HANDLE#ada",
        "UNIQ#HANDLE_SKEL#ada",
    }


def test_a_signup_that_never_arrived_after_a_broken_connection_is_unknown_not_nothing_saved(ddb, no_sleep):
    attempts = transactions.TRANSPORT_ATTEMPTS * (1 + len(transactions.SETTLE_DELAYS))
    break_connection_after_sending(dynamodb_client(), attempts, commit_first=False)
    with pytest.raises(OutcomeUnknown) as raised:
        store.signup("ada@example.org", "ada", "hash", token=uuid.uuid4().hex)
    assert raised.value.token
    assert table_items() == {}


def test_refused_connections_are_still_unavailable_nothing_sent(settings, no_sleep):
    from project.dynamodb_local import free_port

    settings.ACCOUNTS_ENDPOINT_URL = f"http://127.0.0.1:{free_port()}"
    with pytest.raises(Unavailable):
        transactions.run(transactions.plan_create(store.build_account("ada@example.org", "ada", "h")))


def transfer_between_attempts(key, holder):
    """After the next cancelled TransactWriteItems, staff give lock ``key`` to ``holder``
    (a guarded repair), before the engine's next attempt."""
    done = []

    def after(http_response, **kwargs):
        if done or http_response.status_code == 200:
            return
        done.append(True)
        result = audit.repair_key(audit.WRONG_OWNER, key.split("#")[1], key, [holder.id])
        assert result.repaired, result.detail

    dynamodb_client().meta.events.register("after-call.dynamodb.TransactWriteItems", after)
    return done


@pytest.mark.parametrize("operation", ["change", "delete"])
def test_an_old_lock_handed_back_between_attempts_is_released_not_orphaned(ddb, operation):
    ada = signup("ada@example.org", "ada")
    bob = signup("bob@example.org", "bob")
    # Damage: ada's email lock names bob. The first attempt finds it is not ada's to release.
    Lock(PK="UNIQ#EMAIL#ada@example.org", owner=bob.PK).save()
    done = transfer_between_attempts("UNIQ#EMAIL#ada@example.org", ada)
    if operation == "change":
        store.change_email(ada, "countess@example.org")
    else:
        store.delete_account(ada)
    assert done
    assert "UNIQ#EMAIL#ada@example.org" not in locks()
    assert audit.run_audit().consistent
    assert signup("ada@example.org", "ada2")


def test_an_old_lock_still_held_by_another_item_is_kept(ddb):
    ada = signup("ada@example.org", "ada")
    bob = signup("bob@example.org", "bob")
    Lock(PK="UNIQ#EMAIL#ada@example.org", owner=bob.PK).save()
    transaction = transactions.plan_change(
        ada, {"email": "c@example.org"}, keep_locks={"UNIQ#EMAIL#ada@example.org": bob.PK}
    )
    assert [(action.kind, action.role) for action in transaction.actions] == [
        ("Update", "item"),
        ("Put", "new_lock"),
        ("ConditionCheck", "kept_lock"),
    ]
    store.change_email(ada, "c@example.org")
    assert locks()["UNIQ#EMAIL#ada@example.org"] == bob.PK
