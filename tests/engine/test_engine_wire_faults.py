"""Faults on the wire between the engine and DynamoDB Local (tests/proxy.py): answers
dropped after commit, connections reset before sending, delays. The invariants hold, and
no operation applies twice or is reported as failed when it committed."""

import os
import random
import uuid
from concurrent.futures import ThreadPoolExecutor

import pytest

from accounts import store, transactions
from accounts.exceptions import Busy, OutcomeUnknown, StaleItem, UniqueViolation
from accounts.uniqueness import normalize_text
from tests.invariants import violations
from tests.proxy import DELAY, DROP_ANSWER, RESET
from tests.web import stored_accounts

pytestmark = pytest.mark.dynamodb_local

HASH = "!wire-faults"
WRITE = "TransactWriteItems"


def first_write(fault):
    """Inject ``fault`` on the next TransactWriteItems only."""
    pending = [fault]

    def choose(operation):
        return pending.pop() if operation == WRITE and pending else None

    return choose


def accounts_in_table():
    return {account.PK: (account.email, account.username) for account in stored_accounts()}


@pytest.mark.parametrize("fault", [DROP_ANSWER, RESET, DELAY])
def test_a_signup_through_one_fault_is_written_once_and_reported_created(proxy, fault):
    proxy.fault = first_write(fault)
    account, created = store.signup("ada@example.com", "ada", HASH)
    assert created
    assert accounts_in_table() == {account.PK: ("ada@example.com", "ada")}
    assert proxy.snapshot()[WRITE] == (1 if fault == DELAY else 2)
    assert violations() == []


def test_a_change_whose_answer_is_dropped_after_commit_is_not_reported_as_a_collision(proxy):
    account, _ = store.signup("ada@example.com", "ada", HASH)
    proxy.fault = first_write(DROP_ANSWER)
    store.change_email(account, "countess@example.com")
    assert accounts_in_table() == {account.PK: ("countess@example.com", "ada")}
    assert violations() == []


def test_a_delete_whose_answer_is_dropped_after_commit_completes(proxy):
    account, _ = store.signup("ada@example.com", "ada", HASH)
    proxy.fault = first_write(DROP_ANSWER)
    store.delete_account(account)
    assert accounts_in_table() == {}
    assert violations() == []


class Model:
    """What the table must hold, kept from the answers the engine gave."""

    def __init__(self):
        self.accounts = {}

    def taken(self, field, value, *, besides=None):
        position = 0 if field == "email" else 1
        return any(
            normalize_text(values[position]) == normalize_text(value)
            for pk, values in self.accounts.items()
            if pk != besides
        )


def random_faults(rng, rate):
    def choose(operation):
        if operation != WRITE or rng.random() >= rate:
            return None
        return rng.choice([DROP_ANSWER, RESET, DELAY])

    return choose


FAULT_OPERATIONS = int(os.environ.get("ACCOUNTS_FAULT_OPERATIONS", "40"))


def test_random_operations_through_random_faults_match_a_model_exactly(proxy, monkeypatch):
    run_seed = int(os.environ.get("ACCOUNTS_PROPERTY_SEED") or random.randrange(2**32))
    print(f"wire faults: seed {run_seed} (rerun: ACCOUNTS_PROPERTY_SEED={run_seed})")
    rng = random.Random(run_seed)
    monkeypatch.setattr(transactions.running, "SETTLE_DELAYS", (0.05, 0.1, 0.2))
    proxy.fault = random_faults(rng, 0.4)
    model = Model()
    emails = [f"w{n}@example.com" for n in range(3)]
    names = [f"w{n}" for n in range(3)]
    done = {}
    for _ in range(FAULT_OPERATIONS):
        pks = sorted(model.accounts)
        kind = rng.choice(["signup", "signup", "email", "username", "delete"] if pks else ["signup"])
        try:
            if kind == "signup":
                email, name, token = rng.choice(emails), rng.choice(names), uuid.uuid4().hex
                try:
                    account, created = store.signup(email, name, HASH, token=token)
                except UniqueViolation as refused:
                    # Only for a value really held by another account: never our own replay.
                    assert all(model.taken(field, email if field == "email" else name) for field in refused.fields)
                else:
                    assert created
                    model.accounts[account.PK] = (email, name)
            else:
                pk = rng.choice(pks)
                account = store.get_account(pk.partition("#")[2])
                if kind == "delete":
                    store.delete_account(account)
                    del model.accounts[pk]
                else:
                    field = "email" if kind == "email" else "username"
                    value = rng.choice(emails if kind == "email" else names)
                    try:
                        store.update_account(account, **{field: value})
                    except UniqueViolation:
                        assert model.taken(field, value, besides=pk)
                    else:
                        email, name = model.accounts[pk]
                        model.accounts[pk] = (value, name) if field == "email" else (email, value)
            done[kind] = done.get(kind, 0) + 1
        except OutcomeUnknown:
            # Allowed, never silently: learn the truth from the table.
            done["unknown"] = done.get("unknown", 0) + 1
            model.accounts = accounts_in_table()
        assert accounts_in_table() == model.accounts
        assert violations() == []
    print(
        f"wire faults: {sum(done.values())} operations {done}, faults {dict(proxy.faults)}, requests {proxy.snapshot()}"
    )
    assert sum(proxy.faults.values()) > 0


def test_concurrent_bursts_through_random_faults_keep_the_invariants(proxy):
    rng = random.Random()
    proxy.fault = random_faults(rng, 0.3)
    emails = [f"b{n}@example.com" for n in range(3)]

    def attempt(n):
        try:
            account, _ = store.signup(emails[n % 3], f"b{n}", HASH)
            store.change_email(account, emails[(n + 1) % 3])
        except (UniqueViolation, StaleItem, Busy, OutcomeUnknown):
            pass

    for _ in range(3):
        with ThreadPoolExecutor(max_workers=6) as pool:
            list(pool.map(attempt, range(6)))
        assert violations() == []
