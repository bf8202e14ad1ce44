"""Account operations: signup, lookups, changes and deletion, each through the engine.

Views and forms call these; only :mod:`accounts.transactions` talks to DynamoDB's
transaction API, and only :mod:`accounts.uniqueness` builds lock keys.
"""

import uuid
from collections.abc import Iterable, Sequence
from typing import Any

from django.contrib.sessions.backends.base import SessionBase
from django.utils.crypto import salted_hmac

from . import dynamo, logouts, lookups, sessions, signals, signup_fields, timeline, transactions
from .app_settings import MANDATORY, NONE, app_settings
from .exceptions import (
    InvalidUniqueValue,
    ItemAlreadyExists,
    ItemDeleted,
    OutcomeUnknown,
    StaleItem,
    TokenReused,
    Unavailable,
)
from .phones.numbers import looks_like_phone
from .tables import (
    ACCOUNT_PREFIX,
    EVENT_SORT_PREFIX,
    PROFILE_SORT_KEY,
    Account,
    account_constraints,
    account_pk,
    epoch_now,
    get_account_model,
    is_gone,
    utcnow,
)
from .uniqueness import UniqueConstraint, normalize_text


def constraint_for(field: str) -> UniqueConstraint:
    """The account's unique constraint on ``field``."""
    for constraint in account_constraints():
        if constraint.fields == (field,):
            return constraint
    raise KeyError(f"No unique constraint on account field {field!r}")


def account_id_for_token(token):
    """The account id a signup with this request token creates.

    Derived, not random, so the same form posted twice targets the same account item and
    the second post can recognise the first instead of creating a second account.
    """
    return salted_hmac("accounts.signup", token, algorithm="sha256").hexdigest()[:32]


def build_account(email, username, password_hash, *, token=None, **extra):
    """An unsaved account item; an empty ``username`` (none given, or a site without
    usernames) is left out of it."""
    account_id = account_id_for_token(token) if token else uuid.uuid4().hex
    return get_account_model()(
        PK=account_pk(account_id),
        email=email,
        username=stored_username(username),
        password=password_hash,
        **extra,
    )


def stored_username(username: str | None) -> str | None:
    """What an account stores for ``username``: nothing (``None``) for an empty one, and on
    a site without usernames (``ACCOUNTS_SIGNUP_FIELDS``), whatever a caller passed."""
    return (username or None) if signup_fields.has_username() else None


def verification_required() -> bool:
    """Whether a sign-up must prove its mailbox before it logs in: in mode "mandatory", and
    in every mode with ``ACCOUNTS_PREVENT_ENUMERATION`` (a sign-up logged in at once would
    tell a new address from a registered one, which cannot be logged in)."""
    return app_settings.EMAIL_VERIFICATION == MANDATORY or app_settings.PREVENT_ENUMERATION


def refuses_registered_addresses() -> bool:
    """Whether a sign-up or an email change request is refused at once for an address a
    verified account holds (the per-field error). Not with ``ACCOUNTS_PREVENT_ENUMERATION``:
    it then goes through like any other, and the mail it triggers goes to the address's
    owner as a notice instead of a link (see :mod:`accounts.verification`)."""
    return not app_settings.PREVENT_ENUMERATION


def address_held_by_another(account: Account, email: str) -> bool:
    """Whether an account other than ``account`` holds ``email``'s lock: one consistent
    GetItem. It chooses which mail an address gets, never whether a value is taken."""
    constraint = constraint_for("email")
    owner = lookups.lock_owner(type(account), constraint.key_for(email))
    return owner is not None and owner != account.PK


def build_signup_account(email, username, password_hash, *, token=None, email_verified=None, **extra):
    """The unsaved account :func:`signup` creates: verified, or unverified and expiring."""
    if email_verified is None:
        email_verified = app_settings.EMAIL_VERIFICATION == NONE and not app_settings.PREVENT_ENUMERATION
    extra["email_verified"] = bool(email_verified)
    if not email_verified:
        extra["expires"] = epoch_now() + int(app_settings.UNVERIFIED_EXPIRY.total_seconds())
    return build_account(email, username, password_hash, token=token, **extra)


