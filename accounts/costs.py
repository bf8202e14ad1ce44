"""What each flow costs on AWS DynamoDB, computed from AWS's published billing rules.

DynamoDB Local reports 2 units for any ``TransactWriteItems``, so costs cannot be measured
locally; they are computed instead. Each flow (:func:`flows`) is the list of requests it
sends (``tests/engine/test_costs.py`` checks them against the wire), each reading or writing
named items whose sizes come from items the code itself builds (:func:`sample_items`).
The rules (AWS, "DynamoDB read and write operations" and on-demand pricing):

- an item's size is the sum of its attribute names and values (UTF-8 bytes; a number about
  one byte per two digits, plus one; a boolean one byte);
- a strongly consistent read costs 1 read unit per 4 KB of the item, rounded up per item
  (``GetItem``; ``BatchGetItem`` rounds each item), or per request for ``Query`` (the
  items' sizes summed, then rounded); a transactional read costs 2;
- a write costs 1 write unit per 1 KB of the item (the larger of its old and new image),
  rounded up per item; a delete, the size of the item deleted (at least 1 unit);
- in ``TransactWriteItems`` every action costs twice that: 2 write units per KB per item,
  a ``ConditionCheck`` billed as a write; a cancelled transaction, or a failed condition,
  is billed all the same.
"""

import math
import uuid
from dataclasses import dataclass

from django.conf import settings
from django.contrib.auth import BACKEND_SESSION_KEY, HASH_SESSION_KEY, SESSION_KEY

from . import signup_fields, store, transactions
from .ratelimit import Counter, parse_rules
from .tables import ADDRESSES_FIELD, STAFF_REGISTRY, account_constraints, epoch_now
from .transactions.events import event_item

# On-demand prices in US East (N. Virginia), dollars per million request units, since
# AWS's price cut of November 2024: the defaults of ``accounts_cost``.
READ_PRICE = 0.125
WRITE_PRICE = 0.625
# Storage, dollars per GB-month (standard table class, US East), and the bytes DynamoDB
# adds to each item stored.
STORAGE_PRICE = 0.25
ITEM_OVERHEAD_BYTES = 100

READ_UNIT_BYTES, WRITE_UNIT_BYTES = 4096, 1024
READS = {"GetItem", "BatchGetItem", "Query"}
WRITES = {"PutItem", "UpdateItem", "DeleteItem", "BatchWriteItem"}
TRANSACTIONAL_WRITES = {"TransactWriteItems"}

# A typical person: what the sizes below are measured on.
SAMPLE_EMAIL = "ada.lovelace@example.com"
SAMPLE_USERNAME = "ada_lovelace"
# Another address of hers (ACCOUNTS_MAX_EMAIL_ADDRESSES above 1).
SAMPLE_OTHER_EMAIL = "ada@analytical-engine.example"
# The site's hasher (Argon2), as stored: what every account carries.
SAMPLE_PASSWORD_HASH = (
    "argon2$argon2id$v=19$m=102400,t=2,p=8$Z3o3N1BOWUdpcHpZY3RGVFZGSWtwNw$RdrAhRPjUS5vXW92YbWCy9EXLryVflOkcAHMLu6XT7c"
)
SAMPLE_ADDRESS = "203.0.113.7"
SAMPLE_USER_AGENT = (
    "Mozilla/5.0 (Windows NT 10.0; Win64; x64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/126.0.0.0 Safari/537.36"
)


def value_size(value):
    """Bytes of one attribute value (DynamoDB's JSON form), by AWS's item size rules."""
    ((kind, data),) = value.items()
    if kind == "S":
        return len(data.encode("utf-8"))
    if kind == "N":
        digits = data.lstrip("-").replace(".", "").strip("0") or "0"
        return math.ceil(len(digits) / 2) + 1
    if kind in ("BOOL", "NULL"):
        return 1
    if kind == "B":
        return len(data)
    if kind in ("SS", "NS", "BS"):
        return sum(value_size({kind[0]: element}) for element in data)
    if kind == "L":
        return 3 + sum(1 + value_size(element) for element in data)
    return 3 + sum(1 + len(name.encode("utf-8")) + value_size(element) for name, element in data.items())


def item_size(item):
    """Bytes of a raw item: its attribute names and values."""
    return sum(len(name.encode("utf-8")) + value_size(value) for name, value in item.items())


