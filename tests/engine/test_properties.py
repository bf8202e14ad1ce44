"""Property tests of the lock protocol on a real DynamoDB Local (a Hypothesis state machine).

Random sequences of sign-ups (verified, and unverified: holding no email lock until
verified), verifications, email/username changes (alone and both at once, and the verified
email change: its request, then its link), password changes, deletions and audit repairs, on a small pool of values so they collide, run one
at a time and in concurrent bursts on a thread pool; planted damage is repaired while
other operations race the repair. Each operation runs on one of three app servers whose
clocks differ (2 s slow, on time, 2 s fast), unverified sign-ups expire after 3 s, and a
claim is taken past a 5 s margin. After every step a consistent Scan checks I1, I2 and I3
(:mod:`tests.invariants`) on the true clock.

Bounded to about a minute by default. Longer runs::

    ACCOUNTS_PROPERTY_PROFILE=long make test PYTEST_ARGS="tests/engine/test_properties.py -s"

Every run prints its seed: ``ACCOUNTS_PROPERTY_SEED=<seed>`` draws the same operations in
the same order again. A failure is shrunk by Hypothesis, which prints the shortest failing
program and a ``@reproduce_failure('<version>', b'<blob>')`` line:
``ACCOUNTS_PROPERTY_BLOB=<blob>`` replays exactly that program. Threads interleave as they
will, so a replayed burst may need a few runs to fail again.

Adding an operation: write a function ``(machine, *args)`` in :data:`OPERATIONS` and its
argument strategy in :data:`ARGUMENTS`; every rule, burst and count picks it up.
"""

import collections
import os
import random
import threading
import uuid
from concurrent.futures import ThreadPoolExecutor

import pytest
from hypothesis import HealthCheck, __version__, reproduce_failure, seed, settings
from hypothesis import strategies as st
from hypothesis.stateful import RuleBasedStateMachine, invariant, rule, run_state_machine_as_test

from accounts import audit, store
from accounts.exceptions import Busy, StaleItem, UniqueViolation
from accounts.tables import ACCOUNT_PREFIX, PROFILE_SORT_KEY, TableModel, create_table
from tests import flows
from tests.invariants import is_live, scan_everything, violations
from tests.seeding import delete_lock, lock_keys, write_locks, write_ownerless_lock

pytestmark = pytest.mark.dynamodb_local

PROFILES = {
    # About a minute on DynamoDB Local, inside `make test`.
    "bounded": settings(max_examples=6, stateful_step_count=15),
    "long": settings(max_examples=200, stateful_step_count=40),
}
# No deadline (DynamoDB Local's latency varies), no example database (a seed says it all).
COMMON = {"deadline": None, "database": None, "print_blob": True, "suppress_health_check": list(HealthCheck)}

# The servers' clocks (seconds off the true clock), the unverified sign-ups' lifetime, and
# the margin past which a claim is taken (above the 4 s between the clocks).
SKEWS = (-2.0, 0.0, 2.0)
UNVERIFIED_SECONDS = 3
MARGIN_SECONDS = 5
EMAILS = [f"p{n}@example.com" for n in range(4)]
USERNAMES = [f"p{n}" for n in range(4)]
HASH = "!property-tests"
# Refusals an operation may meet under contention: answers, not failures of the protocol.
REFUSALS = (UniqueViolation, StaleItem, Busy)


def _account(machine, index):
    """The account ``index`` picks among those that existed at the last check, read now
    (consistently), or ``None`` when there is none (any more)."""
    if not machine.known:
        return None
    return store.get_account(machine.known[index % len(machine.known)])


def signup(machine, email, username):
    store.signup(email, username, HASH)


def signup_unverified(machine, email, username):
    store.signup(email, username, HASH, email_verified=False)


def verify(machine, index):
    account = _account(machine, index)
    if account is not None:
        store.verify_email(account)


