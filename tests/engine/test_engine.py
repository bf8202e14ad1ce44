"""The uniqueness engine on a real AWS DynamoDB Local: one guarded transaction per
create, change and delete, and every cancellation mapped to the fields it concerns."""

import uuid

import pytest
from pynamodb.attributes import UnicodeAttribute

from accounts import identifiers, lookups, store, transactions
from accounts.examples import Player
from accounts.exceptions import (
    InvalidTransaction,
    InvalidUniqueValue,
    ItemAlreadyExists,
    StaleItem,
    TokenReused,
    UniqueViolation,
)
from accounts.tables import KEY_VERSION_ITEM, Account, Lock, TableModel, dynamodb_client
from accounts.uniqueness import UniqueConstraint, normalize_exact

pytestmark = pytest.mark.dynamodb_local


def signup(email, username):
    return store.signup(email, username, "argon2$not-a-real-hash")[0]


def table_items():
    """Every item in the table but the one recording its key version, as {PK: attributes}
    (one consistent scan, test only)."""
    client = dynamodb_client()
    items = client.scan(TableName=TableModel.Meta.table_name, ConsistentRead=True)["Items"]
    return {
        item["PK"]["S"]: {name: list(value.values())[0] for name, value in item.items()}
        for item in items
        if item["PK"] != KEY_VERSION_ITEM["PK"]
    }


def locks():
    return {pk: item["owner"] for pk, item in table_items().items() if pk.startswith("UNIQ#")}


def test_signup_writes_the_account_and_one_lock_per_unique_field(ddb):
    account = signup("Ada@Example.org", "Ada")
    items = table_items()
    assert set(items) == {account.PK, "UNIQ#EMAIL#ada@example.org", "UNIQ#HANDLE#ada", "UNIQ#HANDLE_SKEL#ada"}
    assert items[account.PK]["SK"] == "PROFILE"
    assert items[account.PK]["email"] == "Ada@Example.org"
    assert items["UNIQ#EMAIL#ada@example.org"] == {
        "PK": "UNIQ#EMAIL#ada@example.org",
        "SK": "LOCK",
        "owner": account.PK,
        "key_version": identifiers.KEY_VERSION,
    }
    assert items[account.PK]["lock_keys"] == {
        "EMAIL": {"S": "UNIQ#EMAIL#ada@example.org"},
        "HANDLE": {"S": "UNIQ#HANDLE#ada"},
        "HANDLE_SKEL": {"S": "UNIQ#HANDLE_SKEL#ada"},
    }


def test_second_signup_with_same_email_is_refused_naming_email_and_its_owner(ddb):
    first = signup("ada@example.org", "ada")
    with pytest.raises(UniqueViolation) as raised:
        signup("ADA@example.org", "someone")
    assert raised.value.fields == {"email"}
    assert raised.value.owners == {"email": first.PK}
    assert raised.value.reasons[1]["Code"] == "ConditionalCheckFailed"


def test_collisions_on_email_and_username_are_reported_together(ddb):
    signup("ada@example.org", "ada")
    with pytest.raises(UniqueViolation) as raised:
        signup("ada@example.org", "ADA")
    assert raised.value.fields == {"email", "username"}


def test_full_width_and_case_variants_of_a_taken_username_are_taken(ddb):
    signup("ada@example.org", "ada")
    for variant in ("ADA", "ａｄａ", " Ada "):
        with pytest.raises(UniqueViolation) as raised:
            signup(f"{len(variant)}-other@example.org", variant)
        assert raised.value.fields == {"username"}


def test_refused_signup_writes_nothing(ddb):
    signup("ada@example.org", "ada")
    before = table_items()
    with pytest.raises(UniqueViolation):
        signup("ada@example.org", "babbage")
    assert table_items() == before


def test_email_change_moves_the_lock_in_the_same_transaction(ddb, count_requests):
    account = signup("ada@example.org", "ada")
    count_requests.reset()
    store.change_email(account, "Countess@Example.org")
    assert dict(count_requests.counts) == {"TransactWriteItems": 1}
    assert locks() == {
        "UNIQ#EMAIL#countess@example.org": account.PK,
        "UNIQ#HANDLE#ada": account.PK,
        "UNIQ#HANDLE_SKEL#ada": account.PK,
    }
    assert store.get_by_email("countess@example.org").email == "Countess@Example.org"
    assert store.get_by_email("ada@example.org") is None


def test_change_to_the_same_normalized_value_touches_no_lock(ddb):
    account = signup("Ada@X.io", "ada")
    transaction = transactions.plan_change(account, {"email": "ada@x.io"})
    assert [(action.kind, action.role) for action in transaction.actions] == [("Update", "item")]
    store.change_email(account, "ada@x.io")
    assert store.get_account(account.id).email == "ada@x.io"
    assert locks()["UNIQ#EMAIL#ada@x.io"] == account.PK