def sample_items():
    """The items the flows read and write, built by the code that writes them: name -> raw
    item (an empty item stands for one that is not there: a delete of it costs 1 unit)."""
    from .pending import PENDING_SESSION_KEY
    from .sessions import SessionStore, session_item, slot_put

    account = store.build_signup_account(SAMPLE_EMAIL, SAMPLE_USERNAME, SAMPLE_PASSWORD_HASH, email_verified=True)
    unverified = store.build_signup_account(SAMPLE_EMAIL, SAMPLE_USERNAME, SAMPLE_PASSWORD_HASH, email_verified=False)
    locks = transactions.plan_create(account).actions[1:]
    expiring_locks = [action for action in transactions.plan_create(unverified).actions if action.kind == "Put"][1:]
    data = {
        SESSION_KEY: account.id,
        BACKEND_SESSION_KEY: "accounts.backends.AccountBackend",
        HASH_SESSION_KEY: "f" * 64,
    }
    pending = {PENDING_SESSION_KEY: {"id": account.id, "email": SAMPLE_EMAIL, "outcome": "sent"}}
    now = epoch_now()
    expires = now + settings.SESSION_COOKIE_AGE
    encode = SessionStore().encode
    session = session_item(f"{account.id}.{uuid.uuid4().hex}", encode(data), expires, now, now, SAMPLE_USER_AGENT)
    anonymous = session_item(uuid.uuid4().hex, encode(pending), expires, now, now)
    [rule] = parse_rules("5/5m/key")
    counter = {
        **Counter("login_failed", rule, SAMPLE_USERNAME).key,
        "w5000000": {"N": "3"},
        "w5000001": {"N": "1"},
        "expires": {"N": str(now + 600)},
    }
    # An unverified account's locks (its username's: its address takes none yet); a site
    # without usernames has none.
    expiring = {"expiring lock": expiring_locks[0].body["Item"]} if expiring_locks else {}
    with_addresses = store.build_signup_account(
        SAMPLE_EMAIL, SAMPLE_USERNAME, SAMPLE_PASSWORD_HASH, email_verified=True, email_addresses={SAMPLE_OTHER_EMAIL}
    )
    transactions.plan_create(with_addresses)  # records the keys it takes, as a sign-up does
    email = store.constraint_for("email")
    slot = f"{email.namespace}#{ADDRESSES_FIELD}"  # recorded so with or without the setting
    with_addresses.lock_keys = {
        **transactions.recorded_keys(with_addresses),
        slot: {SAMPLE_OTHER_EMAIL: email.key_for(SAMPLE_OTHER_EMAIL)},
    }
    return {
        "account": account.serialize(null_check=False),
        "account with addresses": with_addresses.serialize(null_check=False),
        "unverified account": unverified.serialize(null_check=False),
        "lock": locks[0].body["Item"],
        **expiring,
        "session": session,
        "session slot": slot_put(account.id, 0, None, session["SK"]["S"])["Item"],
        "anonymous session": anonymous,
        "rate counter": counter,
        "staff registry entry (absent)": {},
        "lock (absent)": {},
        "rate counter (absent)": {},
        "staff registry entry": STAFF_REGISTRY.key(account.PK),
        "security event": event_item(account.PK, "login", address=SAMPLE_ADDRESS, user_agent=SAMPLE_USER_AGENT),
    }


@dataclass(frozen=True)
class Request:
    """One request of a flow: its operation and the items it reads or writes (names of
    :func:`sample_items`; a name may repeat)."""

    operation: str
    items: tuple

    def read_units(self, sizes):
        if self.operation == "Query":
            return math.ceil(sum(sizes[name] for name in self.items) / READ_UNIT_BYTES)
        if self.operation in READS:
            return sum(math.ceil(max(sizes[name], 1) / READ_UNIT_BYTES) for name in self.items)
        return 0

    def write_units(self, sizes):
        units = sum(math.ceil(max(sizes[name], 1) / WRITE_UNIT_BYTES) for name in self.items)
        if self.operation in TRANSACTIONAL_WRITES:
            return 2 * units
        return units if self.operation in WRITES else 0


@dataclass(frozen=True)
class Flow:
    """What a person does, and the requests it costs (with default settings)."""

    name: str
    description: str
    requests: tuple

    def operations(self):
        """``{operation: how many requests}``, as a counting proxy sees them."""
        counts = {}
        for request in self.requests:
            counts[request.operation] = counts.get(request.operation, 0) + 1
        return counts

    def units(self, sizes):
        """``(read units, write units)`` of one run of the flow."""
        return (
            sum(request.read_units(sizes) for request in self.requests),
            sum(request.write_units(sizes) for request in self.requests),
        )


