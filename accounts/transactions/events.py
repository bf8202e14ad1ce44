"""The security timeline's events: one item each in the account's own partition, written as
one more action of the very transaction (or batch) whose change it records.

An event is ``PK=ACCT#<id>``, ``SK=EVENT#<milliseconds, 13 digits>#<random>``, with
``kind``, ``at`` (epoch milliseconds), the client ``address`` and ``user_agent`` it came
from, ``actor`` (the staff member's account id, when staff made the change), ``detail``
and ``expires`` (the table's TTL attribute, ``ACCOUNTS_SECURITY_EVENT_RETENTION`` later).
Why it is a Put in the change's own transaction, never a write of its own:

1. it commits exactly when the change does: a cancelled change (a taken value, an account
   changed or deleted since it was read) leaves no event, and no event is missing for a
   change that committed, even when the answer was lost;
2. it costs no request more, and its Put needs no guard: its key is new (the time and 64
   random bits), and the change's own guards decide whether anything is written.

``EVENT#`` sorts before every other sort key of an account's partition (``PROFILE``,
``RATE#``, ``SESSION#``...), so a read of the partition's other items starts after the
events (:data:`~accounts.tables.AFTER_EVENTS`) and a login never reads a year of them.
"""

import secrets
import time
from typing import Any

from ..app_settings import app_settings
from ..tables import EVENT_SORT_PREFIX
from .actions import Action, Role

# The role of an event's Put in a transaction (see Role.EVENT).
EVENT = Role.EVENT
USER_AGENT_MAX_LENGTH = 512


def event_item(
    account_pk: str,
    kind: str,
    *,
    address: str = "",
    user_agent: str = "",
    actor: str | None = None,
    detail: str = "",
    at_ms: int | None = None,
) -> dict[str, Any]:
    """The raw item of event ``kind`` of the account ``account_pk``, happening now (or at
    ``at_ms``, epoch milliseconds), expiring ``ACCOUNTS_SECURITY_EVENT_RETENTION`` later."""
    at_ms = int(time.time() * 1000) if at_ms is None else at_ms
    item: dict[str, Any] = {
        "PK": {"S": account_pk},
        "SK": {"S": f"{EVENT_SORT_PREFIX}{at_ms:013d}#{secrets.token_hex(8)}"},
        "kind": {"S": kind},
        "at": {"N": str(at_ms)},
        "expires": {"N": str(at_ms // 1000 + app_settings.SECURITY_EVENT_RETENTION)},
    }
    optional = {"address": address, "user_agent": (user_agent or "")[:USER_AGENT_MAX_LENGTH], "detail": detail}
    item.update({name: {"S": value} for name, value in optional.items() if value})
    if actor:
        item["actor"] = {"S": actor}
    return item


def event_put(table: str, item: dict[str, Any]) -> dict[str, Any]:
    """The PutItem parameters of event ``item`` (no condition: see the module's reasons)."""
    return {"TableName": table, "Item": item}


def event_action(table: str, item: dict[str, Any]) -> Action:
    """Event ``item``'s Put as an action of the transaction it rides in."""
    return Action("Put", event_put(table, item), EVENT, (table, item["PK"]["S"], item["SK"]["S"]))


class EventSpend:
    """Event ``item``'s Put as one of a sign-in's single-use builders (see
    :mod:`.authenticators`: ``spend(now)`` -> the action): a recovery code's use is recorded
    in the sign-in that spends it. ``item`` says, once it committed, which event it was."""

    def __init__(self, table: str, item: dict[str, Any]) -> None:
        self.item = item
        self._action = event_action(table, item)

    def __call__(self, now: int) -> Action:
        return self._action
