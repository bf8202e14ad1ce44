"""Guards shown by a write that lands between a request's read and its transaction: each
test plants that write just before the transaction is sent (deterministic, unlike a race
of threads), and checks the outcome the guard exists for. tests/guard_mutations.tsv names
each as the catching test of its guard: without the guard, the test fails."""

import contextlib
import time
import uuid
from datetime import timedelta

import pytest

from accounts import sessions, store
from accounts.exceptions import ItemDeleted, StaleItem, TransactionCancelled, UniqueViolation
from accounts.mfa import recovery_codes
from accounts.mfa import store as mfa_store
from accounts.tables import Account, Lock
from accounts.transactions.actions import Transaction
from tests.engine.test_engine import locks, signup
from tests.engine.test_tombstones import forgotten_tokens  # noqa: F401 (a fixture)

pytestmark = pytest.mark.dynamodb_local


@contextlib.contextmanager
def before_attempt(number, write):
    """Run ``write`` once, just before the ``number``-th transaction (1: the first) is sent."""
    request = Transaction.request
    sent = []

    def request_after_write(self):
        sent.append(self.operation)
        if len(sent) == number:
            Transaction.request = request  # the write's own transactions go as they are
            try:
                write()
            finally:
                Transaction.request = request_after_write
        return request(self)

    Transaction.request = request_after_write
    try:
        yield sent
    finally:
        Transaction.request = request


def test_a_change_keeping_an_old_lock_handed_back_meanwhile_releases_it(ddb):
    ada = signup("ada@example.org", "ada")
    bob = signup("bob@example.org", "bob")
    old_lock = "UNIQ#EMAIL#ada@example.org"
    Lock(PK=old_lock, owner=bob.PK).save()  # damage: ada's old address names bob

    # The first attempt finds the lock bob's and is cancelled; before the second (which keeps
    # it as bob's), the audit hands it back to ada.
    with before_attempt(2, lambda: Lock(PK=old_lock, owner=ada.PK).save()) as sent:
        store.change_email(ada, "countess@example.org")

    assert len(sent) >= 3
    assert old_lock not in locks()
    assert locks()["UNIQ#EMAIL#countess@example.org"] == ada.PK


def test_a_deletion_keeping_an_old_lock_handed_back_meanwhile_releases_it(ddb):
    ada = signup("ada@example.org", "ada")
    bob = signup("bob@example.org", "bob")
    old_lock = "UNIQ#EMAIL#ada@example.org"
    Lock(PK=old_lock, owner=bob.PK).save()

    with before_attempt(2, lambda: Lock(PK=old_lock, owner=ada.PK).save()) as sent:
        store.delete_account(ada)

    assert len(sent) >= 3
    assert [key for key, owner in locks().items() if owner == ada.PK] == []


def test_an_applied_email_change_keeping_an_old_lock_handed_back_meanwhile_releases_it(ddb):
    ada = signup("ada@example.org", "ada")
    bob = signup("bob@example.org", "bob")
    nonce = store.request_email_change(ada, "countess@example.org")
    old_lock = "UNIQ#EMAIL#ada@example.org"
    Lock(PK=old_lock, owner=bob.PK).save()

    with before_attempt(2, lambda: Lock(PK=old_lock, owner=ada.PK).save()) as sent:
        store.apply_email_change(store.get_account(ada.id), "ada@example.org", "countess@example.org", nonce)

    assert len(sent) >= 3
    assert old_lock not in locks()
    assert locks()["UNIQ#EMAIL#countess@example.org"] == ada.PK


def test_an_applied_email_change_never_removes_an_old_lock_another_account_owns(ddb):
    ada = signup("ada@example.org", "ada")
    bob = signup("bob@example.org", "bob")
    nonce = store.request_email_change(ada, "countess@example.org")
    old_lock = "UNIQ#EMAIL#ada@example.org"
    Lock(PK=old_lock, owner=bob.PK).save()

    store.apply_email_change(store.get_account(ada.id), "ada@example.org", "countess@example.org", nonce)

    assert locks()[old_lock] == bob.PK
    assert locks()["UNIQ#EMAIL#countess@example.org"] == ada.PK