# The security timeline the profile shows and a deletion deletes (accounts.timeline).
SAMPLE_EVENTS = ("security event",) * 10


def username_lock_count() -> int:
    """How many locks an account's username takes (its own and its skeleton's, by default):
    none on a site without usernames (``ACCOUNTS_SIGNUP_FIELDS``)."""
    return sum(1 for constraint in account_constraints() if constraint.fields == ("username",))


def flows() -> tuple["Flow", ...]:
    """What a person does on this site, and the requests it costs: with default settings, and
    the sign-up fields of ``ACCOUNTS_SIGNUP_FIELDS`` (a site without usernames has no username
    change, and its sign-up, verification and deletion move no username lock; a site with
    phone numbers has their change and its code)."""
    username_locks = ("lock",) * username_lock_count()
    expiring_username_locks = ("expiring lock",) * len(username_locks)
    username_change = (
        (
            Flow(
                "username change",
                "a new username (its lock and its skeleton's move; the password check counted, the address told)",
                (
                    Request("BatchGetItem", ("session", "account")),
                    Request("UpdateItem", ("rate counter",)),
                    Request("TransactWriteItems", ("account", *username_locks, *username_locks, "security event")),
                    Request("UpdateItem", ("rate counter",)),
                ),
            ),
        )
        if username_locks
        else ()
    )
    phone_flows = (
        (
            Flow(
                "phone change",
                "asking on the phone page for a code to a new number (its lock read, the change and the "
                "texts counted: change_phone, verify_phone per number and client, sms per number)",
                (
                    Request("BatchGetItem", ("session", "account")),
                    Request("UpdateItem", ("rate counter",)),
                    Request("GetItem", ("lock (absent)",)),
                    *(Request("UpdateItem", ("rate counter",)),) * 4,
                    Request("PutItem", ("session",)),
                ),
            ),
            Flow(
                "phone code",
                "typing the new number's code: its tries read and checked, the account read, the new "
                "number locked and the old released in one transaction, the address told (its notice counted)",
                (
                    Request("BatchGetItem", ("session", "account")),
                    Request("BatchGetItem", ("rate counter (absent)",)),
                    Request("GetItem", ("account",)),
                    Request(
                        "TransactWriteItems", ("account", "lock", "lock", "rate counter (absent)", "security event")
                    ),
                    Request("UpdateItem", ("rate counter",)),
                    Request("PutItem", ("session",)),
                ),
            ),
        )
        if signup_fields.has_phone()
        else ()
    )
    return (
        Flow("page", "any page of a logged-in person", (Request("BatchGetItem", ("session", "account")),)),
        Flow(
            "last seen",
            "a page that also refreshes its session's last seen (at most once per ACCOUNTS_SESSION_TOUCH_INTERVAL)",
            (Request("BatchGetItem", ("session", "account")), Request("PutItem", ("session",))),
        ),
        Flow(
            "profile",
            "the profile with its session list (2 sessions) and its security timeline (10 events)",
            (Request("Query", ("account", "session", "session", *SAMPLE_EVENTS)),),
        ),
        Flow(
            "signup",
            "sign-up, the address to verify (ACCOUNTS_EMAIL_VERIFICATION mandatory, with its default "
            "enumeration prevention: the address's lock is read, not checked, and the mail counted)",
            (
                Request("UpdateItem", ("rate counter",)),
                Request("TransactWriteItems", ("unverified account", *expiring_username_locks)),
                Request("GetItem", ("lock (absent)",)),
                Request("UpdateItem", ("rate counter",)),
                Request("PutItem", ("anonymous session",)),
            ),
        ),
        Flow(
            "verification link",
            "opening the verification link and confirming",
            (
                Request("GetItem", ("unverified account",)),
                Request("TransactWriteItems", ("account", "lock", *expiring_username_locks, "security event")),
            ),
        ),
        Flow(
            "login",
            "login from a new browser (1 session before): its two counters counted before the "
            "password check, the address's taken back, the account's deleted with the session's write "
            "(which takes its session slot, records the login's security event and checks the account "
            "still active)",
            (
                Request("GetItem", ("lock",)),
                Request("Query", ("account", "session")),
                Request("UpdateItem", ("rate counter",)),
                Request("UpdateItem", ("rate counter",)),
                Request("UpdateItem", ("rate counter",)),
                Request("TransactWriteItems", ("session", "session slot", "security event", "rate counter", "account")),
            ),
        ),
        Flow(
            "failed login",
            "a wrong password (its two counters, counted before the password check)",
            (
                Request("GetItem", ("lock",)),
                Request("Query", ("account", "session")),
                Request("UpdateItem", ("rate counter",)),
                Request("UpdateItem", ("rate counter",)),
            ),
        ),
        Flow(
            "logout",
            "logout",
            (Request("BatchGetItem", ("session", "account")), Request("DeleteItem", ("session",))),
        ),
        Flow(
            "log out other sessions",
            "the profile's button (3 other sessions): read with the page's session, deleted in one "
            "transaction, each checked still there",
            (
                Request("Query", ("account", *("session", "session slot") * 4)),
                Request("TransactWriteItems", ("session", "session", "session")),
            ),
        ),
        *username_change,
        Flow(
            "email change",
            "asking for a new address (the link is mailed; the password check counted)",
            (
                Request("BatchGetItem", ("session", "account")),
                Request("UpdateItem", ("rate counter",)),
                Request("UpdateItem", ("rate counter",)),
                Request("TransactWriteItems", ("account", "lock")),
                Request("UpdateItem", ("rate counter",)),
                Request("UpdateItem", ("rate counter",)),
            ),
        ),
        Flow(
            "email change link",
            "opening the new address's link",
            (
                Request("GetItem", ("account",)),
                Request("TransactWriteItems", ("account", "lock", "lock", "security event")),
                Request("UpdateItem", ("rate counter",)),
            ),
        ),
        *phone_flows,
        Flow(
            "address add",
            "adding an address (ACCOUNTS_MAX_EMAIL_ADDRESSES above 1: the link is mailed to it, the primary told; the "
            "password check counted)",
            (
                Request("BatchGetItem", ("session", "account")),
                Request("UpdateItem", ("rate counter",)),
                Request("UpdateItem", ("rate counter",)),
                Request("TransactWriteItems", ("account", "lock (absent)", "security event")),
                Request("UpdateItem", ("rate counter",)),
                Request("UpdateItem", ("rate counter",)),
            ),
        ),
        Flow(
            "address link",
            "opening an added address's link: its lock taken, the primary told",
            (
                Request("GetItem", ("account",)),
                Request("TransactWriteItems", ("account with addresses", "lock", "security event")),
                Request("UpdateItem", ("rate counter",)),
            ),
        ),
        Flow(
            "address make primary",
            "making another confirmed address primary: no lock moves, both addresses told",
            (
                Request("BatchGetItem", ("session", "account with addresses")),
                Request("TransactWriteItems", ("account with addresses", "security event")),
                Request("UpdateItem", ("rate counter",)),
                Request("UpdateItem", ("rate counter",)),
            ),
        ),
        Flow(
            "address removal",
            "removing a confirmed address: its lock deleted in the same transaction, both addresses told",
            (
                Request("BatchGetItem", ("session", "account with addresses")),
                Request("TransactWriteItems", ("account with addresses", "lock", "security event")),
                Request("UpdateItem", ("rate counter",)),
                Request("UpdateItem", ("rate counter",)),
            ),
        ),
        Flow(
            "password change",
            "a new password (2 sessions: both end, this page gets a new one; the password check counted)",
            (
                Request("BatchGetItem", ("session", "account")),
                Request("UpdateItem", ("rate counter",)),
                Request("TransactWriteItems", ("account", "security event")),
                Request("Query", ("session", "session")),
                Request("BatchWriteItem", ("session", "session")),
                Request("TransactWriteItems", ("session", "session slot", "session")),
                Request("UpdateItem", ("rate counter",)),
            ),
        ),
        Flow(
            "deletion",
            "deleting the account (1 session and 10 security events, deleted after it; the password check counted)",
            (
                Request("BatchGetItem", ("session", "account")),
                Request("UpdateItem", ("rate counter",)),
                Request("TransactWriteItems", ("account", "lock", *username_locks, "staff registry entry (absent)")),
                Request("Query", ("session", *SAMPLE_EVENTS)),
                Request("BatchWriteItem", ("session", *SAMPLE_EVENTS)),
            ),
        ),
    )


