"""Server-side sessions in the accounts table: ``SESSION_ENGINE = "accounts.sessions"``.

A logged-in session lives in its account's partition, ``PK=ACCT#<id>``,
``SK=SESSION#<secret>``, and its cookie is ``<account id>.<secret>``. So:

- any page of a logged-in person costs ONE ``BatchGetItem`` reading the session and the
  account together (the account is handed to :class:`~accounts.backends.AccountBackend`
  instead of a second ``GetItem``); pages that list the sessions read the whole partition
  with one ``Query`` instead (account and sessions come together);
- ending every session of an account (:func:`end_sessions`) is one ``Query`` of that
  partition plus one ``BatchWriteItem`` per 25 sessions, and nothing revives them: a session
  is saved again only if it still exists. A request deletes each session once: a session
  ended that way, with the request's session given, is not deleted again by that
  session's logout or new key (ending sessions without changing the account, "log out
  other sessions", is :mod:`accounts.logouts`' one guarded transaction instead);
- an account has at most ``ACCOUNTS_MAX_SESSIONS`` sessions, by a guard, not a count: the
  partition holds that many slot items, ``SK=SESS_SLOT#<n>`` for ``n`` below the limit,
  each naming the session that holds it (``holder``), and a new session of the account is
  written in ONE transaction with the Put of the slot it takes, guarded by the slot's
  holder as read (absent, or the session it named, which the same transaction deletes).
  Two logins that read the same slot cannot both take it: the second is cancelled, reads
  the partition again and takes another slot (or the least recently seen one). A login
  reads the account's partition (:func:`counts_at_login`) instead of the account alone,
  so choosing costs no request more; a session without a slot (written before the bound,
  or while the limit was off) is ended by the next login, up to
  :data:`MAX_ENDED_BY_A_LOGIN` of them a login.

A session of nobody (data stored before login) lives at ``PK=SESSION#<secret>``,
``SK=SESSION``. Every session carries ``expires`` (epoch seconds, the table's TTL
attribute) set from its expiry; DynamoDB deletes expired items lazily, so a session whose
``expires`` has passed is treated as absent when read.

A session ends at the first of two timeouts (NIST SP 800-63B-4 §2.2.3, docs/security.md):

- absolute: ``SESSION_COOKIE_AGE`` (Django's, default 14 days) after its creation (a login
  creates one; the new key a reauthentication gives it keeps it), however active it is:
  ``expires`` is never set later than that;
- idle: ``ACCOUNTS_SESSION_IDLE_TIMEOUT`` (default 12 hours) after its ``last_seen``. No
  request writes for that: a page refreshes ``last_seen`` only once :func:`touch_interval`
  has passed since it was written (at most half the idle timeout), so a session ends between
  that interval short of the idle timeout and the idle timeout after its last request. Its
  item then stays until ``expires`` (TTL), read as absent.
"""

import contextvars
import hashlib
import time
from collections.abc import Iterable
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any

import botocore.exceptions
from django.conf import settings
from django.contrib.auth import SESSION_KEY
from django.contrib.sessions.backends.base import VALID_KEY_CHARS, CreateError, SessionBase, UpdateError
from django.contrib.sessions.exceptions import SessionInterrupted
from django.http import HttpRequest
from django.utils.crypto import get_random_string

from . import dynamo, regions, timeline, transactions
from .app_settings import app_settings
from .browsers import describe_user_agent
from .exceptions import AccountRefused, Busy, StaleItem, Unavailable
from .ratelimit import client_address, client_ip
from .tables import ACCOUNT_PREFIX, PROFILE_SORT_KEY, account_pk, get_account_model, has_expired, is_gone, raw_expires

SESSION_SORT_PREFIX = "SESSION#"
# The session slots of an account (ACCOUNTS_MAX_SESSIONS): SK=SESS_SLOT#<n>, holder=<session SK>.
SLOT_SORT_PREFIX = "SESS_SLOT#"
# A login whose slot was taken by another meanwhile reads again and retries this many times:
# each cancellation means another login of the account committed, so they all end.
SLOT_ATTEMPTS = 20
# The most sessions one login ends (the oldest beyond ACCOUNTS_MAX_SESSIONS): its write stays
# one small transaction even after the limit was lowered; the next logins end the rest.
MAX_ENDED_BY_A_LOGIN = 25
# The attribute of a session renewed under a new key that keeps its id (session_id_of).
SESSION_ID = "session_id"
ANONYMOUS_PREFIX = "SESSION#"
ANONYMOUS_SORT_KEY = "SESSION"
SECRET_LENGTH = 32  # 32 of 36 characters: 165 random bits, as Django's own session keys
# The longest session key this store hands out is an account id (at most 64 characters) and
# its secret; a longer one (a planted 3 kB cookie) names no session. Read as one, it would
# make a key DynamoDB refuses (over 2,048 bytes), and every page would fail for whoever holds it.
MAX_KEY_LENGTH = 256
USER_AGENT_MAX_LENGTH = 512
# An IPv6 address with its zone fits (45 characters and the zone's name).
ADDRESS_MAX_LENGTH = 64

