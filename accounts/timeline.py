"""An account's security timeline: what happened to it, when, from which address and browser.

Each event is an item in the account's own partition (:mod:`accounts.transactions.events`),
written in the transaction of the change it records, so it exists exactly when the change
committed and costs no request more:

- a login: with the session it writes (:mod:`accounts.sessions`; a second factor's sign-in
  in the sign-in's transaction, and a recovery code's use with it);
- a change of the password, the address or the username, an address verified, a phone
  number verified, changed or removed, a second factor or an identity provider added or
  removed, new recovery codes, a staff flag: with
  the account's change (:func:`accounts.store.update_account`), naming the staff member who
  made it (``actor``) when it was made on a staff page;
- every session ended by staff: in the transaction that deletes them (:func:`accounts.store.log_out_everywhere`).

Events expire after ``ACCOUNTS_SECURITY_EVENT_RETENTION`` (the table's TTL) and are deleted
with the account. The owner sees the last :data:`SHOWN` on the profile, staff on the
account's page; :data:`accounts.signals.security_event` is sent once per event committed.

Where an event came from (:class:`Origin`: the request's client address and browser, and
the staff member acting on a staff page) travels as an argument like the change itself:
the flow or staff page that has the request builds it (:func:`origin_of`) and hands it to
the store that writes the event. Without a request (a command, Django's model API such as
``User.save()``) the event has :data:`NO_ORIGIN`: it still records its kind and time.
"""

from dataclasses import dataclass
from datetime import UTC, datetime

from django.http import HttpRequest
from django.utils.translation import gettext_lazy as _

from . import dynamo, signals
from .browsers import describe_user_agent
from .ratelimit import client_ip
from .tables import EVENT_SORT_PREFIX, account_pk, has_expired, raw_expires
from .transactions.events import event_action, event_item, event_put

# How many events the profile and the staff account page show, newest first.
SHOWN = 50

LOGIN = "login"
PASSWORD_CHANGED = "password_changed"
EMAIL_CHANGED = "email_changed"
USERNAME_CHANGED = "username_changed"
EMAIL_VERIFIED = "email_verified"
TOTP_ADDED = "totp_added"
TOTP_REMOVED = "totp_removed"
PASSKEY_ADDED = "passkey_added"
PASSKEY_REMOVED = "passkey_removed"
RECOVERY_CODES_GENERATED = "recovery_codes_generated"
RECOVERY_CODE_USED = "recovery_code_used"
IDENTITY_LINKED = "identity_linked"
IDENTITY_UNLINKED = "identity_unlinked"
PHONE_VERIFIED = "phone_verified"
PHONE_CHANGED = "phone_changed"
PHONE_REMOVED = "phone_removed"
FLAG_CHANGED = "flag_changed"
SESSIONS_ENDED = "sessions_ended"
# An account's other addresses (accounts.addresses); an address verified is EMAIL_VERIFIED.
EMAIL_ADDED = "email_added"
EMAIL_REMOVED = "email_removed"
EMAIL_PRIMARY = "email_primary"

LABELS = {
    LOGIN: _("Login"),
    PASSWORD_CHANGED: _("Password changed"),
    EMAIL_CHANGED: _("Email address changed"),
    USERNAME_CHANGED: _("Username changed"),
    EMAIL_VERIFIED: _("Email address verified"),
    TOTP_ADDED: _("Authenticator app added"),
    TOTP_REMOVED: _("Authenticator app removed"),
    PASSKEY_ADDED: _("Passkey added"),
    PASSKEY_REMOVED: _("Passkey removed"),
    RECOVERY_CODES_GENERATED: _("New recovery codes"),
    RECOVERY_CODE_USED: _("Recovery code used"),
    IDENTITY_LINKED: _("Sign-in provider linked"),
    IDENTITY_UNLINKED: _("Sign-in provider unlinked"),
    PHONE_VERIFIED: _("Phone number verified"),
    PHONE_CHANGED: _("Phone number changed"),
    PHONE_REMOVED: _("Phone number removed"),
    FLAG_CHANGED: _("Account flag changed by staff"),
    SESSIONS_ENDED: _("Sessions ended by staff"),
    EMAIL_ADDED: _("Email address added"),
    EMAIL_REMOVED: _("Email address removed"),
    EMAIL_PRIMARY: _("Primary email address changed"),
}
# The account attributes holding its other addresses (accounts.addresses).
ADDRESS_SETS = ("email_addresses", "unverified_emails")
# The flags staff change, told in an event's detail as "<flag> on|off".
FLAGS = ("is_active", "is_staff", "is_superuser")


@dataclass(frozen=True)
class Origin:
    """Where an event comes from: the client ``address`` (as the rate limits count it), its
    ``user_agent``, and ``actor``, the account id of the staff member acting on a staff page
    (``None``: the account's owner, or no request)."""

    address: str = ""
    user_agent: str = ""
    actor: str | None = None


# The origin of an event written without a request (a command, ``User.save()``): no
# address, no browser, no actor.
NO_ORIGIN = Origin()


def origin_of(request: HttpRequest, *, actor: str | None = None) -> Origin:
    """The :class:`Origin` of the events ``request`` writes: its client address and
    browser; ``actor``: the staff member acting, on a staff page."""
    return Origin(client_ip(request), request.META.get("HTTP_USER_AGENT", ""), actor)