def signup(email, username, password_hash, *, token=None, email_verified=None, also=(), **extra):
    """Create an account and its locks in one transaction. Returns ``(account, created)``.

    ``email_verified=None`` follows ``ACCOUNTS_EMAIL_VERIFICATION`` (``"none"``: verified at
    once, unless ``ACCOUNTS_PREVENT_ENUMERATION``); ``True`` creates a verified account. A verified account takes its email lock
    now; an unverified one takes none (the transaction only checks that no verified account
    holds the address) and expires, with its other locks, after ``ACCOUNTS_UNVERIFIED_EXPIRY``.

    With ``ACCOUNTS_PREVENT_ENUMERATION`` an unverified sign-up is not refused for an address
    a verified account holds (:func:`refuses_registered_addresses`): it is created, and can
    never take that address.

    ``created`` is False when this exact signup (same ``token``, email and username) was
    already committed by an earlier post, such as a double click or a browser resend.
    Raises :class:`~accounts.exceptions.ItemDeleted` when the account ``token`` names was
    deleted since (a form posted again: an account id never comes back, whatever the
    token's age), :class:`~accounts.exceptions.UniqueViolation` naming every field in use, or
    :class:`~accounts.exceptions.OutcomeUnknown` when neither resending with the same token
    nor reading the account back could tell whether it was written (``account_created`` is
    sent whenever it is known to be). ``also``: actions on items the account owns, created
    in the same transaction (a passkey sign-up's credential item).
    """
    account = build_signup_account(email, username, password_hash, token=token, email_verified=email_verified, **extra)
    try:
        transactions.create(account, token=token, check_unheld=refuses_registered_addresses(), also=also)
    except (ItemAlreadyExists, TokenReused) as error:
        earlier = get_account(account.id)
        if earlier is None and lookups.was_deleted(type(account), account.PK):
            raise ItemDeleted("This sign-up's account was deleted since; its id is never used again.") from error
        if earlier is None or not _holds_same_values(earlier, account):
            raise
        return earlier, False
    except OutcomeUnknown:
        # Even resending with the token could not tell. The account's id is known (derived
        # from the token, or generated above): if it is there, this very request committed.
        if not _was_written(account):
            raise
    signals.account_created.send(sender=type(account), account=account)
    return account, True


def _was_written(account):
    """Whether ``account`` is stored exactly as built (its own ``created`` instant included),
    read consistently; ``False`` when that cannot be read either."""
    try:
        stored = get_account(account.id)
    except Unavailable:
        return False
    return stored is not None and stored.created == account.created and _holds_same_values(stored, account)


def _holds_same_values(first, second):
    return all(
        constraint.claimed_keys(first) == constraint.claimed_keys(second) for constraint in account_constraints()
    )


def is_verified(account: Account) -> bool:
    """Whether the account proved it reads its address (absent flag: an older account, verified)."""
    return account.email_verified is not False


# What a verification changes: the account, and the locks it holds, stop expiring.
VERIFY_CHANGES = {"email_verified": True, "expires": None}


def email_change_changes(account):
    """What applying the account's pending email change changes."""
    return {"email": account.pending_email, "pending_email": None, "pending_nonce": None}


def verify_email(account, *, origin=timeline.NO_ORIGIN, also=()):
    """Mark the address verified and give the account its email lock, in one transaction.

    ``Update account SET email_verified REMOVE expires [as read: email, not verified, not
    expired]``, ``Put email lock [attribute_not_exists(PK) OR expires < :now - margin]``, and
    ``Update lock REMOVE expires [owner = me]`` for each lock it already holds, and the
    security event, from ``origin`` (see :func:`update_account`). Raises
    :class:`~accounts.exceptions.UniqueViolation` (``email``) when another account verified
    the address first, :class:`~accounts.exceptions.StaleItem` when the account changed or
    expired since it was read. An account already verified is returned as it is. ``also``:
    as :func:`update_account` (a mailed code's tries, checked under their limit).
    """
    if is_verified(account):
        return account
    update_account(account, origin=origin, also=also, **VERIFY_CHANGES)
    signals.email_verified.send(sender=type(account), account=account)
    return account


