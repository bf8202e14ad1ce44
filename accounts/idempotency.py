"""Idempotency keys: a client's ``Idempotency-Key`` made the ClientRequestToken of the change
it asks for, and the record, written in the change's own transaction, that the change was made.

A client that resends a change after a timeout, with the same key, gets the first answer and
one change: the resend finds the record (one consistent read, only when a key was sent) and
changes nothing, mails nothing; one that races the first request is refused by DynamoDB (the
token, or the record's guard: see :func:`accounts.transactions.idempotency_key_spend`) and
then finds the record. The record is ``PK=USED#<digest>``, ``SK=KEY``, outside any account,
and expires after :data:`RECORD_SECONDS` (a resend later than that is a new request).
"""

from __future__ import annotations

import hashlib
import time
from dataclasses import dataclass

from pynamodb.attributes import NumberAttribute, UnicodeAttribute

from . import dynamo, transactions
from .tables import TableModel, epoch_now

RECORD_PREFIX = "USED#"
RECORD_SORT_KEY = "KEY"
RECORD_SECONDS = 24 * 3600
# A ClientRequestToken has at most 36 characters.
TOKEN_LENGTH = 32


class KeyRecord(TableModel):
    """The record that a change was made with an idempotency key; ``outcome`` names what it
    changed (the address asked for, the credential id added), for the resend's answer."""

    PK = UnicodeAttribute(hash_key=True)
    SK = UnicodeAttribute(range_key=True)
    expires = NumberAttribute()
    outcome = UnicodeAttribute(null=True)


@dataclass(frozen=True)
class IdempotentChange:
    """One change asked for with an idempotency key: its ClientRequestToken and its record."""

    token: str
    digest: str

    def record_put(self, outcome: str) -> transactions.Action:
        """The guarded Put of this change's record, to send in the change's transaction."""
        record = KeyRecord(
            PK=RECORD_PREFIX + self.digest,
            SK=RECORD_SORT_KEY,
            expires=int(time.time()) + RECORD_SECONDS,
            outcome=outcome,
        )
        return transactions.idempotency_key_spend(record)(epoch_now())

    def recorded_outcome(self) -> str | None:
        """What the change made with this key changed, when it was made (one consistent
        read), else ``None``."""
        found = dynamo.batch_get([dynamo.key(RECORD_PREFIX + self.digest, RECORD_SORT_KEY)])
        if not found:
            return None
        record = KeyRecord.from_raw_data(found[0])
        if record.expires is None or record.expires < time.time():
            return None
        return record.outcome or ""


def change_for(operation: str, account_id: str, key: str | None) -> IdempotentChange | None:
    """The idempotent change of ``operation`` by account ``account_id`` with the client's
    ``key`` (any text: it is hashed), or ``None`` without a key."""
    if not key:
        return None
    digest = hashlib.sha256(f"accounts.idempotency:{operation}:{account_id}:{key}".encode()).hexdigest()
    return IdempotentChange(token=digest[:TOKEN_LENGTH], digest=digest)