def test_an_unverified_sign_up_with_a_username_another_account_holds_is_refused_naming_username(ddb):
    ada = signup("ada@example.org", "ada")

    with pytest.raises(UniqueViolation) as caught:
        store.signup("other@example.org", "ada", "argon2$not-a-real-hash", email_verified=False)

    assert caught.value.fields == {"username"}
    assert locks()["UNIQ#HANDLE#ada"] == ada.PK


def test_an_unverified_sign_up_replayed_after_the_idempotency_window_cannot_bring_a_discarded_id_back(forgotten_tokens):
    token = uuid.uuid4().hex
    dora, created = store.signup(
        "dora@example.org", "dora", "argon2$not-a-real-hash", token=token, email_verified=False
    )
    assert created
    store.discard_signup(dora)

    with pytest.raises(ItemDeleted):
        store.signup("dora@example.org", "dora", "argon2$not-a-real-hash", token=token, email_verified=False)

    assert store.get_account(dora.id) is None


def test_an_unverified_account_cannot_change_to_an_address_a_verified_account_holds(ddb):
    ada = signup("ada@example.org", "ada")
    carol, _ = store.signup("carol@example.org", "carol", "argon2$not-a-real-hash", email_verified=False)

    with pytest.raises(UniqueViolation) as caught:
        store.update_account(store.get_account(carol.id), email="ada@example.org")

    assert caught.value.fields == {"email"}
    assert store.get_account(carol.id).email == "carol@example.org"
    assert locks()["UNIQ#EMAIL#ada@example.org"] == ada.PK


def test_a_request_for_an_address_another_account_holds_is_refused_naming_email(ddb, settings):
    settings.ACCOUNTS_PREVENT_ENUMERATION = False  # the check is sent only when refusals may show
    signup("bob@example.org", "bob")
    ada = signup("ada@example.org", "ada")

    with pytest.raises(UniqueViolation) as caught:
        store.request_email_change(store.get_account(ada.id), "bob@example.org")

    assert caught.value.fields == {"email"}
    assert store.get_account(ada.id).pending_email is None


def test_a_new_session_never_takes_the_key_of_a_live_one(ddb, monkeypatch):
    first = sessions.SessionStore()
    first["cart"] = "tea"
    first.create()
    # The second session's first random key is the first one's (165 random bits make this
    # a planted collision): its guarded Put is refused and it draws another key.
    second = sessions.SessionStore()
    keys = iter([first.session_key])
    draw = second._get_new_session_key
    monkeypatch.setattr(second, "_get_new_session_key", lambda: next(keys, None) or draw())
    second["cart"] = "coffee"
    second.create()

    assert second.session_key != first.session_key
    assert sessions.SessionStore(first.session_key).load()["cart"] == "tea"
    assert sessions.SessionStore(second.session_key).load()["cart"] == "coffee"


@pytest.fixture
def same_tick(monkeypatch):
    """``same_tick(account)``: the next writes stamp ``updated`` as ``account`` has it, as two
    writes within one tick of a coarse clock do: a stale read is then refused only by the
    values it read."""

    def stop_at(account):
        monkeypatch.setattr(store, "utcnow", lambda: account.updated)

    return stop_at


def test_an_email_change_from_a_read_before_another_email_change_in_the_same_tick_is_stale(ddb, same_tick):
    ada = signup("ada@example.org", "ada")
    earlier = store.get_account(ada.id)
    same_tick(earlier)
    store.change_email(store.get_account(ada.id), "first@example.org")

    with pytest.raises(StaleItem):
        store.change_email(earlier, "second@example.org")

    assert locks()["UNIQ#EMAIL#first@example.org"] == ada.PK
    assert "UNIQ#EMAIL#second@example.org" not in locks()


def test_a_username_change_from_a_read_before_another_in_the_same_tick_is_stale(ddb, same_tick):
    ada = signup("ada@example.org", "ada")
    earlier = store.get_account(ada.id)
    same_tick(earlier)
    store.change_username(store.get_account(ada.id), "countess")

    with pytest.raises(StaleItem):
        store.change_username(earlier, "lovelace")

    assert locks()["UNIQ#HANDLE#countess"] == ada.PK
    assert "UNIQ#HANDLE#lovelace" not in locks()