_prefetched_account = contextvars.ContextVar("accounts_prefetched_account", default=None)
"""``(account id, account or None)`` as this request's session load read it, for
:meth:`accounts.backends.AccountBackend.get_user`. Not a flow's state: a per-request cache of
one read, which saves the ``GetItem`` of every logged-in page. It cannot travel as an
argument: Django's ``AuthenticationMiddleware`` calls ``get_user(request)``, which calls the
backend's ``get_user(user_id)`` with the id alone, and the host's settings name that
middleware. A new :class:`SessionStore` (one per request) resets it."""


def in_use() -> bool:
    """Whether the project keeps its sessions here (``SESSION_ENGINE``)."""
    return settings.SESSION_ENGINE == __name__


# The condition of each session write (protocol/sessions.h models them): a new session's
# random key must be free, never another session's; a save applies only to a session that
# still lives, so one ended elsewhere (a logout, a password change) or expired stays ended. A
# comparison with a missing attribute is false, so `expires >= :now` also requires the item
# (an item lives through the second its `expires` names: accounts.tables.has_expired).
NEW_SESSION_CONDITION = "attribute_not_exists(PK)"
SAVE_CONDITION = "expires >= :now"


def _epoch(moment=None):
    return int(time.time() if moment is None else moment.timestamp())


def _split_key(session_key):
    """``(account id or None, secret)`` of a session key."""
    account_id, dot, secret = (session_key or "").rpartition(".")
    return (account_id if dot else None), secret


def raw_key(session_key):
    """The raw key (``PK``, ``SK``) of the item of the session ``session_key``."""
    return _item_key(session_key)


def _item_key(session_key):
    account_id, secret = _split_key(session_key)
    if account_id:
        return dynamo.key(account_pk(account_id), SESSION_SORT_PREFIX + secret)
    return dynamo.key(ANONYMOUS_PREFIX + secret, ANONYMOUS_SORT_KEY)


def touch_interval() -> float | None:
    """Seconds after which a page refreshes its session's ``last_seen`` (one guarded
    ``PutItem``): ``ACCOUNTS_SESSION_TOUCH_INTERVAL``, and at most half of
    ``ACCOUNTS_SESSION_IDLE_TIMEOUT``, so that a session in use is refreshed well before it
    would end; ``None``: never."""
    touch, idle = app_settings.SESSION_TOUCH_INTERVAL, app_settings.SESSION_IDLE_TIMEOUT
    if idle is None:
        return touch
    return idle / 2 if touch is None else min(touch, idle / 2)


def _is_live(raw, now):
    # A session without a readable ``expires`` (damage) is not live: it gets nobody in.
    expires = raw_expires(raw)
    if expires is None or has_expired(expires, now):
        return False
    idle = app_settings.SESSION_IDLE_TIMEOUT
    last_seen = raw.get("last_seen", {}).get("N")
    return idle is None or last_seen is None or now - int(last_seen) <= idle


def _pair(raw_key):
    return raw_key["PK"]["S"], raw_key["SK"]["S"]


def session_item(session_key, encoded, expires, created, last_seen, user_agent=None, ip=None, session_id=None):
    """The raw item of a session (its data encoded), as :meth:`SessionStore.save` writes it;
    ``user_agent`` and ``ip``: the browser and the address it logged in from; ``session_id``:
    the id of the session it renews under a new key (see :func:`session_id_of`)."""
    item = {
        **_item_key(session_key),
        "data": {"S": encoded},
        "expires": {"N": str(expires)},
        "created": {"N": str(created)},
        "last_seen": {"N": str(last_seen)},
    }
    if user_agent:
        item["user_agent"] = {"S": user_agent[:USER_AGENT_MAX_LENGTH]}
    if ip:
        item["ip"] = {"S": ip}
    if session_id:
        item[SESSION_ID] = {"S": session_id}
    return item


def _key_digest(session_key):
    return hashlib.sha256(session_key.encode()).hexdigest()[:12]


def session_id_of(raw: dict[str, Any], account_id: str) -> str:
    """The id of the session stored as ``raw`` (of account ``account_id``), which names it
    without revealing its key (the key is the cookie: whoever reads it is logged in): a
    digest of the key it was logged in with. A reauthentication gives the session a new key
    but keeps its id (stored in the item, ``session_id``), as it keeps its creation: it is
    the same session, and ending it by its id ends it under any key."""
    stored = raw.get(SESSION_ID, {}).get("S")
    return stored or _key_digest(f"{account_id}.{raw['SK']['S'][len(SESSION_SORT_PREFIX) :]}")


def slot_key(account_id, number):
    """The raw key of session slot ``number`` of account ``account_id``."""
    return dynamo.key(account_pk(account_id), f"{SLOT_SORT_PREFIX}{number}")