def test_change_mixing_put_delete_update_blames_only_the_colliding_field(ddb):
    signup("ada@example.org", "ada")
    bob = signup("bob@example.org", "bob")
    transaction = transactions.plan_change(bob, {"email": "ada@example.org", "username": "robert"})
    # Email lock, username lock, username skeleton lock: each a Put and a Delete.
    assert [action.kind for action in transaction.actions] == ["Update", *["Put", "Delete"] * 3]
    before = table_items()
    with pytest.raises(UniqueViolation) as raised:
        store.update_account(bob, email="ada@example.org", username="robert")
    assert raised.value.fields == {"email"}
    with pytest.raises(UniqueViolation) as raised:
        store.update_account(bob, email="robert@example.org", username="ADA")
    assert raised.value.fields == {"username"}
    assert table_items() == before


def test_change_of_an_item_changed_since_it_was_read_is_stale(ddb):
    account = signup("ada@example.org", "ada")
    earlier_copy = store.get_account(account.id)
    store.change_email(account, "first@example.org")
    with pytest.raises(StaleItem):
        store.change_email(earlier_copy, "second@example.org")
    assert locks() == {
        "UNIQ#EMAIL#first@example.org": account.PK,
        "UNIQ#HANDLE#ada": account.PK,
        "UNIQ#HANDLE_SKEL#ada": account.PK,
    }


def read_then_written_elsewhere(account):
    """``account`` as read now, after which another request writes only its password."""
    earlier = store.get_account(account.id)
    store.set_password_hash(store.get_account(account.id), "argon2$another-hash")
    return earlier


@pytest.mark.parametrize("operation", ["change_username", "verify", "request_email_change", "apply_email_change"])
def test_a_change_from_a_form_read_before_another_write_is_stale(ddb, operation):
    # Only the `updated` stamp tells these reads from the stored item: no lost update, a
    # stale form is refused (protocol/README.md: the lock invariants hold without it).
    account, _ = store.signup("ada@example.org", "ada", "hash", email_verified=operation != "verify")
    if operation == "apply_email_change":
        nonce = store.request_email_change(store.get_account(account.id), "new@example.org")
        account = store.get_account(account.id)
    earlier = read_then_written_elsewhere(account)
    apply = {
        "change_username": lambda: store.change_username(earlier, "countess"),
        "verify": lambda: store.verify_email(earlier),
        "request_email_change": lambda: store.request_email_change(earlier, "new@example.org"),
        "apply_email_change": lambda: store.apply_email_change(earlier, "ada@example.org", "new@example.org", nonce),
    }[operation]
    with pytest.raises(StaleItem):
        apply()


def test_a_change_of_a_deleted_item_is_stale_and_does_not_bring_it_back(ddb):
    # Every value this change guards was absent when read (attribute_not_exists), and such a
    # condition holds on a missing item too: without attribute_exists(PK) the Update would
    # re-create the deleted account as a fragment holding only the new attribute.
    # Nor may it change the tombstone the account left (which holds none of those values).
    account = signup("ada@example.org", "ada")
    earlier_copy = store.get_account(account.id)
    store.delete_account(account)
    with pytest.raises(StaleItem):
        transactions.change(earlier_copy, {"pending_email": "new@example.org"})
    assert set(table_items()) == {account.PK}
    assert set(table_items()[account.PK]) == {"PK", "SK", "deleted", "expires"}


def test_a_change_guarded_by_a_value_refuses_a_deleted_item_without_attribute_exists(ddb):
    # A comparison with an attribute that is not there is false in DynamoDB, so a condition
    # naming a value as read needs no attribute_exists(PK) (protocol/README.md).
    account = signup("ada@example.org", "ada")
    earlier_copy = store.get_account(account.id)
    condition = transactions.plan_change(earlier_copy, {"username": "ada2"}).actions[0].body["ConditionExpression"]
    assert "attribute_exists" not in str(condition)
    store.delete_account(account)
    with pytest.raises(StaleItem):
        store.change_username(earlier_copy, "ada2")
    assert set(table_items()) == {account.PK}
    assert set(table_items()[account.PK]) == {"PK", "SK", "deleted", "expires"}


def test_delete_releases_every_lock(ddb):
    account = signup("ada@example.org", "ada")
    signup("bob@example.org", "bob")
    store.delete_account(account)
    bob = store.get_by_username("bob").PK
    # ada's item is now her tombstone (her id never comes back).
    assert set(table_items()) == {
        account.PK,
        bob,
        "UNIQ#EMAIL#bob@example.org",
        "UNIQ#HANDLE#bob",
        "UNIQ#HANDLE_SKEL#bob",
    }
    assert signup("ada@example.org", "ada")