def change_event(account, changes: dict) -> tuple[str, str] | None:
    """``(kind, detail)`` of the event a change of ``account`` (as read) by ``changes``
    records, or ``None`` when it records none (a pending email change asked, a counter)."""
    if "password" in changes:
        return PASSWORD_CHANGED, ""
    found = _address_event(account, changes)
    if found is not None:
        return found
    if "email" in changes:
        return EMAIL_CHANGED, ""
    if "username" in changes:
        return USERNAME_CHANGED, ""
    if changes.get("email_verified") is True:
        return EMAIL_VERIFIED, ""
    if "phone" in changes and changes["phone"] != getattr(account, "phone", None):
        # A number is recorded once it is the account's: verified, or removed.
        if changes["phone"] is None:
            return PHONE_REMOVED, ""
        if changes.get("phone_verified") is True:
            return PHONE_CHANGED, ""
    if changes.get("phone_verified") is True:
        return PHONE_VERIFIED, ""
    if "totp_secret" in changes:
        return (TOTP_REMOVED if changes["totp_secret"] is None else TOTP_ADDED), ""
    for name, added, removed in (
        ("passkeys", PASSKEY_ADDED, PASSKEY_REMOVED),
        ("oidc_identities", IDENTITY_LINKED, IDENTITY_UNLINKED),
    ):
        if name in changes:
            before, after = set(getattr(account, name, None) or ()), set(changes[name] or ())
            if after != before:
                return (added if after > before else removed), ""
    if changes.get("recovery_codes"):
        return RECOVERY_CODES_GENERATED, ""
    flags = [f"{flag} {'on' if changes[flag] else 'off'}" for flag in FLAGS if flag in changes]
    if flags:
        return FLAG_CHANGED, ", ".join(flags)
    return None


def _address_event(account, changes: dict) -> tuple[str, str] | None:
    """The event of a change of the account's other addresses, naming the address: made
    primary, verified, added (waiting for its link) or removed."""
    if not any(name in changes for name in ADDRESS_SETS):
        return None
    if "email" in changes:
        return EMAIL_PRIMARY, changes["email"]
    before = {name: set(getattr(account, name, None) or ()) for name in ADDRESS_SETS}
    after = {name: set(changes[name] or ()) if name in changes else before[name] for name in ADDRESS_SETS}
    verified, unverified = ADDRESS_SETS
    if after[verified] - before[verified]:
        return EMAIL_VERIFIED, min(after[verified] - before[verified])
    if after[unverified] - before[unverified]:
        return EMAIL_ADDED, min(after[unverified] - before[unverified])
    gone = (before[verified] | before[unverified]) - (after[verified] | after[unverified])
    return (EMAIL_REMOVED, min(gone)) if gone else None


def new_event(account_id: str, kind: str, detail: str = "", *, origin: Origin) -> dict:
    """The raw item of event ``kind`` of account ``account_id``, come from ``origin`` (its
    actor is not named when it is the account itself: its owner on a staff page)."""
    actor = origin.actor if origin.actor != account_id else None
    return event_item(
        account_pk(account_id), kind, address=origin.address, user_agent=origin.user_agent, actor=actor, detail=detail
    )


def action(item: dict):
    """Event ``item``'s Put, as an action of the transaction it rides in."""
    return event_action(dynamo.table_name(), item)


def put(item: dict) -> dict:
    """Event ``item``'s PutItem parameters, for a batch or a transaction built elsewhere."""
    return event_put(dynamo.table_name(), item)


def committed(sender, item: dict) -> None:
    """Send :data:`~accounts.signals.security_event` for event ``item``, whose write committed."""
    signals.security_event.send(sender=sender, event=Event.from_raw(item))


@dataclass(frozen=True)
class Event:
    """One event of an account's timeline, as the pages show it and the signal sends it."""

    account_id: str
    kind: str
    at: datetime
    address: str
    user_agent: str
    actor: str | None
    detail: str

    @classmethod
    def from_raw(cls, raw: dict) -> "Event":
        text = {name: raw.get(name, {}).get("S", "") for name in ("address", "user_agent", "detail", "kind")}
        return cls(
            account_id=raw["PK"]["S"].split("#", 1)[1],
            kind=text["kind"],
            at=datetime.fromtimestamp(int(raw["at"]["N"]) / 1000, UTC),
            address=text["address"],
            user_agent=text["user_agent"],
            actor=raw.get("actor", {}).get("S"),
            detail=text["detail"],
        )

    @property
    def label(self) -> str:
        """What happened, in words of the active language."""
        return str(LABELS.get(self.kind, self.kind))

    @property
    def browser(self) -> str:
        """The browser and system, as :func:`~accounts.browsers.describe_user_agent` reads them."""
        return describe_user_agent(self.user_agent)


def events_of(items: list[dict]) -> list[Event]:
    """The events of raw event ``items`` (as read: newest first)."""
    return [Event.from_raw(raw) for raw in items]


def recent_events(account_id: str, limit: int = SHOWN) -> list[Event]:
    """The last ``limit`` live events of account ``account_id``, newest first: one
    consistent ``Query`` of its partition's events, from the end, ``Limit`` ``limit``
    (events expired but not yet deleted by the TTL are skipped, and may leave it short)."""
    answer = dynamo.call(
        "query",
        TableName=dynamo.table_name(),
        ConsistentRead=True,
        KeyConditionExpression="PK = :pk AND begins_with(SK, :prefix)",
        ExpressionAttributeValues={":pk": {"S": account_pk(account_id)}, ":prefix": {"S": EVENT_SORT_PREFIX}},
        ScanIndexForward=False,
        Limit=limit,
    )
    return [Event.from_raw(raw) for raw in answer.get("Items", ()) if not has_expired(raw_expires(raw))]
