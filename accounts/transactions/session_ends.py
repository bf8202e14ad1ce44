"""The transaction that ends sessions on request ("log out other sessions", ``DELETE
auth/sessions``, staff's "end sessions"): the Delete of each session read, guarded by the
session still being there (:func:`plan_end_sessions`)."""

from collections.abc import Mapping, Sequence
from typing import Any

from .actions import Action, Body, Role, Transaction, new_transaction
from .authenticators import _raw_target
from .events import EVENT

END_SESSIONS = "end_sessions"
# The Delete of a session that an end of sessions read (see Role.ENDED).
ENDED = Role.ENDED
# attribute_exists(PK): the session is still there, under the key that was read.
STILL_THERE = "attribute_exists(PK)"


def plan_end_sessions(table: str, keys: Sequence[Mapping[str, Any]], event_put: Body | None = None) -> Transaction:
    """The transaction deleting the sessions at ``keys`` (raw keys, as a read of the
    account's partition found them), each ``[attribute_exists(PK)]``, with the Put of the
    security event recording it (``event_put``, unguarded: see :mod:`.events`), if any.

    No session of those read survives under a new key, whatever the timing, because:

    1. a reauthentication (by passkey or mailed code) gives its session a new key in ONE
       transaction that deletes the old item ``[expires >= :now]`` and puts the new one: a
       key read here was either still there when this transaction committed (deleted by
       it, and a reauthentication after it is refused, its old item gone), or replaced
       before, and then its Delete here fails and the whole transaction is cancelled
       (:class:`~accounts.exceptions.StaleItem`, nothing deleted): the caller reads the
       sessions again, the new key among them, and sends this again;
    2. the new key keeps the session's id (:func:`accounts.sessions.session_id_of`), so a
       caller ending sessions by id ends the renewed one too;
    3. the Deletes are all or nothing: no session read is left while another is deleted.

    A BatchWriteItem (which takes no condition) deleted the old key silently, and the new
    one, written between the read and the deletion, was left logged in.

    A session gone for another reason (a logout, TTL, a login taking its slot) cancels
    this too, and the next read no longer lists it. Sessions that new logins write
    meanwhile are not among those read: a login is a new proof, as after the click."""
    deletes = [
        Action(
            "Delete",
            {"TableName": table, "Key": dict(key), "ConditionExpression": STILL_THERE},
            ENDED,
            _raw_target(table, key),
        )
        for key in keys
    ]
    events = [Action("Put", event_put, EVENT, _raw_target(table, event_put["Item"]))] if event_put else []
    return new_transaction(END_SESSIONS, lambda now: [*deletes, *events], None)