def change_email_by_link(machine, index, email):
    flows.change_email_by_link(_account(machine, index), email)


def change_email(machine, index, email):
    account = _account(machine, index)
    if account is not None:
        store.change_email(account, email)


def change_username(machine, index, username):
    account = _account(machine, index)
    if account is not None:
        store.change_username(account, username)


def change_both(machine, index, email, username):
    account = _account(machine, index)
    if account is not None:
        store.update_account(account, email=email, username=username)


def change_password(machine, index):
    account = _account(machine, index)
    if account is not None:
        store.set_password_hash(account, f"!{uuid.uuid4().hex}")


def delete(machine, index):
    account = _account(machine, index)
    if account is not None:
        store.delete_account(account)


def repair(machine):
    audit.repair_all(audit.run_audit())


OPERATIONS = {
    "signup": signup,
    "signup_unverified": signup_unverified,
    "verify": verify,
    "change_email_by_link": change_email_by_link,
    "change_email": change_email,
    "change_username": change_username,
    "change_both": change_both,
    "change_password": change_password,
    "delete": delete,
    "repair": repair,
}
index = st.integers(0, 7)
ARGUMENTS = {
    "signup": st.tuples(st.sampled_from(EMAILS), st.sampled_from(USERNAMES)),
    "signup_unverified": st.tuples(st.sampled_from(EMAILS), st.sampled_from(USERNAMES)),
    "verify": st.tuples(index),
    "change_email_by_link": st.tuples(index, st.sampled_from(EMAILS)),
    "change_email": st.tuples(index, st.sampled_from(EMAILS)),
    "change_username": st.tuples(index, st.sampled_from(USERNAMES)),
    "change_both": st.tuples(index, st.sampled_from(EMAILS), st.sampled_from(USERNAMES)),
    "change_password": st.tuples(index),
    "delete": st.tuples(index),
    "repair": st.tuples(),
}
operations = st.one_of(
    [st.tuples(st.just(name), arguments, st.sampled_from(SKEWS)) for name, arguments in ARGUMENTS.items()]
)
DAMAGE = ("delete_lock", "orphan_lock", "ownerless_lock", "wrong_owner")


class Tally:
    """Operations run, by name and outcome, across every example (thread-safe)."""

    def __init__(self):
        self.counts = collections.Counter()
        self.checks = 0  # I1-I3 scans: one at the start of each example and after each step
        self.examples = 0
        self._lock = threading.Lock()

    def add(self, name, outcome):
        with self._lock:
            self.counts[(name, outcome)] += 1

    def summary(self):
        operations = sum(self.counts.values())
        by_name, done = collections.Counter(), collections.Counter()
        for (name, outcome), count in self.counts.items():
            by_name[name] += count
            done[name] += count if outcome == "ok" else 0
        refused = sum(count for (_, outcome), count in self.counts.items() if outcome != "ok")
        return (
            f"{self.examples} examples, {self.checks - self.examples} steps ({self.checks} I1-I3 scans), "
            f"{operations} operations "
            f"({refused} refused under contention): "
            + ", ".join(f"{name} {count} ({done[name]} ok)" for name, count in sorted(by_name.items()))
        )