def test_a_verification_from_a_read_before_an_email_change_in_the_same_tick_is_stale(ddb, same_tick):
    carol, _ = store.signup("carol@example.org", "carol", "argon2$not-a-real-hash", email_verified=False)
    earlier = store.get_account(carol.id)
    same_tick(earlier)
    store.update_account(store.get_account(carol.id), email="caroline@example.org")

    with pytest.raises(StaleItem):
        store.verify_email(earlier)

    assert store.get_account(carol.id).email_verified is False
    assert "UNIQ#EMAIL#carol@example.org" not in locks()


def test_an_unverified_account_past_its_expiry_cannot_change_its_email(lagging_ttl, settings):
    settings.ACCOUNTS_UNVERIFIED_EXPIRY = timedelta(seconds=-5)
    carol, _ = store.signup("carol@example.org", "carol", "argon2$not-a-real-hash", email_verified=False)
    # Read before it expired (a lookup would not return it now); TTL has not deleted it yet.
    as_read = Account.get(carol.PK, "PROFILE", consistent_read=True)

    with pytest.raises(StaleItem):
        store.update_account(as_read, email="caroline@example.org")

    assert Account.get(carol.PK, "PROFILE", consistent_read=True).email == "carol@example.org"


def test_a_deletion_from_a_read_before_an_email_change_is_stale(ddb):
    ada = signup("ada@example.org", "ada")
    earlier = store.get_account(ada.id)
    store.change_email(store.get_account(ada.id), "countess@example.org")

    with pytest.raises(StaleItem):
        store.delete_account(earlier)

    assert store.get_account(ada.id).email == "countess@example.org"
    assert locks()["UNIQ#EMAIL#countess@example.org"] == ada.PK


def test_a_verification_never_takes_a_username_lock_another_server_took_over(ddb, settings, monkeypatch):
    # No margin, and a server whose clock runs ahead of the others by more than the unverified
    # account's lifetime: for it, carol's username lock has expired, and dave takes it over.
    settings.ACCOUNTS_CLOCK_SKEW_MARGIN = timedelta(0)
    settings.ACCOUNTS_UNVERIFIED_EXPIRY = timedelta(seconds=60)
    carol, _ = store.signup("carol@example.org", "carol", "argon2$not-a-real-hash", email_verified=False)
    now = time.time()
    with monkeypatch.context() as ahead:
        ahead.setattr(time, "time", lambda: now + 120)
        dave, _ = store.signup("dave@example.org", "carol", "argon2$not-a-real-hash", email_verified=True)

    with pytest.raises(TransactionCancelled):
        store.verify_email(store.get_account(carol.id))

    assert locks()["UNIQ#HANDLE#carol"] == dave.PK
    assert store.get_account(carol.id).email_verified is False


def test_an_authenticator_app_enrolled_from_a_read_before_another_enrolment_in_the_same_tick_is_stale(ddb, same_tick):
    ada = signup("ada@example.org", "ada")
    earlier = store.get_account(ada.id)
    same_tick(earlier)
    mfa_store.enable_totp(store.get_account(ada.id), "A" * 32, 1)

    with pytest.raises(StaleItem):
        mfa_store.enable_totp(earlier, "B" * 32, 2)

    assert store.get_account(ada.id).totp_secret == "A" * 32


def test_recovery_codes_regenerated_from_a_read_before_another_regeneration_in_the_same_tick_are_stale(ddb, same_tick):
    ada = signup("ada@example.org", "ada")
    mfa_store.set_recovery_codes(store.get_account(ada.id), ["first-1", "first-2"])
    earlier = store.get_account(ada.id)
    same_tick(earlier)
    mfa_store.set_recovery_codes(store.get_account(ada.id), ["second-1", "second-2"])

    with pytest.raises(StaleItem):
        mfa_store.set_recovery_codes(earlier, ["third-1", "third-2"])

    stored = store.get_account(ada.id).recovery_codes
    assert stored == {recovery_codes.digest(ada.id, code) for code in ("second-1", "second-2")}
