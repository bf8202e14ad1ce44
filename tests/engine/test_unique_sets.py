"""Unique sets on DynamoDB Local: each element of a set-valued attribute a unique value with
its own lock, keyed by a Unicode-dependent normalizer and recorded in ``lock_keys``; every
change of the set ONE transaction; a namespace shared with a single value (a primary and
its other addresses, a handle and its nicknames)."""

import pytest
from pynamodb.attributes import MapAttribute, UnicodeAttribute, UnicodeSetAttribute

from accounts import lookups, transactions
from accounts.exceptions import InvalidUniqueValue, UniqueViolation
from accounts.tables import Lock, dynamodb_client
from accounts.tables import TableModel as Base
from accounts.uniqueness import UniqueConstraint, keys_in_namespace, normalize_text
from tests.engine.test_engine import locks, table_items
from tests.engine.test_engine_concurrency import race

pytestmark = pytest.mark.dynamodb_local

VERSION = "test-unicode-1"


class Gamer(Base):
    """A player with a handle and up to 3 nicknames: one namespace, each case-folded (NFKC),
    so a nickname is nobody else's handle or nickname, and not its own handle either."""

    key_prefix = "GAMER#"
    PK = UnicodeAttribute(hash_key=True)
    SK = UnicodeAttribute(range_key=True, default="PROFILE")
    handle = UnicodeAttribute()
    nicknames = UnicodeSetAttribute(null=True)
    lock_keys = MapAttribute(null=True)
    unique_constraints = (
        UniqueConstraint("handle", namespace="NICK", normalizer=normalize_text, key_version=VERSION),
        UniqueConstraint(
            "nicknames", namespace="NICK", normalizer=normalize_text, many=True, max_values=3, key_version=VERSION
        ),
    )


HANDLE, NICKNAMES = Gamer.unique_constraints


def gamer(number, handle, *nicknames):
    return transactions.create(Gamer(PK=f"GAMER#{number}", handle=handle, nicknames=set(nicknames) or None))


def read(number):
    return lookups.get_item(Gamer, f"GAMER#{number}")


@pytest.fixture
def requests(count_requests):
    """Counts the requests made from now on."""
    count_requests.reset()
    return count_requests


def test_each_element_has_its_own_lock_and_its_key_is_recorded(ddb):
    gamer(1, "Ada", "Ｌｏｖｅｌａｃｅ", "Countess")

    assert locks() == {
        "UNIQ#NICK#ada": "GAMER#1",
        "UNIQ#NICK#lovelace": "GAMER#1",
        "UNIQ#NICK#countess": "GAMER#1",
    }
    assert read(1).lock_keys.as_dict() == {
        "NICK": "UNIQ#NICK#ada",
        "NICK#nicknames": {"Countess": "UNIQ#NICK#countess", "Ｌｏｖｅｌａｃｅ": "UNIQ#NICK#lovelace"},
    }
    assert table_items()["UNIQ#NICK#lovelace"]["key_version"] == VERSION


def test_an_element_another_item_holds_is_refused_naming_it(ddb):
    gamer(1, "ada", "lovelace")
    two = gamer(2, "bob")

    with pytest.raises(UniqueViolation) as raised:
        transactions.change(two, {"nicknames": {"Robert", "LOVELACE"}})

    assert raised.value.fields == {"nicknames"}
    assert raised.value.values == {"nicknames": {"LOVELACE"}}
    assert raised.value.owners == {"nicknames": "GAMER#1"}
    assert "UNIQ#NICK#robert" not in locks()


def test_an_element_equal_to_another_items_single_value_is_refused(ddb):
    gamer(1, "ada")
    two = gamer(2, "bob")

    with pytest.raises(UniqueViolation) as raised:
        transactions.change(two, {"nicknames": {"ＡＤＡ"}})

    assert raised.value.values == {"nicknames": {"ＡＤＡ"}}


def test_two_spellings_of_one_value_in_one_set_are_refused_before_sending(ddb, requests):
    with pytest.raises(InvalidUniqueValue) as raised:
        gamer(1, "ada", "Lovelace", "ＬＯＶＥＬＡＣＥ")

    assert raised.value.code == "duplicate" and raised.value.fields == {"nicknames"}
    assert requests.total == 0


def test_an_element_equal_to_the_items_own_single_value_is_refused_before_sending(ddb, requests):
    one = gamer(1, "ada")
    requests.reset()

    with pytest.raises(InvalidUniqueValue) as raised:
        transactions.change(one, {"nicknames": {"ADA"}})

    assert raised.value.code == "duplicate"
    assert requests.total == 0