class LockProtocol(RuleBasedStateMachine):
    """One example: a fresh table, then random steps; I1-I3 after each."""

    def __init__(self, django_settings, tally, clocks):
        super().__init__()
        self.django_settings = django_settings
        self.tally = tally
        self.clocks = clocks
        tally.examples += 1
        django_settings.ACCOUNTS_TABLE_NAME = f"prop-{uuid.uuid4().hex[:12]}"
        create_table(wait=True)
        self.known = []

    def teardown(self):
        TableModel.delete_table()

    def perform(self, operation):
        name, arguments, skew = operation
        try:
            with self.clocks.server(skew):
                OPERATIONS[name](self, *arguments)
        except REFUSALS as error:
            self.tally.add(name, type(error).__name__)
        else:
            self.tally.add(name, "ok")

    def burst(self, batch):
        with ThreadPoolExecutor(max_workers=len(batch)) as pool:
            # list() re-raises the first unexpected exception of any operation.
            list(pool.map(self.perform, batch))

    @rule(operation=operations)
    def one(self, operation):
        self.perform(operation)

    @rule(batch=st.lists(operations, min_size=2, max_size=8))
    def concurrently(self, batch):
        self.burst(batch)

    @rule(damage=st.sampled_from(DAMAGE), which=index, batch=st.lists(operations, max_size=6))
    def damage_then_repair_racing(self, damage, which, batch):
        """Damage planted behind the engine's back, repaired while other operations race
        the repair; a last quiet repair must leave the table sound."""
        account = _account(self, which)
        if account is None:
            write_locks({f"UNIQ#HANDLE#stray{which}": f"ACCT#gone{which}"})
        elif damage == "delete_lock":
            delete_lock(lock_keys(account)[0])
            # A missing lock lets anyone take the value: repair it before anything races,
            # or the damage itself (not the engine) would make a duplicate.
            repair(self)
        elif damage == "orphan_lock":
            write_locks({f"UNIQ#EMAIL#stray{which}@example.com": account.PK})
        elif damage == "ownerless_lock":
            write_ownerless_lock(f"UNIQ#HANDLE#nobody{which}")
        else:
            others = [pk for pk in self.known if pk != account.id]
            write_locks({lock_keys(account)[-1]: f"ACCT#{others[0] if others else 'gone'}"})
        self.burst([("repair", (), 0.0), *batch])
        self.tally.add("repair", "ok")
        repair(self)
        report = audit.run_audit()
        assert all(not finding.repairable for finding in report.findings), [f.describe() for f in report.findings]

    @invariant()
    def locks_are_sound(self):
        self.tally.checks += 1
        assert violations() == []
        self.known = sorted(
            raw["PK"]["S"][len(ACCOUNT_PREFIX) :]
            for raw in scan_everything()
            if raw["SK"]["S"] == PROFILE_SORT_KEY and is_live(raw) and "deleted" not in raw
        )


def test_random_operations_and_bursts_keep_i1_i2_i3(ddb, settings, clocks, capsys):
    settings.ACCOUNTS_UNVERIFIED_EXPIRY = UNVERIFIED_SECONDS
    settings.ACCOUNTS_CLOCK_SKEW_MARGIN = MARGIN_SECONDS
    profile = os.environ.get("ACCOUNTS_PROPERTY_PROFILE", "bounded")
    chosen = settings_for(profile)
    run_seed = int(os.environ.get("ACCOUNTS_PROPERTY_SEED") or random.randrange(2**32))
    tally = Tally()
    fixture_table = settings.ACCOUNTS_TABLE_NAME
    with capsys.disabled():
        print(f"\nproperty test: profile {profile}, seed {run_seed} (rerun: ACCOUNTS_PROPERTY_SEED={run_seed})")
    factory = seed(run_seed)(lambda: LockProtocol(settings, tally, clocks))
    blob = os.environ.get("ACCOUNTS_PROPERTY_BLOB")
    if blob:
        # The shrunk example exactly, from the b'...' Hypothesis printed for it.
        factory = reproduce_failure(__version__, blob.encode())(factory)
    try:
        run_state_machine_as_test(factory, settings=chosen)
    finally:
        settings.ACCOUNTS_TABLE_NAME = fixture_table  # the ddb fixture deletes its own table
        with capsys.disabled():
            print(f"property test: {tally.summary()} (seed {run_seed})")
    assert tally.checks > tally.examples


def settings_for(profile):
    if profile not in PROFILES:
        raise ValueError(f"ACCOUNTS_PROPERTY_PROFILE must be one of {', '.join(PROFILES)}, not {profile!r}.")
    return settings(PROFILES[profile], **COMMON)
