"""Writing accounts and lock items straight into the table, behind the engine's back.

Tests of the audit, the backfill and the staff pages need many accounts fast, or damage the
engine would never make; a batch write does both without a transaction per account.
"""

import uuid

from pynamodb.exceptions import DoesNotExist

from accounts.tables import account_pk, dynamodb_client, get_account_model, lock_model_for
from accounts.uniqueness import LOCK_SORT_KEY

# Any string does as a hash where no test logs in with it.
UNUSABLE_PASSWORD_HASH = "!seeded"


def new_account(email, username, **values):
    """An unsaved account item with a fresh id."""
    values.setdefault("password", UNUSABLE_PASSWORD_HASH)
    return get_account_model()(PK=account_pk(uuid.uuid4().hex), email=email, username=username, **values)


def write_accounts(accounts, *, with_locks=True):
    """Batch-write ``accounts`` (and, with ``with_locks``, the lock of each unique value,
    recorded in the account as the engine records it, a set-valued constraint's not; without,
    accounts as written before either existed)."""
    model = get_account_model()
    if with_locks:
        for account in accounts:
            account.lock_keys = {
                constraint.namespace: key
                for constraint in model.get_unique_constraints()
                if not constraint.many and (key := constraint.lock_key(account)) is not None
            }
    with model.batch_write() as batch:
        for account in accounts:
            batch.save(account)
    if with_locks:
        write_locks({key: account.PK for account in accounts for key in lock_keys(account)})
    return accounts


def write_locks(owners):
    """Batch-write lock items: ``{lock key: owner PK}``."""
    lock_model = lock_model_for(get_account_model())
    with lock_model.batch_write() as batch:
        for key, owner in owners.items():
            batch.save(lock_model(PK=key, owner=owner))


def write_ownerless_lock(key):
    """A lock item without an ``owner`` attribute, which the lock model refuses to save."""
    lock_model = lock_model_for(get_account_model())
    dynamodb_client().put_item(
        TableName=lock_model.Meta.table_name,
        Item={"PK": {"S": key}, "SK": {"S": LOCK_SORT_KEY}},
    )


def lock_keys(account):
    """Every lock key ``account``'s values map to."""
    model = type(account)
    return [key for constraint in model.get_unique_constraints() for key in constraint.lock_keys(account)]


def seed_accounts(count, *, with_locks=True, prefix="user"):
    """Write ``count`` accounts named ``<prefix><n>`` (with their locks) in batches."""
    accounts = [new_account(f"{prefix}{n}@example.com", f"{prefix}{n}") for n in range(count)]
    return write_accounts(accounts, with_locks=with_locks)


def read_lock(key):
    """``(exists, owner)`` of a lock item, read consistently."""
    lock_model = lock_model_for(get_account_model())
    try:
        return True, lock_model.get(key, LOCK_SORT_KEY, consistent_read=True).owner
    except DoesNotExist:
        return False, None


def delete_lock(key):
    """Delete a lock item without the engine (planted damage)."""
    lock_model_for(get_account_model())(PK=key).delete()


def overwrite(account, **values):
    """Change account attributes without the engine: no lock moves (planted damage)."""
    model = type(account)
    account.update(actions=[getattr(model, name).set(value) for name, value in values.items()])
    return account