def test_delete_never_removes_a_lock_another_item_owns(ddb):
    ada = signup("ada@example.org", "ada")
    bob = signup("bob@example.org", "bob")
    # Damage planted behind the engine's back: ada's email lock now names bob.
    Lock(PK="UNIQ#EMAIL#ada@example.org", owner=bob.PK).save()
    store.delete_account(ada)
    assert store.get_account(ada.id) is None
    assert locks()["UNIQ#EMAIL#ada@example.org"] == bob.PK
    assert "UNIQ#HANDLE#ada" not in locks()


def test_change_never_removes_an_old_lock_another_item_owns(ddb):
    ada = signup("ada@example.org", "ada")
    bob = signup("bob@example.org", "bob")
    Lock(PK="UNIQ#EMAIL#ada@example.org", owner=bob.PK).save()
    store.change_email(ada, "countess@example.org")
    assert locks()["UNIQ#EMAIL#ada@example.org"] == bob.PK
    assert locks()["UNIQ#EMAIL#countess@example.org"] == ada.PK


def test_a_lock_missing_behind_the_engines_back_does_not_block_delete(ddb):
    account = signup("ada@example.org", "ada")
    Lock(PK="UNIQ#HANDLE#ada").delete()
    store.delete_account(account)
    assert set(table_items()) == {account.PK}  # its tombstone


def test_delete_of_an_item_changed_since_it_was_read_is_stale(ddb):
    account = signup("ada@example.org", "ada")
    earlier_copy = store.get_account(account.id)
    store.change_username(account, "countess")
    with pytest.raises(StaleItem):
        store.delete_account(earlier_copy)
    assert store.get_account(account.id).username == "countess"


def test_lookup_is_two_consistent_get_items_and_nothing_else(ddb, count_requests):
    account = signup("ada@example.org", "ada")
    count_requests.reset()
    assert store.get_by_login("ADA").PK == account.PK
    assert dict(count_requests.counts) == {"GetItem": 2}


def test_lookup_through_a_lock_whose_owner_no_longer_holds_the_value_finds_nothing(ddb):
    ada = signup("ada@example.org", "ada")
    bob = signup("bob@example.org", "bob")
    Lock(PK="UNIQ#EMAIL#ada@example.org", owner=bob.PK).save()
    assert store.get_by_email("ada@example.org") is None
    assert store.get_by_email("bob@example.org").PK == bob.PK
    assert ada


def test_a_transaction_resent_with_its_token_is_applied_once(ddb):
    transaction = transactions.plan_create(store.build_account("ada@example.org", "ada", "h"))
    transactions.run(transaction)
    transactions.run(transaction)
    assert len(table_items()) == 4  # the account and its three locks


def test_a_token_reused_for_a_different_request_is_refused(ddb):
    # Unique per run: DynamoDB remembers a token for 10 minutes, across tables and reruns.
    token = uuid.uuid4().hex
    transactions.run(transactions.plan_create(store.build_account("ada@example.org", "ada", "h"), token=token))
    with pytest.raises(TokenReused):
        transactions.run(transactions.plan_create(store.build_account("bob@example.org", "bob", "h"), token=token))
    assert len(table_items()) == 4  # the account and its three locks


def test_creating_an_item_whose_key_exists_is_item_already_exists(ddb):
    account = signup("ada@example.org", "ada")
    twin = Account(PK=account.PK, email="other@example.org", username="other", password="h")
    with pytest.raises(ItemAlreadyExists):
        transactions.create(twin)


def test_more_than_100_actions_are_refused_before_sending(ddb, count_requests):
    class Wide(TableModel):
        PK = UnicodeAttribute(hash_key=True)
        SK = UnicodeAttribute(range_key=True, default="PROFILE")
        value = UnicodeAttribute()
        unique_constraints = [UniqueConstraint("value", namespace=f"N{i}") for i in range(100)]

    with pytest.raises(InvalidTransaction, match="at most 100"):
        transactions.create(Wide(PK="WIDE#1", value="x"))
    assert count_requests.total == 0


def test_one_value_held_under_two_constraints_of_one_namespace_is_refused_before_sending(ddb, count_requests):
    class Twice(TableModel):
        PK = UnicodeAttribute(hash_key=True)
        SK = UnicodeAttribute(range_key=True, default="PROFILE")
        email = UnicodeAttribute()
        backup_email = UnicodeAttribute()
        unique_constraints = [
            UniqueConstraint("email", namespace="EMAIL"),
            UniqueConstraint("backup_email", namespace="EMAIL"),
        ]

    with pytest.raises(InvalidUniqueValue) as raised:
        transactions.create(Twice(PK="TWICE#1", email="a@x.io", backup_email="A@X.IO"))
    assert raised.value.code == "duplicate" and raised.value.fields == {"backup_email"}
    assert count_requests.total == 0