def flow_named(name):
    """The flow called ``name``; raises ``KeyError``."""
    for flow in flows():
        if flow.name == name:
            return flow
    raise KeyError(name)


@dataclass(frozen=True)
class FlowCost:
    """One flow priced: its requests, units, and dollars per million runs."""

    flow: Flow
    reads: int
    writes: int
    dollars_per_million: float


def price(sizes=None, read_price=READ_PRICE, write_price=WRITE_PRICE):
    """The :class:`FlowCost` of every flow, at these prices ($ per million units)."""
    sizes = sizes or {name: item_size(item) for name, item in sample_items().items()}
    costs = []
    for flow in flows():
        reads, writes = flow.units(sizes)
        costs.append(FlowCost(flow, reads, writes, reads * read_price + writes * write_price))
    return costs


def describe_requests(flow):
    """``BatchGetItem + Query + PutItem = 3``."""
    return f"{' + '.join(request.operation for request in flow.requests)} = {len(flow.requests)}"


def markdown_table(costs, read_price=READ_PRICE, write_price=WRITE_PRICE):
    """The docs' table of flows (docs/costs.md; ``tests/engine/test_costs.py`` holds the page to it)."""
    lines = [
        f"| flow | requests | read units | write units | $ per million (reads ${read_price:g}/M, writes ${write_price:g}/M) |",
        "|---|---|---|---|---|",
    ]
    for cost in costs:
        lines.append(
            f"| {cost.flow.name}: {cost.flow.description} | {describe_requests(cost.flow)} | {cost.reads} | "
            f"{cost.writes} | {cost.dollars_per_million:.2f} |"
        )
    return "\n".join(lines)


