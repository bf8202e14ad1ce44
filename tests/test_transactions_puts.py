"""Guarded Puts: the engine builds exactly the request PynamoDB builds, for any model."""

import json

import pytest
from pynamodb.attributes import NumberAttribute, UnicodeAttribute, VersionAttribute
from pynamodb.models import Model

from accounts import store, transactions
from accounts.examples import Player
from accounts.tables import Lock


class Reading(Model):
    """Keys that do not sort first, a renamed attribute and an optional one."""

    class Meta:
        table_name = "readings"
        region = "us-east-1"

    zone = UnicodeAttribute(hash_key=True)
    when = NumberAttribute(range_key=True)
    celsius = NumberAttribute(attr_name="c")
    note = UnicodeAttribute(null=True)


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
    ],
    ids=["account", "player", "reading", "reading-with-note"],
)
def test_guarded_put_is_pynamodbs_request_key_for_key(item):
    assert same_json(transactions._guarded_put(item), pynamodb_put(item))


def test_guarded_lock_put_returns_the_old_lock_like_pynamodbs():
    lock = Lock(PK="UNIQ#EMAIL#ada@x.io", owner="ACCT#1")
    built = transactions._guarded_put(lock, return_values_on_condition_failure="ALL_OLD")
    assert same_json(built, pynamodb_put(lock, return_values_on_condition_failure="ALL_OLD"))
    assert built["ReturnValuesOnConditionCheckFailure"] == "ALL_OLD"


@pytest.mark.parametrize("version", [None, 3])
def test_versioned_model_keeps_pynamodbs_combined_condition_and_version_bump(version):
    values = {"id": "v1", "label": "x"} if version is None else {"id": "v1", "label": "x", "version": version}
    built = transactions._guarded_put(Versioned(**values))
    assert built == pynamodb_put(Versioned(**values))
    assert built["Item"]["version"] == {"N": str((version or 0) + 1)}
    assert "AND" in built["ConditionExpression"]


def test_missing_required_value_fails_as_pynamodb_does():
    incomplete = Player(PK="PLAYER#1", team="team-001", number=18)
    with pytest.raises(Exception) as pynamodb_error:
        pynamodb_put(incomplete)
    with pytest.raises(type(pynamodb_error.value)):
        transactions._guarded_put(incomplete)


def test_requests_never_share_the_cached_attribute_names():
    first = transactions._guarded_put(Lock(PK="UNIQ#EMAIL#a", owner="ACCT#1"))
    first["ExpressionAttributeNames"]["#0"] = "changed"
    second = transactions._guarded_put(Lock(PK="UNIQ#EMAIL#b", owner="ACCT#1"))
    assert second["ExpressionAttributeNames"] == {"#0": "PK"}


def test_put_follows_the_configured_table_name(settings):
    settings.ACCOUNTS_TABLE_NAME = "first-table"
    assert transactions._guarded_put(Lock(PK="UNIQ#EMAIL#a", owner="ACCT#1"))["TableName"] == "first-table"
    settings.ACCOUNTS_TABLE_NAME = "second-table"
    assert transactions._guarded_put(Lock(PK="UNIQ#EMAIL#a", owner="ACCT#1"))["TableName"] == "second-table"
