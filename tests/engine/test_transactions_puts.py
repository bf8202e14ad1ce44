"""Guarded Puts: the engine builds exactly the request PynamoDB builds, for any model."""

import json

import pytest
from pynamodb.attributes import (
    ListAttribute,
    MapAttribute,
    NumberAttribute,
    NumberSetAttribute,
    UnicodeAttribute,
    VersionAttribute,
)
from pynamodb.models import Model

from accounts import store
from accounts.examples import Player
from accounts.tables import Account, Lock, lock_model_for
from accounts.transactions import actions


class Reading(Model):
    """Keys that do not sort first, a renamed attribute and an optional one."""

    class Meta:
        table_name = "readings"
        region = "us-east-1"

    zone = UnicodeAttribute(hash_key=True)
    when = NumberAttribute(range_key=True)
    celsius = NumberAttribute(attr_name="c")
    note = UnicodeAttribute(null=True)


class Place(MapAttribute):
    city = UnicodeAttribute()
    floor = NumberAttribute(null=True)


class Shelf(Model):
    """Containers: a typed map, a raw map, a list of maps and a set that may be empty."""

    class Meta:
        table_name = "shelves"
        region = "us-east-1"

    PK = UnicodeAttribute(hash_key=True)
    place = Place(null=True)
    labels = MapAttribute(null=True)
    history = ListAttribute(of=Place, null=True)
    sizes = NumberSetAttribute(null=True)


def recorded_account():
    """An account as a create writes it: with the lock keys it records (a raw map)."""
    account = store.build_account("Ada@X.io", "ada", "hash")
    account.lock_keys = {"EMAIL": "UNIQ#EMAIL#ada@x.io", "HANDLE": "UNIQ#HANDLE#ada"}
    return account


class Elsewhere(Model):
    """A model in a table of its own: its locks get a lock model bound to that table."""

    class Meta:
        table_name = "elsewhere"
        region = "us-east-1"
        host = None

    PK = UnicodeAttribute(hash_key=True)


class Versioned(Model):
    class Meta:
        table_name = "versioned"
        region = "us-east-1"

    id = UnicodeAttribute(hash_key=True)
    label = UnicodeAttribute()
    version = VersionAttribute()


def pynamodb_put(item, **options):
    condition = type(item)._hash_key_attribute().does_not_exist()
    return item.get_save_kwargs_from_instance(condition=condition, **options)


def same_json(first, second):
    return json.dumps(first) == json.dumps(second)


@pytest.mark.parametrize(
    "item",
    [
        store.build_account("Ada@X.io", "ada", "hash"),
        Player(PK="PLAYER#1", team="team-001", name="Alice", number=18),
        Reading(zone="north", when=1700000000, celsius=21.5),
        Reading(zone="north", when=1700000000, celsius=21.5, note="sunny"),
        recorded_account(),
        Shelf(PK="S1"),
        Shelf(
            PK="S1",
            place=Place(city="Oslo", floor=2),
            labels={"a": "b", "n": 1},
            history=[Place(city="Rome")],
            sizes=set(),
        ),
        Shelf(PK="S1", sizes={3, 1}),
    ],
    ids=[
        "account",
        "player",
        "reading",
        "reading-with-note",
        "account-recording-keys",
        "empty-shelf",
        "shelf",
        "sizes",
    ],
)
def test_guarded_put_is_pynamodbs_request_key_for_key(item):
    assert same_json(actions.guarded_put(item), pynamodb_put(item))


@pytest.mark.parametrize("expires", [None, 1700000000], ids=["lasting", "expiring"])
@pytest.mark.parametrize("model", [Account, Elsewhere], ids=["accounts-table", "own-table"])
def test_lock_put_is_pynamodbs_request_for_the_lock_model(model, expires, settings):
    settings.ACCOUNTS_CLOCK_SKEW_MARGIN = 300
    lock_model = lock_model_for(model)
    assert lock_model.Meta.table_name == model.Meta.table_name
    now = 1690000000
    built = actions.lock_put_request(lock_model, "UNIQ#EMAIL#ada@x.io", "ACCT#1", expires, now)
    lock = lock_model(PK="UNIQ#EMAIL#ada@x.io", owner="ACCT#1", expires=expires)
    expected = lock.get_save_kwargs_from_instance(
        # Free: absent, or expired longer ago than the clock-skew margin (TTL deletes lazily).
        condition=lock_model.PK.does_not_exist() | (lock_model.expires < now - 300),
        return_values_on_condition_failure="ALL_OLD",
    )
    assert same_json(built, expected)


def test_lock_action_targets_the_lock_item():
    lock = Lock(PK="UNIQ#EMAIL#ada@x.io", owner="ACCT#1")
    action = actions.lock_action("Put", Lock, lock.PK, lock.owner, actions.NEW_LOCK, None, 1690000000)
    assert action.target == actions.key_target(lock)


@pytest.mark.parametrize("version", [None, 3])
def test_versioned_model_keeps_pynamodbs_combined_condition_and_version_bump(version):
    values = {"id": "v1", "label": "x"} if version is None else {"id": "v1", "label": "x", "version": version}
    built = actions.guarded_put(Versioned(**values))
    assert built == pynamodb_put(Versioned(**values))
    assert built["Item"]["version"] == {"N": str((version or 0) + 1)}
    assert "AND" in built["ConditionExpression"]


@pytest.mark.parametrize(
    "item",
    [Player(PK="PLAYER#1", team="team-001", number=18), Shelf(PK="S1", place=Place(floor=2))],
    ids=["missing-value", "missing-value-inside-a-map"],
)
def test_missing_required_values_fail_as_pynamodb_does(item):
    with pytest.raises(Exception) as pynamodb_error:
        pynamodb_put(item)
    with pytest.raises(type(pynamodb_error.value)) as ours:
        actions.guarded_put(item)
    assert str(ours.value) == str(pynamodb_error.value)


def test_requests_never_share_the_cached_attribute_names():
    first = actions.guarded_put(store.build_account("a@x.io", "a", "hash"))
    first["ExpressionAttributeNames"]["#0"] = "changed"
    lock_put = actions.lock_put_request(Lock, "UNIQ#EMAIL#b", "ACCT#1", None, 1690000000)
    second = actions.guarded_put(store.build_account("b@x.io", "b", "hash"))
    assert second["ExpressionAttributeNames"] == {"#0": "PK"}
    assert lock_put["ExpressionAttributeNames"] == {"#0": "PK", "#1": "expires"}


def test_puts_follow_the_configured_table_name(settings):
    for name in ("first-table", "second-table"):
        settings.ACCOUNTS_TABLE_NAME = name
        assert actions.guarded_put(store.build_account("a@x.io", "a", "hash"))["TableName"] == name
        assert actions.lock_put_request(Lock, "UNIQ#EMAIL#a", "ACCT#1", None, 1690000000)["TableName"] == name