def _slots(items):
    """``{slot number: the SK of the session it names}`` of the slot items among ``items``."""
    slots = {}
    for raw in items:
        sort_key = raw["SK"]["S"]
        if sort_key.startswith(SLOT_SORT_PREFIX) and sort_key[len(SLOT_SORT_PREFIX) :].isdigit():
            slots[int(sort_key[len(SLOT_SORT_PREFIX) :])] = raw.get("holder", {}).get("S")
    return slots


def slot_put(account_id, number, holder, session_sort_key):
    """The PutItem making session ``session_sort_key`` the holder of slot ``number``,
    guarded by the holder read: ``attribute_not_exists(PK)`` when the slot was absent, else
    ``holder = <the session it named>``. Of two logins that read one slot, one takes it."""
    item = {**slot_key(account_id, number), "holder": {"S": session_sort_key}}
    params = {"TableName": dynamo.table_name(), "Item": item}
    if holder is None:
        params["ConditionExpression"] = "attribute_not_exists(PK)"
    else:
        params["ConditionExpression"] = "holder = :holder"
        params["ExpressionAttributeValues"] = {":holder": {"S": holder}}
    return params


def prefetched_account(account_id):
    """``(True, account or None)`` when this request's session load read account
    ``account_id`` already; ``(False, None)`` otherwise (read it yourself)."""
    prefetched = _prefetched_account.get()
    if prefetched is None or prefetched[0] != account_id:
        return False, None
    return True, prefetched[1]


@dataclass(frozen=True)
class SessionInfo:
    """A live session of an account, as the profile and staff pages list it. ``id`` names
    it without revealing its key (the key is the cookie: whoever reads it is logged in)."""

    id: str
    created: datetime
    last_seen: datetime
    user_agent: str
    current: bool = False
    # The client address it logged in from ("" for a session written before it was kept).
    ip: str = ""

    @property
    def browser(self):
        """The browser and system, as :func:`describe_user_agent` reads them."""
        return describe_user_agent(self.user_agent)


def _info(raw, account_id, current_key=None):
    key = f"{account_id}.{raw['SK']['S'][len(SESSION_SORT_PREFIX) :]}"
    return SessionInfo(
        id=session_id_of(raw, account_id),
        created=datetime.fromtimestamp(int(raw["created"]["N"]), UTC),
        last_seen=datetime.fromtimestamp(int(raw["last_seen"]["N"]), UTC),
        user_agent=raw.get("user_agent", {}).get("S", ""),
        current=key == current_key,
        ip=raw.get("ip", {}).get("S", ""),
    )


def _live_sessions(items, now):
    return [raw for raw in items if raw["SK"]["S"].startswith(SESSION_SORT_PREFIX) and _is_live(raw, now)]


@dataclass(frozen=True)
class SessionWrite:
    """The write that saves a session (:meth:`SessionStore.prepare_write`): ``put``, the
    guarded PutItem of its item; ``deletes``, the raw keys to delete with it (the session it
    replaces, cleared counters, sessions beyond the limit); ``slot_put``, the guarded Put of
    the session slot a new session takes (``None``: it takes none); ``event_put``, the Put
    of the login event a new session records in the security timeline (``None``: no
    login). ``now`` and ``data``: when and what it saves."""

    put: dict
    deletes: list
    slot_put: dict | None
    event_put: dict | None
    now: int
    data: dict


def live_sessions(items: list[dict]) -> list[dict]:
    """The raw items of the live sessions among ``items`` (a read of an account's partition)."""
    return _live_sessions(items, _epoch())


