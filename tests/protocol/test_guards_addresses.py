"""The guards of an account's other addresses, each shown by a write landing between a
request's read and its transaction in the same tick of the clock (so ``updated = :read``
holds, as two writes of one coarse tick leave it): only the guard on the values read refuses
the stale request. tests/guard_mutations.tsv names each test as its guard's catching test."""

import pytest
from django.contrib.auth.hashers import make_password

from accounts import addresses, store
from accounts.exceptions import StaleItem
from tests.engine.test_engine import locks
from tests.invariants import violations
from tests.protocol.test_guards_stale_reads import same_tick  # noqa: F401 (a fixture)

pytestmark = pytest.mark.dynamodb_local


@pytest.fixture
def ada(ddb, settings):
    """ada, with work@example.org confirmed and home@example.org waiting for its link."""
    settings.ACCOUNTS_MAX_EMAIL_ADDRESSES = 4
    ada, _ = store.signup("ada@example.com", "ada", make_password("x"))
    addresses.add_unverified(ada, "work@example.org")
    addresses.verify(store.get_account(ada.id), "work@example.org")
    addresses.add_unverified(store.get_account(ada.id), "home@example.org")
    return store.get_account(ada.id)


def fresh(account):
    return store.get_account(account.id)


def test_a_removal_from_a_read_before_another_addresss_verification_in_the_same_tick_is_stale(ada, same_tick):
    same_tick(ada)
    addresses.verify(fresh(ada), "home@example.org")

    with pytest.raises(StaleItem):
        addresses.remove(ada, "work@example.org")

    assert fresh(ada).email_addresses == {"work@example.org", "home@example.org"}
    assert violations() == []


def test_a_verification_from_a_read_before_the_addresss_removal_in_the_same_tick_is_stale(ada, same_tick):
    same_tick(ada)
    addresses.remove(fresh(ada), "home@example.org")

    with pytest.raises(StaleItem):
        addresses.verify(ada, "home@example.org")

    assert "UNIQ#EMAIL#home@example.org" not in locks()
    assert addresses.find(fresh(ada), "home@example.org") is None


def test_make_primary_from_a_read_before_staff_set_an_unverified_primary_in_the_same_tick_is_stale(ada, same_tick):
    same_tick(ada)
    store.set_unverified_email(fresh(ada), "new@example.com")

    with pytest.raises(StaleItem):
        addresses.make_primary(ada, "work@example.org")

    assert fresh(ada).email == "new@example.com"
    assert violations() == []


def test_the_removal_of_the_last_verified_address_from_a_read_before_staff_unverified_the_primary_is_stale(
    ada, same_tick
):
    same_tick(ada)
    store.set_unverified_email(fresh(ada), "new@example.com")

    with pytest.raises(StaleItem):
        addresses.remove(ada, "work@example.org")

    assert addresses.verified_addresses(fresh(ada)) == ["work@example.org"]


def test_a_deletion_from_a_read_before_an_addresss_verification_is_stale(ada, same_tick):
    same_tick(ada)
    addresses.verify(fresh(ada), "home@example.org")

    with pytest.raises(StaleItem):
        store.delete_account(ada)

    assert locks()["UNIQ#EMAIL#home@example.org"] == ada.PK
    assert violations() == []