def request_email_change(account, email, *, token=None, also=()):
    """Record ``email`` as the account's pending new address; returns the link's nonce.

    Nothing else changes and no lock moves: :func:`apply_email_change` does that, once the
    link sent to the new address is opened. A newer request replaces the older (its link
    stops working). One transaction: ``Update account SET pending_email, pending_nonce
    [as read]`` and ``ConditionCheck new email lock [attribute_not_exists(PK)]``, so an
    address another account holds is refused now with
    :class:`~accounts.exceptions.UniqueViolation` (``email``). With
    ``ACCOUNTS_PREVENT_ENUMERATION`` the check is not sent (:func:`refuses_registered_addresses`):
    any address is recorded, and one another account holds can never be applied (the
    apply's lock Put refuses it). ``token`` and ``also``: as :func:`update_account`.
    """
    nonce = uuid.uuid4().hex
    constraint = constraint_for("email")
    unheld = [(constraint, constraint.key_for(email))] if refuses_registered_addresses() else []
    update_account(account, pending_email=email, pending_nonce=nonce, unheld=unheld, token=token, also=also)
    return nonce


# What cancelling a pending email change changes: its link no longer matches a nonce.
CANCEL_EMAIL_CHANGE = {"pending_email": None, "pending_nonce": None}


def email_change_cancellation(account):
    """The changes that cancel ``account``'s pending email change ({} when none is pending),
    to send with another change in its one transaction (a new password, a new address)."""
    return dict(CANCEL_EMAIL_CHANGE) if account.pending_nonce is not None else {}


def cancel_email_change(account: Account) -> str | None:
    """Cancel the account's pending email change: one guarded write (``Update account REMOVE
    pending_email, pending_nonce [pending fields and updated as read]``); the link sent for
    it stops working. Returns the address that was pending, or ``None`` (nothing is sent)."""
    pending = account.pending_email
    changes = email_change_cancellation(account)
    if changes:
        update_account(account, **changes)
    return pending if changes else None


def is_same_address(account: Account, email: str) -> bool:
    """Whether ``email`` is the account's own address in another case or width (same lock key)."""
    constraint = constraint_for("email")
    return constraint.key_for(email) == constraint.key_for(account.email)


def apply_email_change(account, old_email, new_email, nonce, *, origin=timeline.NO_ORIGIN, also=()):
    """Apply the email change a link was issued for, in one transaction.

    ``account`` as read; the link named ``old_email``, ``new_email`` and ``nonce``. Sends
    ``Update account SET email=new REMOVE pending_email, pending_nonce [email = old AND
    pending_nonce = nonce (as read)]``, ``Put new email lock [attribute_not_exists(PK) OR
    expires < :now - margin]``, ``Delete old email lock [owner = me OR attribute_not_exists(PK)]``.
    Raises :class:`~accounts.exceptions.StaleItem` when the account no longer waits for this
    link (used, replaced, or the address changed), before sending anything when the read
    already says so; :class:`~accounts.exceptions.UniqueViolation` when the new address was
    taken meanwhile. ``origin`` and ``also``: as :func:`update_account`.
    """
    if account.email != old_email or account.pending_email != new_email or account.pending_nonce != nonce:
        raise StaleItem("The account no longer waits for this email change.")
    update_account(account, origin=origin, also=also, **email_change_changes(account))
    signals.email_changed.send(sender=type(account), account=account, old_email=old_email, new_email=new_email)
    return account


def read_partition(account_id: str):
    """The account ``account_id`` and the other items of its partition (its sessions and
    session slots, for a login to count and to choose its slot), in one consistent
    ``Query``: ``(account or None, other raw items)``."""
    if not lookups.can_be_a_key(account_pk(account_id)):
        return None, []
    items = dynamo.query_partition(account_pk(account_id))
    account = next((raw for raw in items if raw["SK"]["S"] == PROFILE_SORT_KEY), None)
    others = [raw for raw in items if raw is not account]
    live = account is not None and not is_gone(account)
    return (get_account_model().from_raw_data(account) if live else None), others


def get_account(account_id: str) -> Account | None:
    """The account with this id (consistent read), or ``None``."""
    return lookups.get_item(get_account_model(), account_pk(account_id))


def get_by_email(email):
    """The account holding this email (any case or width), or ``None``."""
    return lookups.get_by_unique(get_account_model(), constraint_for("email"), email)


def email_owner_id(email: str) -> str | None:
    """The id of the account whose lock holds ``email`` (any case or width), or ``None``:
    one consistent GetItem of the lock, whether or not anybody holds it (the account itself
    is not read)."""
    try:
        key = constraint_for("email").key_for(email)
    except InvalidUniqueValue:
        return None
    owner = lookups.lock_owner(get_account_model(), key)
    return owner.removeprefix(ACCOUNT_PREFIX) if owner and owner.startswith(ACCOUNT_PREFIX) else None