class SessionStore(SessionBase):
    """Django session store keeping each session as an item of the accounts table."""

    def __init__(self, session_key=None):
        super().__init__(session_key)
        _prefetched_account.set(None)
        # The (PK, SK) of the sessions this request ended (note_ended): never deleted again.
        self._ended: set[tuple[str, str]] = set()
        self.user_agent = None
        # The client address of the login that made it (record_user_agent), kept with it.
        self.ip = None
        # The loaded item's bookkeeping, kept when it is saved again (and when the session is
        # renewed under a new key: see _next_item).
        self._created = None
        self._last_seen = None
        self._session_id = None
        # The key cycle_key replaced, until the next save writes the new one.
        self._renewed_key = None
        # Read the account's other sessions too on load (see want_all_sessions), and how many
        # of its newest security events with them (and what was read).
        self._load_all = False
        self._account_sessions = None
        self._events_wanted = 0
        self._account_events = None
        # Items to delete in the same request as the next save (an old key, a counter).
        self._deletes = []
        # A new session of nobody that a rate limit of its own already paid for (a half-login
        # after a checked password): not counted again as an anonymous session.
        self._limited_elsewhere = False
        # (key, data) as last saved by this request: saving them again sends nothing.
        self._saved = None
        # (account id, its live session items, its slots) as a login read them (counts_at_login).
        self._login_sessions = None
        # The slot this session holds, as loaded; the slot a new session takes, as chosen
        # ([number, holder as read]); and the guarded Put of that slot, once planned.
        self._slot = None
        self._slot_choice = None
        self._slot_put = None
        self._evicted = None
        # Items to read with the session on load (see read_along), and what that read found.
        self._along_keys = []
        self._along_found = None
        # The address a login of this request came from (record_user_agent), until its session's
        # write records the login; then that write's event item (login_event_put).
        self._login_address = None
        self._login_event = None
        # The account a login of this request read (note_login), and the check of it that the
        # new session's write sends: still there and active as read.
        self._login_account = None
        self._account_check = None

    # Reading

    def _validate_session_key(self, key):
        """A key longer than :data:`MAX_KEY_LENGTH` is no key: the request is anonymous, as
        with a key of a session that ended (Django then starts a new session)."""
        return super()._validate_session_key(key) and len(key) <= MAX_KEY_LENGTH

    def limited_elsewhere(self) -> None:
        """Say that this new session of nobody follows a request a rate limit of its own
        already counted (the password of a login staged for its second step, under
        ``login_failed``): it is not counted again against ``ACCOUNTS_ANONYMOUS_SESSION_LIMIT``,
        so the login costs what it did."""
        self._limited_elsewhere = True

    def want_all_sessions(self, events: int = 0) -> None:
        """Load the account's other sessions with this one (one ``Query`` instead of one
        ``BatchGetItem``), and its ``events`` newest security events in the same ``Query``
        (:meth:`account_events`). Call it before anything touches the session or
        ``request.user``."""
        self._load_all = True
        self._events_wanted = events

    def account_events(self) -> list[dict[str, Any]] | None:
        """Raw items of the newest security events of this session's account, newest first,
        as the load read them (:meth:`want_all_sessions`), or ``None`` when it did not."""
        self._get_session()
        return self._account_events

    def read_along(self, keys):
        """Read the items at ``keys`` (raw keys) with this session, in its load's one
        ``BatchGetItem`` (a passkey login reads its credential's lock so); see
        :meth:`read_along_items`. Call it before anything touches the session or
        ``request.user``."""
        self._along_keys = list(keys)

    def read_along_items(self):
        """``{(PK, SK): raw item}`` of the live items :meth:`read_along` asked for, as the
        session's load read them, or ``None`` when the load did not read them (the session
        was loaded before, or there is none): read them yourself."""
        self._get_session()
        return self._along_found

    def load(self):
        account_id, _ = _split_key(self.session_key)
        now = _epoch()
        session_key = _item_key(self.session_key)
        along = [] if account_id and self._load_all else self._along_keys
        if account_id and self._load_all and self._events_wanted:
            items, events = dynamo.query_partition_and_events(account_pk(account_id), self._events_wanted)
        elif account_id and self._load_all:
            items = dynamo.query_partition(account_pk(account_id))
        elif account_id:
            items = dynamo.batch_get([session_key, dynamo.key(account_pk(account_id), PROFILE_SORT_KEY), *along])
        else:
            items = dynamo.batch_get([session_key, *along])
        if along:
            wanted = {_pair(raw_key) for raw_key in along}
            self._along_found = {_pair(raw): raw for raw in items if _pair(raw) in wanted and not is_gone(raw, now)}
        session = next(
            (raw for raw in items if raw["PK"] == session_key["PK"] and raw["SK"] == session_key["SK"]), None
        )
        if session is None or not _is_live(session, now):
            self._session_key = None
            return {}
        if account_id:
            profile = next((raw for raw in items if raw["SK"]["S"] == PROFILE_SORT_KEY), None)
            # An expired account, or the tombstone of a deleted one, is no account.
            account = get_account_model().from_raw_data(profile) if profile and not is_gone(profile, now) else None
            _prefetched_account.set((account_id, account))
            if self._load_all:
                self._account_sessions = _live_sessions(items, now)
            if self._load_all and self._events_wanted:
                self._account_events = [raw for raw in events if not is_gone(raw, now)]
        self._created = int(session["created"]["N"])
        self._last_seen = int(session["last_seen"]["N"])
        self._session_id = session.get(SESSION_ID, {}).get("S")
        self._slot = int(session["slot"]["N"]) if "slot" in session else None
        self.user_agent = session.get("user_agent", {}).get("S")
        self.ip = session.get("ip", {}).get("S")
        touch = touch_interval()
        if touch is not None and now - self._last_seen >= touch and not regions.reads_only():
            # Refresh "last seen" by saving (guarded: never revives a deleted session).
            self.modified = True
        return self.decode(session["data"]["S"])

    def exists(self, session_key):
        items = dynamo.batch_get([_item_key(session_key)])
        return bool(items) and _is_live(items[0], _epoch())

    def account_sessions(self) -> list[dict[str, Any]]:
        """Raw items of the live sessions of this session's account, read on load when
        :meth:`want_all_sessions` was called, else with one ``Query`` now."""
        self._get_session()
        if self._account_sessions is None:
            account_id, _ = _split_key(self.session_key)
            if not account_id:
                return []
            self._account_sessions = _live_sessions(
                dynamo.query_partition(account_pk(account_id), SESSION_SORT_PREFIX), _epoch()
            )
        return self._account_sessions

    # Writing

    def _get_new_session_key(self):
        # No existence check (a read per key): the secret is 165 random bits, and the first
        # save of a new key is still guarded by attribute_not_exists.
        return get_random_string(SECRET_LENGTH, VALID_KEY_CHARS)

    def _key_for(self, account_id):
        secret = self._get_new_session_key()
        return f"{account_id}.{secret}" if account_id else secret

    def create(self):
        for _ in range(10):
            self._session_key = self._key_for(self._get_session(no_load=True).get(SESSION_KEY))
            try:
                self.save(must_create=True)
            except CreateError:
                continue
            self.modified = True
            return
        raise RuntimeError("Unable to create a new session key.")

    def cycle_key(self):
        """A new key for the same data, chosen when the session is saved (after login, in
        the account's partition), in the same request that deletes the old item. Without a
        login (a reauthentication, a password change), it is the same session renewed: it
        keeps its id and its creation (see :meth:`_next_item`)."""
        data = self._session
        old_key = self.session_key
        self._session_key = None
        self._session_cache = data
        self.modified = True
        self._renewed_key = old_key
        if old_key:
            self._deletes.append(_item_key(old_key))

    def note_account_items(self, items: Iterable[dict[str, Any]]) -> None:
        """Receive the items a login read with the account (its partition): the account's
        live sessions and its session slots, from which the new session's write chooses its
        slot and the sessions it ends."""
        now = _epoch()
        owned = [raw for raw in items if raw["PK"]["S"].startswith(ACCOUNT_PREFIX)]
        if owned:
            account_id = owned[0]["PK"]["S"][len(ACCOUNT_PREFIX) :]
            self._login_sessions = (account_id, _live_sessions(owned, now), _slots(owned))
        else:
            self._login_sessions = None

    def _read_for(self, account_id):
        """``(live sessions, slots)`` of ``account_id`` as this request's login read them,
        or ``None``."""
        if self._login_sessions is None or self._login_sessions[0] != account_id:
            return None
        return self._login_sessions[1], self._login_sessions[2]

    def _kept(self, live):
        leaving = {_pair(raw_key) for raw_key in self._deletes}
        return {raw["SK"]["S"]: raw for raw in live if _pair(raw) not in leaving and not self._ended_here(raw)}

    def _choose_slot(self, account_id):
        """``[number, holder as read]`` of the slot a new session of ``account_id`` takes:
        a slot absent or naming no live session, else the one of the least recently seen
        session (which the write then ends). Without a read of the partition: the slot this
        session held (a new key for the same login), else slot 0, as if absent (a first
        login); a wrong guess is cancelled by its guard and chosen again from a read."""
        limit = app_settings.MAX_SESSIONS
        read = self._read_for(account_id)
        if read is None:
            old = next((key for key in self._deletes if key["PK"]["S"] == account_pk(account_id)), None)
            if self._slot is not None and self._slot < limit and old is not None:
                return [self._slot, old["SK"]["S"]]
            return [0, None]
        live, slots = read
        kept = self._kept(live)
        for number in range(limit):
            if slots.get(number) not in kept:
                return [number, slots.get(number)]
        oldest = min(range(limit), key=lambda number: int(kept[slots[number]]["last_seen"]["N"]))
        return [oldest, slots[oldest]]

    def _beyond_limit(self, account_id):
        """Raw keys of the live sessions of ``account_id`` a new one ends: those that hold no
        slot below ``ACCOUNTS_MAX_SESSIONS`` (written before the bound, or before the limit
        was lowered), least recently seen first, at most :data:`MAX_ENDED_BY_A_LOGIN` (none
        unless a login read them)."""
        read = self._read_for(account_id) if app_settings.MAX_SESSIONS is not None else None
        if read is None:
            return []
        live, slots = read
        named = {holder for number, holder in slots.items() if number < app_settings.MAX_SESSIONS}
        unnamed = [raw for sort_key, raw in self._kept(live).items() if sort_key not in named]
        unnamed.sort(key=lambda raw: int(raw["last_seen"]["N"]))
        return [dynamo.key(*_pair(raw)) for raw in unnamed[:MAX_ENDED_BY_A_LOGIN]]

    def beyond_limit_at_login(self, account_id):
        """``[[PK, SK], ...]`` of the sessions of ``account_id`` a login now would end
        (holding no slot, as this request read them): what a login staged for its second
        step keeps for the request that signs in."""
        return [list(_pair(raw_key)) for raw_key in self._beyond_limit(account_id)]

    def slot_at_login(self, account_id):
        """The slot a login of ``account_id`` now would take, ``[number, holder as read]``
        (see :meth:`_choose_slot`), or ``None`` without ``ACCOUNTS_MAX_SESSIONS``: what a
        login staged for its second step keeps for the request that signs in."""
        return self._choose_slot(account_id) if app_settings.MAX_SESSIONS is not None else None

    def end_with_login(self, keys, slot=None):
        """Delete the sessions at ``keys`` (``[PK, SK]`` pairs, from
        :meth:`beyond_limit_at_login`) with the login this request makes, in its write, and
        take ``slot`` (from :meth:`slot_at_login`) with it."""
        for pk, sort_key in keys:
            self._deletes.append(dynamo.key(pk, sort_key))
        self._slot_choice = list(slot) if slot else None

    def note_login(self, address: str, account: Any = None) -> None:
        """Record the login this request makes, from ``address``, in the account's security
        timeline: the new session's write puts its event in the same request. ``account``:
        the account as the login read it (active), which that write checks is still there
        and active (see :meth:`save`)."""
        self._login_address = address
        self._login_account = account

    def login_event_put(self) -> dict | None:
        """The Put of the login event the new session of this request's last
        :meth:`write_with` records (``None``: no login), to send in its transaction."""
        return timeline.put(self._login_event) if self._login_event else None

    def _login_committed(self) -> None:
        if self._login_event:
            timeline.committed(get_account_model(), self._login_event)
            self._login_event = None

    def note_ended(self, raw_keys: Iterable[dict[str, Any]]) -> None:
        """Note that this request ended the sessions at ``raw_keys`` (:func:`end_sessions`
        was given this session): neither its logout nor its new key deletes one of them
        again, so each session is deleted once (and a deletion costs no request more)."""
        self._ended.update(_pair(raw_key) for raw_key in raw_keys)

    def _ended_here(self, raw_key):
        return _pair(raw_key) in self._ended

    def delete_with_next_save(self, raw_key):
        """Delete the item at ``raw_key`` when this session is saved: in the same request
        when the save puts a new session (a login), else right after. A login clears its
        failure counters this way without a request of its own."""
        self._deletes.append(raw_key)

    def save(self, must_create=False):
        data = self._get_session(no_load=must_create)
        if not must_create and not self._deletes and self._saved == (self.session_key, data):
            # Saved already in this request (see save_now): the middleware's save is a no-op.
            return
        item, new, now = self._next_item(data, must_create)
        deletes, self._deletes = self._pending_deletes(), []
        events = [self._login_event] if self._login_event else []
        if self._slot_put is not None or self._account_check is not None:
            self._write_login(item, now, deletes)
        elif new and (deletes or events):
            # A fresh random key needs no guard (nor an event's), so the put, the login's
            # event and the deletes go as one request.
            dynamo.batch_write(puts=[item, *events], deletes=deletes)
        else:
            self._put(item, new, now)
            if deletes:
                dynamo.batch_write(deletes=deletes)
        self._login_committed()
        self._saved_as(item, now, data)

    def _write_login(self, item, now, deletes):
        """Send a login's new session in one transaction with the slot it takes and the
        check that its account is still there and active as the login read it. When the slot
        changed hands since it was read, read the partition again and choose again; when the
        account check failed (a deactivation or deletion won the race), write nothing more:
        this session is emptied (its cookie dropped) and :class:`UpdateError` raised, as for a
        session ended elsewhere. Nobody is logged in."""
        account_id, _ = _split_key(self.session_key)
        for _ in range(SLOT_ATTEMPTS):
            plan = transactions.plan_login_session(
                self._put_params(item, True, now), self._slot_put, deletes, self.login_event_put(), self._account_check
            )
            try:
                transactions.run_once(plan)
                return
            except AccountRefused as error:
                self.discard()
                raise UpdateError("The account was deactivated or deleted while it logged in.") from error
            except (StaleItem, Busy) as error:
                if self._slot_put is None:
                    # No slot to choose again: only contention (Busy) gets here.
                    raise Unavailable(f"The login's session could not be written: {error}") from error
                self._deletes = [key for key in deletes if key != self._evicted]
                self.note_account_items(dynamo.query_partition(account_pk(account_id), "SESS"))
                deletes = self._take_slot(account_id, item)
        raise Unavailable("Other logins of this account kept taking the session slots; no session was written.")

    def prepare_write(self):
        """The write that saves this session now, as a :class:`SessionWrite`, for a caller
        that sends it in one transaction with writes of its own (a second factor's sign-in
        with its single-use writes, :mod:`accounts.mfa`). Then call :meth:`written` once
        the transaction committed, or :meth:`discard` when it failed: nothing of this
        session is stored then."""
        data = self._get_session()
        item, new, now = self._next_item(data)
        deletes, self._deletes = self._pending_deletes(), []
        event_put = timeline.put(self._login_event) if self._login_event else None
        return SessionWrite(self._put_params(item, new, now), deletes, self._slot_put, event_put, now, dict(data))

    def written(self, write):
        """Note that ``write`` (from :meth:`prepare_write`) was sent: saving the same data
        again in this request sends nothing, and its login event is told to listeners."""
        self._login_committed()
        self._saved_as(write.put["Item"], write.now, write.data)

    def discard(self):
        """Forget this session after its write (from :meth:`prepare_write`) failed: it is
        emptied and will not be saved (its cookie is dropped), and its login event with it."""
        self._session_cache, self._session_key, self.modified = {}, None, False
        self._login_event = None

    def _pending_deletes(self):
        """The raw keys to delete with the next write, but those this request ended already
        (a deletion, a password change: each session is deleted once)."""
        return [raw_key for raw_key in self._deletes if not self._ended_here(raw_key)]

    def _next_item(self, data, must_create=False):
        """``(item, new, now)``: the item this session is saved as, and whether it is a new
        one (a login gets a new key in its account's partition; the old key is deleted).

        A session of the account given a new key without a login (:meth:`cycle_key`: a
        reauthentication, a password change) is the same session renewed: the new item
        keeps the old one's creation, so the absolute lifetime (``SESSION_COOKIE_AGE``) still
        counts from the login, and its id (:func:`session_id_of`), so ending it by its id
        ends it under its new key too. A login starts a new session: a new creation, a new id."""
        account_id = data.get(SESSION_KEY)
        new = must_create or self.session_key is None or _split_key(self.session_key)[0] != account_id
        renewed, self._renewed_key = self._renewed_key, None
        renewal = (
            new
            and not must_create
            and self._login_address is None
            and account_id is not None
            and renewed is not None
            and _split_key(renewed)[0] == account_id
        )
        self._slot_put = None
        self._login_event = None
        self._account_check = None
        if new and not must_create and account_id and self._login_address is not None:
            origin = timeline.Origin(self._login_address, self.user_agent or "")
            self._login_event = timeline.new_event(account_id, timeline.LOGIN, origin=origin)
            self._login_address = None
            if self._login_account is not None and self._login_account.id == account_id:
                self._account_check = transactions.account_as_signed_in(self._login_account)
        if new and not must_create:
            if self.session_key:
                self._deletes.append(_item_key(self.session_key))
            if account_id:
                self._deletes.extend(self._beyond_limit(account_id))
            if renewal:
                self._session_id = self._session_id or _key_digest(renewed)
            else:
                self._created, self._session_id = None, None
            self._session_key = self._key_for(account_id)
        now = _epoch()
        created = self._created or now
        # Never past the absolute lifetime, counted from its creation (Django's expiry date
        # slides: it counts from this save).
        expires = min(_epoch(self.get_expiry_date()), created + settings.SESSION_COOKIE_AGE)
        item = session_item(
            self.session_key, self.encode(data), expires, created, now, self.user_agent, self.ip, self._session_id
        )
        if new and not must_create and account_id and app_settings.MAX_SESSIONS is not None:
            self._deletes = self._take_slot(account_id, item, self._slot_choice)
        return item, new, now

    def _take_slot(self, account_id, item, choice=None):
        """Make the new session ``item`` take a slot (``choice``, else one chosen now): its
        number is stored in the item, the slot's guarded Put is planned, and the session the
        slot named is deleted with it. Returns the deletes to send (this request's, with it)."""
        number, holder = choice or self._choose_slot(account_id)
        item["slot"] = {"N": str(number)}
        self._slot, self._slot_choice = number, None
        self._slot_put = slot_put(account_id, number, holder, item["SK"]["S"])
        self._evicted = dynamo.key(account_pk(account_id), holder) if holder else None
        deletes = [key for key in self._deletes if key != self._evicted]
        return deletes + [self._evicted] if self._evicted else deletes

    def _saved_as(self, item, now, data):
        self._created, self._last_seen = int(item["created"]["N"]), now
        self._saved = (self.session_key, dict(data))

    def _put_params(self, item, new, now):
        if new:
            condition, values = NEW_SESSION_CONDITION, {}
        else:
            condition, values = SAVE_CONDITION, {":now": {"N": str(now)}}
        params = {"TableName": dynamo.table_name(), "Item": item, "ConditionExpression": condition}
        if values:
            params["ExpressionAttributeValues"] = values
        return params

    def _put(self, item, new, now):
        params = self._put_params(item, new, now)
        try:
            dynamo.call("put_item", **params)
        except botocore.exceptions.ClientError as error:
            if error.response.get("Error", {}).get("Code") != "ConditionalCheckFailedException":
                raise
            raise (CreateError if new else UpdateError)() from error

    def delete(self, session_key=None):
        if session_key is None:
            if self.session_key is None:
                return
            session_key = self.session_key
        if self._ended_here(_item_key(session_key)):
            return  # this request ended it already (a deletion, a password change)
        dynamo.call("delete_item", TableName=dynamo.table_name(), Key=_item_key(session_key))

    @classmethod
    def clear_expired(cls):
        """Nothing to do: DynamoDB's TTL deletes expired sessions, and reads ignore them."""