def test_two_actions_on_one_item_are_refused_before_sending(ddb, count_requests):
    account = signup("ada@x.io", "ada")
    twice = transactions.owned_delete(account, "PROFILE")
    count_requests.reset()

    with pytest.raises(InvalidTransaction, match="one item"):
        transactions.change(account, {"is_staff": False}, also=[twice])
    assert count_requests.total == 0


def test_a_value_too_long_for_a_key_is_refused_before_sending_but_2048_bytes_fit(ddb, count_requests):
    longest_email = "a" * (2048 - len("UNIQ#EMAIL#") - len("@x.io")) + "@x.io"
    with pytest.raises(InvalidUniqueValue) as raised:
        signup("a" + longest_email, "ada")
    assert raised.value.fields == {"email"} and raised.value.code == "too_long"
    assert count_requests.total == 0
    signup(longest_email, "ada")
    assert f"UNIQ#EMAIL#{longest_email}" in locks()


def test_an_empty_unique_value_is_refused_before_sending(ddb, count_requests):
    with pytest.raises(InvalidUniqueValue) as raised:
        signup("ada@example.org", "  ")
    assert raised.value.fields == {"username"} and raised.value.code == "empty"
    assert count_requests.total == 0


def test_composite_values_containing_the_separator_lock_separately(ddb):
    class Pair(TableModel):
        PK = UnicodeAttribute(hash_key=True)
        SK = UnicodeAttribute(range_key=True, default="PROFILE")
        left = UnicodeAttribute()
        right = UnicodeAttribute()
        unique_constraints = [UniqueConstraint("left", "right", namespace="PAIR")]

    transactions.create(Pair(PK="PAIR#1", left="a#b", right="c"))
    transactions.create(Pair(PK="PAIR#2", left="a", right="b#c"))
    with pytest.raises(UniqueViolation) as raised:
        transactions.create(Pair(PK="PAIR#3", left="A", right="B#C"))
    assert raised.value.fields == {"left", "right"}
    assert locks() == {"UNIQ#PAIR#a%23b#c": "PAIR#1", "UNIQ#PAIR#a#b%23c": "PAIR#2"}


def test_a_uniform_number_is_worn_once_per_team(ddb):
    constraint = Player.unique_constraints[0]
    alice = transactions.create(Player(PK="PLAYER#alice", team="team-001", name="Alice", number=18))
    with pytest.raises(UniqueViolation) as raised:
        transactions.create(Player(PK="PLAYER#bob", team="team-001", name="Bob", number=18))
    assert raised.value.fields == {"number"}
    transactions.create(Player(PK="PLAYER#carol", team="team-002", name="Carol", number=18))
    transactions.change(alice, {"number": 7})
    bob = transactions.create(Player(PK="PLAYER#bob", team="team-001", name="Bob", number=18))
    assert lookups.get_by_unique(Player, constraint, "team-001", 18).PK == bob.PK
    assert lookups.get_by_unique(Player, constraint, "team-001", 7).PK == alice.PK
    assert lookups.get_by_unique(Player, constraint, "team-002", 18).name == "Carol"
    with pytest.raises(UniqueViolation):
        transactions.change(bob, {"team": "team-002"})


def test_numbers_are_not_case_folded_or_confused_with_text(ddb):
    constraint = UniqueConstraint("number", scope=("team",), namespace="UNIFORM", normalizer=normalize_exact)
    assert constraint.key_for("team-001", 18) != constraint.key_for("team-001", 180)


def test_a_number_written_as_a_float_and_as_an_int_is_one_value(ddb):
    # DynamoDB stores 18.0 as 18: the lock key must be built from that form.
    alice = transactions.create(Player(PK="PLAYER#alice", team="team-001", name="Alice", number=18.0))
    with pytest.raises(UniqueViolation):
        transactions.create(Player(PK="PLAYER#bob", team="team-001", name="Bob", number=18))
    assert locks() == {"UNIQ#UNIFORM#team-001#18": alice.PK}


def test_changing_a_number_written_as_a_float_leaves_no_orphan(ddb):
    alice = transactions.create(Player(PK="PLAYER#alice", team="team-001", name="Alice", number=18.0))
    transactions.change(lookups.get_item(Player, alice.PK), {"number": 7})
    assert locks() == {"UNIQ#UNIFORM#team-001#7": alice.PK}