def test_a_set_past_its_bound_is_refused_before_sending(ddb, requests):
    one = gamer(1, "ada", "a", "b", "c")
    requests.reset()

    with pytest.raises(InvalidUniqueValue) as raised:
        transactions.change(one, {"nicknames": {"a", "b", "c", "d"}})

    assert raised.value.code == "too_many"
    assert requests.total == 0


def test_adding_removing_and_replacing_elements_is_one_transaction_each(ddb, requests):
    one = gamer(1, "ada", "lovelace")
    requests.reset()

    transactions.change(one, {"nicknames": {"lovelace", "countess"}})
    transactions.change(one, {"nicknames": {"countess"}})
    transactions.change(one, {"nicknames": {"byron", "augusta"}})

    assert requests.counts == {"TransactWriteItems": 3}
    assert locks() == {"UNIQ#NICK#ada": "GAMER#1", "UNIQ#NICK#byron": "GAMER#1", "UNIQ#NICK#augusta": "GAMER#1"}
    assert read(1).lock_keys.as_dict()["NICK#nicknames"] == {
        "augusta": "UNIQ#NICK#augusta",
        "byron": "UNIQ#NICK#byron",
    }


def test_emptying_the_set_releases_every_lock_and_its_record(ddb):
    one = gamer(1, "ada", "lovelace", "countess")

    transactions.change(one, {"nicknames": None})

    assert locks() == {"UNIQ#NICK#ada": "GAMER#1"}
    assert read(1).lock_keys.as_dict() == {"NICK": "UNIQ#NICK#ada"}


def test_a_value_moved_from_the_set_to_the_single_value_moves_no_lock(ddb, requests):
    one = gamer(1, "ada", "lovelace")
    plan = transactions.plan_change(one, {"handle": "Lovelace", "nicknames": {"ada"}})
    assert [action.role for action in plan.actions] == [transactions.ITEM]
    requests.reset()

    transactions.change(one, {"handle": "Lovelace", "nicknames": {"ada"}})

    assert requests.counts == {"TransactWriteItems": 1}
    assert locks() == {"UNIQ#NICK#ada": "GAMER#1", "UNIQ#NICK#lovelace": "GAMER#1"}
    assert read(1).lock_keys.as_dict() == {
        "NICK": "UNIQ#NICK#lovelace",
        "NICK#nicknames": {"ada": "UNIQ#NICK#ada"},
    }
    assert lookups.get_by_unique(Gamer, HANDLE, "ADA").PK == "GAMER#1"


def test_a_removed_element_releases_the_key_it_recorded_not_one_computed_again(ddb):
    gamer(1, "ada", "Zoë")
    # As after a Unicode upgrade: the lock and its record hold the key computed then.
    client = dynamodb_client()
    client.delete_item(TableName=Lock.Meta.table_name, Key={"PK": {"S": "UNIQ#NICK#zoë"}, "SK": {"S": "LOCK"}})
    old = {"PK": {"S": "UNIQ#NICK#zoe-then"}, "SK": {"S": "LOCK"}, "owner": {"S": "GAMER#1"}}
    client.put_item(TableName=Lock.Meta.table_name, Item=old)
    client.update_item(
        TableName=Lock.Meta.table_name,
        Key={"PK": {"S": "GAMER#1"}, "SK": {"S": "PROFILE"}},
        UpdateExpression="SET lock_keys.#slot.#element = :key",
        ExpressionAttributeNames={"#slot": "NICK#nicknames", "#element": "Zoë"},
        ExpressionAttributeValues={":key": {"S": "UNIQ#NICK#zoe-then"}},
    )

    transactions.change(read(1), {"nicknames": None})

    assert locks() == {"UNIQ#NICK#ada": "GAMER#1"}


def test_deleting_the_item_releases_every_elements_lock_in_one_transaction(ddb, requests):
    one = gamer(1, "ada", "lovelace", "countess")
    requests.reset()

    transactions.delete(one)

    assert requests.counts == {"TransactWriteItems": 1}
    assert locks() == {}


def test_16_items_adding_one_element_at_once_leave_exactly_one_holder(ddb):
    gamers = [gamer(number, f"player{number}") for number in range(16)]

    outcomes = race(16, lambda i: transactions.change(gamers[i], {"nicknames": {"Champion"}}))

    winners = [outcome for outcome in outcomes if not isinstance(outcome, Exception)]
    assert len(winners) == 1
    losers = [outcome for outcome in outcomes if outcome not in winners]
    assert all(isinstance(loser, UniqueViolation) and loser.values == {"nicknames": {"Champion"}} for loser in losers)
    assert locks()["UNIQ#NICK#champion"] == winners[0].PK
    holders = [number for number in range(16) if "UNIQ#NICK#champion" in keys_in_namespace(read(number), "NICK")]
    assert holders == [int(winners[0].PK.split("#")[1])]