def markdown_sizes(sizes: dict[str, int]) -> str:
    """The docs' table of item sizes (docs/costs.md; ``tests/engine/test_costs.py`` holds the page to
    it): every sample item the code builds that is stored, in bytes by DynamoDB's rules."""
    lines = ["| item | bytes |", "|---|---|"]
    lines += [f"| {name} | {size} |" for name, size in sizes.items() if size]
    return "\n".join(lines)


def markdown_month(month: "Month") -> str:
    """The docs' worked month (``accounts_cost --markdown --daily-users ...``): each flow's
    runs, then what the requests and the storage cost."""
    lines = ["| line | a month |", "|---|---|"]
    lines += [f"| {name} | {runs:,} runs |" for name, runs in month.runs.items()]
    lines += [
        f"| requests: {month.reads:,} read units, {month.writes:,} write units | ${month.requests_dollars:.2f} |",
        f"| storage: {month.storage_gb:.2f} GB | ${month.storage_dollars:.2f} |",
        f"| total | ${month.dollars:.2f} |",
    ]
    return "\n".join(lines)


@dataclass(frozen=True)
class Month:
    """A month of a site: how many of each flow, and what they and the storage cost."""

    runs: dict
    reads: int
    writes: int
    requests_dollars: float
    storage_gb: float
    storage_dollars: float

    @property
    def dollars(self):
        return self.requests_dollars + self.storage_dollars


def month(
    *,
    daily_users,
    pages=20,
    logins=1,
    refreshes=1,
    signups=0,
    accounts=0,
    sessions_per_account=1,
    days=30,
    read_price=READ_PRICE,
    write_price=WRITE_PRICE,
):
    """A month of ``daily_users`` people who each log in ``logins`` times and see ``pages``
    pages a day, ``refreshes`` of which refresh "last seen", plus ``signups`` sign-ups a day
    (each verified); storage of ``accounts`` accounts with their locks and sessions."""
    sizes = {name: item_size(item) for name, item in sample_items().items()}
    per_day = {
        "login": daily_users * logins,
        "page": daily_users * max(pages - refreshes, 0),
        "last seen": daily_users * refreshes,
        "signup": signups,
        "verification link": signups,
    }
    runs = {name: count * days for name, count in per_day.items() if count}
    reads = writes = 0
    for name, count in runs.items():
        flow_reads, flow_writes = flow_named(name).units(sizes)
        reads += flow_reads * count
        writes += flow_writes * count
    stored = {name: size + ITEM_OVERHEAD_BYTES for name, size in sizes.items()}
    locks = 1 + username_lock_count()
    per_account = stored["account"] + locks * stored["lock"] + sessions_per_account * stored["session"]
    storage_gb = accounts * per_account / 1e9
    return Month(
        runs=runs,
        reads=reads,
        writes=writes,
        requests_dollars=(reads * read_price + writes * write_price) / 1e6,
        storage_gb=storage_gb,
        storage_dollars=storage_gb * STORAGE_PRICE,
    )