def starts_anonymous_session(request: HttpRequest) -> bool:
    """Whether saving the request's session would write a new session of nobody: modified,
    not empty, with no item yet and no logged-in user, and not paid for by a limit of its own
    (:meth:`SessionStore.limited_elsewhere`; see
    :func:`accounts.ratelimit.consume_anonymous_session`)."""
    session = getattr(request, "session", None)
    return (
        isinstance(session, SessionStore)
        and not session._limited_elsewhere
        and session.modified
        and session.session_key is None
        and not session.is_empty()
        and SESSION_KEY not in session
    )


def save_now(request):
    """Save the request's session now if it changed, as the session middleware would after
    the response, so that a failing write is answered by the code that can explain it (the
    503 page, a form); the middleware's own save afterwards sends nothing."""
    session = getattr(request, "session", None)
    if isinstance(session, SessionStore) and session.modified and not session.is_empty():
        try:
            session.save()
        except UpdateError as error:
            raise SessionInterrupted(
                "The session was ended (a logout or a password change elsewhere) while this request ran."
            ) from error


def end_sessions(
    account_id: str,
    *,
    except_key: str | None = None,
    sessions: list[dict[str, Any]] | None = None,
    also: Iterable[dict[str, Any]] = (),
    session: SessionBase | None = None,
) -> int:
    """End every session of account ``account_id`` on the server, except the session
    whose key is ``except_key`` (e.g. ``request.session.session_key``). Returns how many
    were ended.

    Costs one ``Query`` (skipped when ``sessions``, raw items of that account's sessions as
    :meth:`SessionStore.account_sessions` returns them, are given) and one
    ``BatchWriteItem`` per 25 sessions. Call it after a password change or reset, a
    deactivation or a deletion: a cookie of an ended session is anonymous from then on,
    and reactivating the account revives none of them. A session written after this Query
    is not among them, and the change refuses it: a login or a reauthentication that read
    the account before a deactivation or deletion is cancelled by the account's
    ``is_active`` as read, checked in the transaction that writes its session; one racing a
    new password carries the old password's session hash, and its next request is logged
    out (Django's :func:`~django.contrib.auth.get_user`); see docs/sessions.md. To end
    sessions without changing the account ("log out other sessions"), use
    :func:`accounts.logouts.log_out_sessions`: nothing else refuses a session renewed
    meanwhile. ``also``: raw keys of other items to delete in the same ``BatchWriteItem`` (a
    deleted account's security events); ``session``: this request's session, told which
    sessions ended (:meth:`SessionStore.note_ended`) so that its logout or new key does not
    delete one again.
    """
    if sessions is None:
        sessions = dynamo.query_partition(account_pk(account_id), SESSION_SORT_PREFIX, attributes=["PK", "SK"])
    keep = _item_key(except_key) if except_key else None
    ended = [dynamo.key(raw["PK"]["S"], raw["SK"]["S"]) for raw in sessions]
    ended = [item_key for item_key in ended if item_key != keep]
    if ended or also:
        dynamo.batch_write(deletes=[*ended, *also])
        if isinstance(session, SessionStore):
            session.note_ended(ended)
    return len(ended)