def login_owner_id(login: str) -> str | None:
    """The id of the account whose lock holds the login name ``login`` (a username or an
    address, see :func:`login_constraint`), or ``None``: one consistent GetItem of the lock,
    whether or not anybody holds it, none for a name that cannot be a key (the account
    itself is not read)."""
    key = login_lock_key(login)
    if key is None:
        return None
    owner = lookups.lock_owner(get_account_model(), key)
    return owner.removeprefix(ACCOUNT_PREFIX) if owner and owner.startswith(ACCOUNT_PREFIX) else None


def get_by_username(username):
    """The account holding this username (any case or width), or ``None`` (always, on a
    site without usernames)."""
    if not signup_fields.has_username():
        return None
    return lookups.get_by_unique(get_account_model(), constraint_for("username"), username)


def get_by_identifier(value: str) -> Account | None:
    """The account whose email address (a ``value`` with ``@``) or username is ``value``,
    whatever ``ACCOUNTS_LOGIN_METHODS`` says (the staff pages' search), or ``None``."""
    return get_by_email(value) if "@" in normalize_text(value) else get_by_username(value)


def login_field(login: str) -> str:
    """The field a login name is looked up by, among ``ACCOUNTS_LOGIN_METHODS``: with one,
    that one; with several, ``"email"`` when it has ``@`` (usernames and numbers never do),
    ``"phone"`` when it reads as a phone number (a username never does: it has a letter),
    else ``"username"`` (or, without usernames, the other method). ``@`` is looked for after
    normalization, so a full-width ``＠`` counts too."""
    methods = signup_fields.login_methods()
    if len(methods) == 1:
        return methods[0]
    if "email" in methods and "@" in normalize_text(login):
        return "email"
    if "phone" in methods and ("username" not in methods or looks_like_phone(login)):
        return "phone"
    return "username" if "username" in methods else "email"


def login_constraint(login):
    """The unique constraint a login name is looked up by (see :func:`login_field`)."""
    return constraint_for(login_field(login))


def get_by_login(login: str, *, likely: Iterable[str] = ()) -> Account | None:
    """The account for a login name (see :func:`login_constraint`), or ``None``.

    ``likely``: ids of accounts the login probably names (those a browser logged in to
    before), read in the same request as the lock: when one of them holds it, the login
    costs one request instead of two.
    """
    likely_keys = [account_pk(account_id) for account_id in likely]
    return lookups.get_by_unique(get_account_model(), login_constraint(login), login, likely=likely_keys)


def get_by_login_with_partition(login: str) -> tuple[Account | None, list[dict[str, Any]]]:
    """``(account, others)``: the account for a login name, as :func:`get_by_login` finds it,
    read with its whole partition in one ``Query``; ``others``: the partition's other raw
    items (its sessions and session slots), for a login to count them and to choose its
    session slot without a request of its own."""
    return lookups.get_by_unique_with_partition(get_account_model(), login_constraint(login), login)


def login_lock_key(login):
    """The lock key a login name (or an email address) is looked up by: what every spelling
    of it shares (case, width, soft hyphens and IDNA dots in a domain, a redundant dot above
    an ``i``). ``None`` when it cannot be a key (empty, too long): nobody holds it."""
    try:
        return login_constraint(login).key_for(login)
    except InvalidUniqueValue:
        return None


def change_event(account, changes: dict, origin: timeline.Origin = timeline.NO_ORIGIN) -> dict | None:
    """The raw item of the security event that ``changes`` to ``account`` (as read) record
    (see :func:`accounts.timeline.change_event`), come from ``origin``, or ``None``: what
    :func:`update_account` sends in the change's transaction, and ``accounts_explain`` shows."""
    found = timeline.change_event(account, changes)
    return timeline.new_event(account.id, *found, origin=origin) if found else None


def event_actions(account, changes: dict) -> list:
    """The actions recording ``changes`` to ``account`` in its security timeline (none or one)."""
    event = change_event(account, changes)
    return [timeline.action(event)] if event else []


