"""Idempotency keys: a client's ``Idempotency-Key``, scoped to who sends it and the operation,
bound to the request it first came with, made the ClientRequestToken of the change it asks
for, and the record, written in the change's own transaction, that the change was made.

A key is the client's own text, so two callers may pick the same one ("1", a counter, a
timestamp): a key means something only for the caller that sent it and the operation it was
sent to (:class:`ClientKey`). Who the caller is: the account of a logged-in request; else
the session the client holds (an app's session token, a browser's CSRF cookie, as sent);
else nothing identifies it, and the request itself is the scope (only the very same
request replays, which is all a resend after a timeout needs). A key is also bound to its
first request, as payment APIs do (Stripe, the IETF's Idempotency-Key draft): the same
caller sending it to the same operation with another body is refused, 422
(:class:`KeyReused`), never answered with the first request's answer.

A client that resends a change after a timeout, with the same key and body, gets the first
answer and one change: the resend finds the record (one consistent read, only when a key
was sent) and changes nothing, mails nothing; one that races the first request is refused by
DynamoDB (the token, or the record's guard: see :func:`accounts.transactions.idempotency_key_spend`)
and then finds the record. The record is ``PK=USED#<digest>``, ``SK=KEY``, outside any
account, and expires after :data:`RECORD_SECONDS` (a resend later than that is a new request).
"""

from __future__ import annotations

import hashlib
import json
import time
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

import botocore.exceptions
from django.utils.crypto import salted_hmac
from pynamodb.attributes import NumberAttribute, UnicodeAttribute

from . import dynamo, transactions
from .tables import TableModel, epoch_now

RECORD_PREFIX = "USED#"
RECORD_SORT_KEY = "KEY"
# The claim of a key by its first request (ClientKey.claim): PK=USED#<scope digest>, SK=CLAIM.
CLAIM_SORT_KEY = "CLAIM"
# Absent, or claimed by a request with this fingerprint, or expired: the claim is this request's.
CLAIM_CONDITION = "attribute_not_exists(PK) OR fingerprint = :fingerprint OR expires < :now"
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


def change_for(operation: str, account_id: str, key: ClientKey | None) -> IdempotentChange | None:
    """The idempotent change of ``operation`` by account ``account_id`` with the client's
    ``key`` (its text, any text: it is hashed), or ``None`` without a key."""
    if key is None:
        return None
    digest = hashlib.sha256(f"accounts.idempotency:{operation}:{account_id}:{key.key}".encode()).hexdigest()
    return IdempotentChange(token=digest[:TOKEN_LENGTH], digest=digest)


class KeyReused(Exception):
    """The caller sent this ``Idempotency-Key`` to this operation before, with another body."""


def fingerprint(method: str, body: Mapping[str, Any]) -> str:
    """What tells two requests apart: an HMAC (keyed by ``SECRET_KEY``: a body may hold a
    password, and the fingerprint is stored) of the method and the JSON body, its keys in
    order."""
    text = json.dumps([method.upper(), body], sort_keys=True, separators=(",", ":"), ensure_ascii=False)
    return salted_hmac("accounts.idempotency.fingerprint", text, algorithm="sha256").hexdigest()


@dataclass(frozen=True)
class ClientKey:
    """A client's ``Idempotency-Key`` as an operation received it: ``key``, the client's text;
    ``operation``, what it was sent to; ``caller``, who sent it (``""`` when nothing
    identifies the caller: the request's fingerprint is then the scope); ``fingerprint``,
    of the request (:func:`fingerprint`)."""

    key: str
    operation: str
    caller: str
    fingerprint: str

    @property
    def digest(self) -> str:
        """The key within its scope: the operation, the caller (or the request), the key."""
        scope = self.caller or f"request:{self.fingerprint}"
        return hashlib.sha256(f"accounts.idempotency:{self.operation}:{scope}:{self.key}".encode()).hexdigest()

    @property
    def token(self) -> str:
        """A ClientRequestToken of this key in its scope (a sign-up's, whose account id it fixes)."""
        return self.digest[:TOKEN_LENGTH]

    def claim(self) -> None:
        """Bind the key, in its scope, to this request: one guarded ``PutItem`` of its claim
        [:data:`CLAIM_CONDITION`]. Raises :class:`KeyReused` when another request (another
        body) of the same caller and operation claimed it within :data:`RECORD_SECONDS`.

        A reuse dies because the claim's condition is evaluated by DynamoDB on the one item
        of the key's scope: of two requests with different bodies, however close, the second
        write finds the first's fingerprint and fails; the same body passes again (a resend),
        and the operation then answers as it did (its token and its record)."""
        now = epoch_now()
        item = {
            **dynamo.key(RECORD_PREFIX + self.digest, CLAIM_SORT_KEY),
            "fingerprint": {"S": self.fingerprint},
            "expires": {"N": str(now + RECORD_SECONDS)},
        }
        try:
            dynamo.call(
                "put_item",
                TableName=dynamo.table_name(),
                Item=item,
                ConditionExpression=CLAIM_CONDITION,
                ExpressionAttributeValues={":fingerprint": {"S": self.fingerprint}, ":now": {"N": str(now)}},
            )
        except botocore.exceptions.ClientError as error:
            if not dynamo.failed_condition(error):
                raise
            raise KeyReused(f"Idempotency-Key used for another {self.operation} request.") from error
