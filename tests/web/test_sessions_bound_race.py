"""``ACCOUNTS_MAX_SESSIONS`` is a bound, not a count (issue 30, point 3): a login's new
session takes a session slot in its own transaction, guarded by the slot's holder as read,
so concurrent logins cannot leave more live sessions than slots. Races on DynamoDB Local."""

import threading
from concurrent.futures import ThreadPoolExecutor

import pytest
from django.test import Client

from accounts import dynamo, sessions
from accounts.tables import account_pk
from tests.web import login, signed_up_client
from tests.web.test_sessions import account_id_of, is_logged_in, session_items

pytestmark = pytest.mark.dynamodb_local

LIMIT = 3
LOGINS = 16
ROUNDS = 4


@pytest.fixture
def three_sessions_at_most(settings):
    settings.ACCOUNTS_MAX_SESSIONS = LIMIT
    # 16 logins of one account from one address in a second: the rate limits would refuse
    # most of them, and this test is about what the accepted ones leave.
    settings.ACCOUNTS_RATE_LIMITS = {}


def at_once(count, send):
    barrier = threading.Barrier(count)

    def start(number):
        barrier.wait()
        return send(number)

    with ThreadPoolExecutor(max_workers=count) as pool:
        return list(pool.map(start, range(count)))


def live_sessions(account_id):
    now = sessions._epoch()
    return [raw for raw in session_items(account_id) if int(raw["expires"]["N"]) >= now]


def test_16_concurrent_password_logins_leave_at_most_the_limit_of_live_sessions_every_round(
    ddb, three_sessions_at_most
):
    account_id = account_id_of(signed_up_client())
    after_each_round, logged_in = [], []
    for _ in range(ROUNDS):
        clients = [Client() for _ in range(LOGINS)]
        answers = at_once(LOGINS, lambda number, clients=clients: login(clients[number], "ada"))
        assert [answer.status_code for answer in answers] == [302] * LOGINS
        after_each_round.append(len(live_sessions(account_id)))
        logged_in.append(sum(is_logged_in(client) for client in clients))
    assert after_each_round == [LIMIT] * ROUNDS, f"live sessions after each round: {after_each_round}"
    assert all(count <= LIMIT for count in logged_in), f"clients still logged in after each round: {logged_in}"


def test_each_live_session_holds_its_own_slot(ddb, three_sessions_at_most):
    account_id = account_id_of(signed_up_client())
    for _ in range(4):
        login(Client(), "ada")

    slots = {
        raw["SK"]["S"]: raw["holder"]["S"]
        for raw in dynamo.query_partition(account_pk(account_id), sessions.SLOT_SORT_PREFIX)
    }
    held = sorted(slots.values())
    assert sorted(slots) == [f"{sessions.SLOT_SORT_PREFIX}{number}" for number in range(LIMIT)]
    assert held == sorted(raw["SK"]["S"] for raw in live_sessions(account_id))


def test_a_login_whose_slot_was_taken_meanwhile_chooses_again_and_keeps_the_bound(
    ddb, three_sessions_at_most, monkeypatch
):
    """The slot the login read as free was taken by another login before its write: its
    guard cancels it, it reads the partition again and takes another slot."""
    first = signed_up_client()
    account_id = account_id_of(first)
    choose = sessions.SessionStore._choose_slot
    raced = []

    def taken_meanwhile(store, chosen_for):
        choice = choose(store, chosen_for)
        if not raced:
            raced.append(choice)
            login(Client(), "ada")  # another login of the account takes that very slot
        return choice

    monkeypatch.setattr(sessions.SessionStore, "_choose_slot", taken_meanwhile)
    second = Client()
    assert login(second, "ada").status_code == 302

    assert is_logged_in(second)
    assert len(live_sessions(account_id)) == 3