def update_account(
    account, *, unheld=(), also=(), token=None, recorded=True, origin=timeline.NO_ORIGIN, as_read=(), **changes
):
    """Change any account attributes in one guarded transaction, moving locks as needed.

    ``unheld``: ``(constraint, lock key)`` pairs that no other account may hold; ``also``:
    actions on items the account owns (a passkey's credential item), or the record of an
    idempotency key (:mod:`accounts.idempotency`), in the same transaction; ``token``: its
    ClientRequestToken (default: a new one); ``as_read``: attributes the change keeps,
    guarded as read all the same.

    A change the security timeline records (:func:`accounts.timeline.change_event`: a new
    password, address or factor...) puts its event in the same transaction, unless
    ``recorded`` is false (a password hash upgraded at login: the password stays the same),
    and :data:`~accounts.signals.security_event` is sent once it committed. ``origin``: where
    the event comes from (:func:`accounts.timeline.origin_of` the request; the default, for a
    change made without one, names no address, browser or actor). A change with an actor
    (a staff member's) carries the staff hierarchy's guards (:mod:`accounts.transactions.hierarchy`).
    Raises :class:`~accounts.exceptions.UniqueViolation`,
    :class:`~accounts.exceptions.StaleItem` (the account changed since it was read) or
    :class:`~accounts.exceptions.ActorRefused` (the staff member changing a superuser's
    account is no longer an active superuser).
    Deactivating the account ends its sessions (see :func:`end_sessions`).
    """
    event = change_event(account, changes, origin) if recorded else None
    events = [timeline.action(event)] if event else []
    staff_as_read, staff_checks = transactions.staff_guards(account, origin.actor)
    transactions.change(
        account,
        {**changes, "updated": utcnow()},
        unheld=unheld,
        also=[*also, *events, *staff_checks],
        token=token,
        as_read=[*as_read, *staff_as_read],
    )
    if event:
        timeline.committed(type(account), event)
    if changes.get("is_active") is False:
        end_sessions(account)
    return account


def end_sessions(account, *, except_key=None, session=None):
    """End every server-side session of ``account`` but ``except_key``'s (when the
    project's ``SESSION_ENGINE`` is :mod:`accounts.sessions`), after a change of the account
    that refuses a session renewed meanwhile (a deactivation, a new password: see
    :func:`accounts.sessions.end_sessions`). Returns how many ended. ``session``: this
    request's session, told which sessions ended, so that its logout or new key does not
    delete one again."""
    if not sessions.in_use():
        return 0
    return sessions.end_sessions(account.id, except_key=except_key, session=session)


def log_out_everywhere(account, *, origin=timeline.NO_ORIGIN) -> int:
    """End every server-side session of ``account``, changing nothing of it (staff's "end
    sessions"), and any renewed under a new key meanwhile (:func:`accounts.logouts.log_out_sessions`),
    when the project's ``SESSION_ENGINE`` is :mod:`accounts.sessions`. Returns how many
    ended. Their end is a security event of its own, from ``origin``, put in the
    transaction that deletes them (none when no session ended)."""
    if not sessions.in_use():
        return 0
    event = timeline.new_event(account.id, timeline.SESSIONS_ENDED, origin=origin)
    ended = logouts.log_out_sessions(account.id, event=event)
    if ended:
        timeline.committed(type(account), event)
    return ended


def change_email(
    account: Account,
    email: str,
    *,
    token: str | None = None,
    also: Sequence[transactions.Action] = (),
    origin: timeline.Origin = timeline.NO_ORIGIN,
) -> Account:
    """Give ``account`` a new email, moving its email lock in the same transaction; a
    pending email change (asked from the old address) is cancelled with it. ``token``,
    ``also`` and ``origin``: as :func:`update_account`."""
    old_email = account.email
    cancellation = email_change_cancellation(account)
    update_account(account, email=email, token=token, also=also, origin=origin, **cancellation)
    signals.email_changed.send(sender=type(account), account=account, old_email=old_email, new_email=email)
    return account


def set_unverified_email(account, email: str, *, origin: timeline.Origin = timeline.NO_ORIGIN):
    """Give ``account`` a new address that is not proven yet (staff set it): the account
    holds no lock for it until its mailbox confirms it (:func:`verify_email`), and releases
    the lock of the old one, in one transaction. A pending email change is cancelled with
    it. The new address must not be one a verified account holds: ``ConditionCheck lock
    [attribute_not_exists(PK)]`` (an account unverified already gets it from the change
    itself), else :class:`~accounts.exceptions.UniqueViolation` (``email``). The account
    does not expire for it: it is not a sign-up. ``origin``: as :func:`update_account`."""
    old_email = account.email
    constraint = constraint_for("email")
    unheld = [(constraint, constraint.key_for(email))] if is_verified(account) else []
    cancellation = email_change_cancellation(account)
    update_account(account, email=email, email_verified=False, unheld=unheld, origin=origin, **cancellation)
    signals.email_changed.send(sender=type(account), account=account, old_email=old_email, new_email=email)
    return account