def counts_at_login(request: HttpRequest) -> bool:
    """Whether a login on ``request`` reads the account with its sessions (one ``Query``
    instead of one ``GetItem``) and hands them to :meth:`SessionStore.note_account_items`,
    so that the new session ends those beyond ``ACCOUNTS_MAX_SESSIONS`` in its own write:
    with sessions kept here and the limit on."""
    return isinstance(getattr(request, "session", None), SessionStore) and app_settings.MAX_SESSIONS is not None


def list_sessions(
    account_id: str, current_key: str | None = None, sessions: list[dict[str, Any]] | None = None
) -> list[SessionInfo]:
    """The live sessions of account ``account_id``, most recently seen first, as
    :class:`SessionInfo`; ``current_key`` marks the one it matches."""
    if sessions is None:
        sessions = _live_sessions(dynamo.query_partition(account_pk(account_id), SESSION_SORT_PREFIX), _epoch())
    infos = [_info(raw, account_id, current_key) for raw in sessions]
    return sorted(infos, key=lambda info: info.last_seen, reverse=True)


def record_user_agent(sender, request, user, **kwargs):
    """``user_logged_in`` receiver: the new session remembers the browser it was made in and
    the address it came from, and its write records the login in the account's security
    timeline (its event rides in that write: no request more). With another session engine
    no session item is written, and no login is recorded: its event would cost a request of
    its own."""
    if isinstance(getattr(request, "session", None), SessionStore):
        request.session.user_agent = request.META.get("HTTP_USER_AGENT", "")
        request.session.ip = client_address(request)[:ADDRESS_MAX_LENGTH]
        request.session.note_login(client_ip(request), getattr(user, "account", None))
