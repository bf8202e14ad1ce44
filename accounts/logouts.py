"""Ending an account's sessions on request: "log out other sessions" (the profile page),
``DELETE auth/sessions`` (the API) and staff's "end sessions". These change nothing of the
account, so nothing of it refuses a session renewed meanwhile: each deletion is a
transaction of guarded Deletes instead (:func:`log_out_sessions`). After a change of the
account that ends its sessions (a deactivation, a deletion, a new password), that change
refuses them, and :func:`accounts.sessions.end_sessions` deletes them in a batch."""

from collections.abc import Collection
from typing import Any

from . import dynamo, timeline, transactions
from .exceptions import Busy, StaleItem, Unavailable
from .sessions import SESSION_ID, SESSION_SORT_PREFIX, session_id_of
from .tables import account_pk

# A deletion cancelled because a session read was renewed (or ended) meanwhile reads the
# sessions again and is sent again, at most this many times in all.
ATTEMPTS = 5
# Sessions deleted by one transaction, leaving room for the security event.
ENDED_PER_TRANSACTION = transactions.MAX_ACTIONS - 1


def log_out_sessions(
    account_id: str,
    *,
    ids: Collection[str] | None = None,
    keep: str | None = None,
    sessions: list[dict[str, Any]] | None = None,
    event: dict[str, Any] | None = None,
) -> int:
    """End the sessions of account ``account_id`` whose id
    (:func:`~accounts.sessions.session_id_of`) is in ``ids`` (all of them when ``None``) but
    the one whose id is ``keep`` (the caller's own), and any of them renewed under a new key
    meanwhile (a reauthentication keeps the id). Returns how many ended.

    ``sessions``: raw items of the account's sessions as this request read them (its
    session's load, :meth:`~accounts.sessions.SessionStore.account_sessions`); else they are
    read with one ``Query``. ``event``: the raw item of a security event (staff ended them),
    put in the first transaction that deletes one (none when none ended).

    Each deletion is ONE transaction of Deletes guarded by each session still being there
    (:func:`accounts.transactions.plan_end_sessions`, which says why that is enough). When a
    reauthentication renewed one between the read and the deletion, it is cancelled whole:
    the sessions are read again (one ``Query``) and it is sent again, at most
    :data:`ATTEMPTS` times in all, then :class:`~accounts.exceptions.Unavailable`. Costs one
    ``TransactWriteItems`` per 99 sessions: 2 write units each (and 2 for the event)."""
    ended = 0
    items = sessions
    for _ in range(ATTEMPTS):
        if items is None:
            items = dynamo.query_partition(
                account_pk(account_id), SESSION_SORT_PREFIX, attributes=["PK", "SK", SESSION_ID]
            )
        ending = [
            dynamo.key(raw["PK"]["S"], raw["SK"]["S"])
            for raw in items
            if (session_id := session_id_of(raw, account_id)) != keep and (ids is None or session_id in ids)
        ]
        try:
            for start in range(0, len(ending), ENDED_PER_TRANSACTION):
                event_put = timeline.put(event) if event is not None and not ended else None
                chunk = ending[start : start + ENDED_PER_TRANSACTION]
                transactions.run_once(transactions.plan_end_sessions(dynamo.table_name(), chunk, event_put))
                ended += len(chunk)
            return ended
        except StaleItem:
            items = None
        except Busy as error:
            raise Unavailable(f"DynamoDB is busy; {ended} session(s) ended, the others not: {error}") from error
    raise Unavailable(f"The sessions kept changing while they were ended; {ended} ended, the others not.")