def change_username(account: Account, username: str, *, origin: timeline.Origin = timeline.NO_ORIGIN) -> Account:
    """Give ``account`` a new username, moving its username lock in the same transaction;
    an empty one (an optional username, see ``ACCOUNTS_SIGNUP_FIELDS``) removes it and
    releases its lock. ``origin``: as :func:`update_account`."""
    old_username = account.username
    username = stored_username(username)
    update_account(account, username=username, origin=origin)
    signals.username_changed.send(
        sender=type(account), account=account, old_username=old_username, new_username=username
    )
    return account


def set_password_hash(account, password_hash, *, origin: timeline.Origin = timeline.NO_ORIGIN, also=()):
    """Store a new password hash (no lock moves); a pending email change is cancelled in the
    same transaction (see :meth:`accounts.models.User.save`). ``origin`` and ``also``: as
    :func:`update_account`."""
    return update_account(
        account, password=password_hash, origin=origin, also=also, **email_change_cancellation(account)
    )


def change_password(
    account: Account,
    password_hash: str,
    *,
    origin: timeline.Origin = timeline.NO_ORIGIN,
    session: SessionBase | None = None,
    also: Sequence[transactions.Action] = (),
) -> int:
    """A new password (not a hash upgraded): ONE transaction stores ``password_hash`` and
    cancels a pending email change (:func:`set_password_hash`; whoever asked for it may be
    who the new password locks out), recording the change as come from ``origin``; then
    every session of the account ends (:func:`end_sessions`, ``session`` told which).
    ``also``: as :func:`update_account` (a reset code's tries). Returns how many ended."""
    set_password_hash(account, password_hash, origin=origin, also=also)
    return end_sessions(account, session=session)


def delete_account(
    account: Account, *, session: SessionBase | None = None, origin: timeline.Origin = timeline.NO_ORIGIN
) -> None:
    """Delete ``account`` and release its locks in one transaction; its sessions end and its
    security events are deleted (:func:`clear_partition`; ``session``: this request's, told
    which sessions ended, so that its logout does not delete its own again). ``origin``:
    who deletes it; a staff member's deletion carries the staff hierarchy's guards, as
    :func:`update_account`'s change."""
    staff_as_read, staff_checks = transactions.staff_guards(account, origin.actor)
    transactions.delete(account, also=staff_checks, as_read=staff_as_read)
    clear_partition(account, session=session)
    signals.account_deleted.send(sender=type(account), account=account)


def clear_partition(account, *, session: SessionBase | None = None) -> int:
    """End the sessions of deleted ``account`` and delete its security events: one
    ``Query`` of its partition (events included) and one ``BatchWriteItem`` per 25 items.
    Returns how many were deleted.

    No change writes an event after this read: each is guarded by the account as read,
    which its tombstone fails. A login that read the account before the deletion and
    writes its session after this read leaves that session and its login event until they
    expire (the session at its own expiry, the event after
    ``ACCOUNTS_SECURITY_EVENT_RETENTION``), as a clean-up that never ran (the process died)
    does; calling this again with the account as it was read deletes them."""
    items = dynamo.query_partition(account.PK, attributes=["PK", "SK"], with_events=True)
    events = [dynamo.key(account.PK, raw["SK"]["S"]) for raw in items if raw["SK"]["S"].startswith(EVENT_SORT_PREFIX)]
    if sessions.in_use():
        found = [raw for raw in items if raw["SK"]["S"].startswith(sessions.SESSION_SORT_PREFIX)]
        return sessions.end_sessions(account.id, sessions=found, also=events, session=session) + len(events)
    if events:
        dynamo.batch_write(deletes=events)
    return len(events)


def discard_signup(account):
    """Delete an unverified sign-up, ``account`` as read, and release its locks: the reader
    of its address says they did not sign up. The one transaction :func:`delete_account`
    sends, whose guards (``email_verified`` as read, false, and ``expires >= :now``) cancel it
    with :class:`~accounts.exceptions.StaleItem` if the address was verified meanwhile; a
    verified account is refused so before anything is sent."""
    if is_verified(account):
        raise StaleItem("A verified account is never discarded.")
    delete_account(account)
