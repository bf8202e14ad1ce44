"""PynamoDB models of the single accounts table, and how they connect to DynamoDB.

One table, keyed ``PK`` (string) + ``SK`` (string), holds:

- account items: ``PK=ACCT#<generated id>``, ``SK=PROFILE``;
- lock items: ``PK=UNIQ#<NAMESPACE>#<normalized value>``, ``SK=LOCK``, ``owner=<owner PK>``;
- registry items: ``PK=STAFF``, ``SK=<account PK>``, one per active staff account
  (:class:`Registry`);
- in an account's partition, its sessions, counters, passkeys and security events
  (``SK=EVENT#<milliseconds>#<random>``, :mod:`accounts.timeline`).

Items that expire (an unverified account and the locks it holds) carry ``expires``, the
table's one TTL attribute (epoch seconds). DynamoDB deletes them lazily, days late at
times, so every read and every guard treats an item whose ``expires`` has passed as absent.

Endpoint, region and table name come from the ``ACCOUNTS_*`` settings and are applied by
:func:`configure` at start-up and whenever those settings change (tests).

The package's modules, by seam: this one holds the models, the staff registry, the declared
constraints and the table's own administration (create, TTL, the key version's record);
:mod:`.clocks` the time items are kept in, :mod:`.raw` the readers of raw attribute values,
:mod:`.clients` the shared botocore clients. Their public names are importable from here.
"""

import base64
import functools
import hashlib
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import botocore.handlers
from pynamodb.attributes import (
    BooleanAttribute,
    MapAttribute,
    NumberAttribute,
    UnicodeAttribute,
    UnicodeSetAttribute,
    UTCDateTimeAttribute,
)
from pynamodb.models import Model

from .. import identifiers
from ..app_settings import app_settings
from ..identifiers import key_version_of, skeleton_normalizer
from ..uniqueness import LOCK_SORT_KEY, UniqueConstraint, join_components, normalize_exact, normalize_text
from . import clients, clocks
from .clients import MAX_POOL_CONNECTIONS, ClientConfiguration, dynamodb_client, forget_clients, plain_client
from .clocks import TTL_ATTRIBUTE, epoch_now, has_expired, is_expired, takeover_cutoff, utcnow
from .raw import (
    TOMBSTONE_ATTRIBUTE,
    TOMBSTONE_LIFETIME,
    is_gone,
    is_tombstone,
    raw_expires,
    raw_number,
    raw_text,
    read_text,
)

ACCOUNT_PREFIX = "ACCT#"
PROFILE_SORT_KEY = "PROFILE"
# An account's passkeys: each credential id is a unique value of its own (one lock each), and
# each has a credential item in the account's partition (accounts.mfa), deleted with it.
PASSKEY_NAMESPACE = "WEBAUTHN"
PASSKEY_SORT_PREFIX = "WEBAUTHN#"
# How many passkeys (and OpenID Connect identities, together) an account may hold. Deleting an account deletes them all with it
# in one transaction: 2 actions each (the credential item and its lock), beside the account,
# its other locks and whatever a project declares, under DynamoDB's 100 actions (system
# check accounts.E015 counts them).
MAX_PASSKEYS = 20
# An account's OpenID Connect identities (accounts.providers): each pair (issuer, subject) is
# a unique value of its own, locked under UNIQ#OIDC#<issuer>#<subject> and owned by the
# account, so two accounts can never hold one identity, whatever the race. The account's
# deletion releases them with its other locks, in its one transaction.
# Passkeys and identities share one bound, MAX_PASSKEYS together (SIGN_IN_METHODS): a deletion
# releases them all, and the bound keeps its transaction the size it was before identities.
OIDC_NAMESPACE = "OIDC"
# An account's other verified addresses (ACCOUNTS_MAX_EMAIL_ADDRESSES above 1): a set-valued
# constraint in the email's own namespace (address_constraints).
ADDRESSES_FIELD = "email_addresses"
SIGN_IN_METHODS = "SIGN_IN_METHODS"
# The account's security timeline (accounts.timeline): one item per event in its partition,
# SK=EVENT#<milliseconds>#<random>. "EVENT#" sorts before every other sort key of an account's
# partition, so the reads of its other items start at AFTER_EVENTS and skip a year of events.
EVENT_SORT_PREFIX = "EVENT#"
AFTER_EVENTS = "EVENT$"  # "$" follows "#"
# The item recording the key version (identifiers.KEY_VERSION) the table's locks are keyed
# with: the system check accounts.E016 compares it with the running one.
KEY_VERSION_ITEM = {"PK": {"S": "META#KEYS"}, "SK": {"S": "META"}}


class TableModel(Model):
    """Base of every model stored in the accounts table; :func:`configure` binds it.

    An item is read even when an attribute has the wrong type (damage: an operator's raw
    write), never raising: such an attribute reads as what it spells (a number's digits for
    a string, a string of digits for a number), as false for a flag, and as absent
    otherwise, ``expires`` included (DynamoDB's TTL ignores one that is not a number).
    :func:`malformed_attributes` keeps what was stored, for the audit and for the guards
    that compare it "as read".
    """

    class Meta:
        table_name = "accounts"
        region = "us-east-1"
        host = None
        max_pool_connections = MAX_POOL_CONNECTIONS

    # How long the tombstone a deleted item leaves at its key lasts; None: it leaves none (its
    # key may be used again, as a player's chosen PK may).
    tombstone_lifetime = None

    @classmethod
    def _get_connection(cls):
        # configure() drops every model's connection; the one of a configuration seen before
        # is taken again (see _connection_for).
        if cls._connection is None:
            cls._connection = _connection_for(cls, *_connection_settings(cls))
        return super()._get_connection()

    @classmethod
    def _instantiate(cls, attribute_values):
        try:
            return super()._instantiate(attribute_values)
        except (TypeError, ValueError, KeyError):
            readable, malformed = dict(attribute_values), {}
            for name, attribute in cls.get_attributes().items():
                stored = attribute_values.get(attribute.attr_name)
                if stored is None or _is_readable(attribute, stored):
                    continue
                malformed[name] = stored
                readable.pop(attribute.attr_name)
                spelled = _spelled(attribute, stored)
                if spelled is not None:
                    readable[attribute.attr_name] = spelled
            instance = super()._instantiate(readable)
            instance._malformed = malformed
            return instance


def _is_readable(attribute, stored):
    if "NULL" in stored:
        return True
    try:
        attribute.deserialize(attribute.get_value(stored))
    except (TypeError, ValueError, KeyError):
        return False
    return True


def _spelled(attribute, stored):
    """What a wrong-typed value reads as (see :class:`TableModel`), raw, or ``None``."""
    if isinstance(attribute, BooleanAttribute):
        return {"BOOL": False}
    if type(attribute) is UnicodeAttribute and read_text(stored) is not None:
        return {"S": read_text(stored)}
    if type(attribute) is NumberAttribute and attribute.attr_name != TTL_ATTRIBUTE:
        number = raw_number({"N": stored.get("S")}) if isinstance(stored.get("S"), str) else None
        return None if number is None else {"N": stored["S"].strip()}
    return None


def malformed_attributes(item: object) -> dict[str, Any]:
    """``{attribute: the raw value stored}`` of ``item``'s attributes of the wrong type, as
    read (empty for a sound item)."""
    return getattr(item, "_malformed", {})


@dataclass(frozen=True)
class Registry:
    """A partition listing the items that meet a condition, one item each
    (``PK=<partition>``, ``SK=<the item's PK>``), put and deleted by the very transactions
    that change what the condition reads (:mod:`accounts.transactions`): counting the
    members is one ``Query``, whatever the size of the table.

    ``attributes`` are the item's attributes ``includes`` reads.
    """

    partition: str
    attributes: tuple[str, ...]
    includes: Callable[[Any], bool]

    def key(self, pk: str) -> dict[str, dict[str, str]]:
        """The raw key of ``pk``'s registry item."""
        return {"PK": {"S": self.partition}, "SK": {"S": pk}}


def is_active_staff(account):
    """Whether ``account`` counts as staff for the last-staff protection: staff, active,
    and not expiring (an unverified account counts once its address is verified)."""
    return bool(account.is_staff) and account.is_active is not False and getattr(account, TTL_ATTRIBUTE, None) is None


# The active staff accounts: what keeps the last one from losing its access.
STAFF_REGISTRY = Registry("STAFF", ("is_staff", "is_active", TTL_ATTRIBUTE), is_active_staff)


class Account(TableModel):
    """An account. The PK is generated, never the email, so an email can change in place."""

    # How the audit tells an account from other items of the table: PK starts with this.
    key_prefix = ACCOUNT_PREFIX
    # The registries an account's transactions keep (see Registry).
    registries = (STAFF_REGISTRY,)
    # A deleted account leaves a tombstone (see TOMBSTONE_ATTRIBUTE): its id never returns.
    tombstone_lifetime = TOMBSTONE_LIFETIME
    # The most items owned_sort_keys() names (one per passkey), for system check accounts.E015.
    max_owned_items = MAX_PASSKEYS

    PK = UnicodeAttribute(hash_key=True)
    SK = UnicodeAttribute(range_key=True, default=PROFILE_SORT_KEY)
    email = UnicodeAttribute()
    # Absent on a site without usernames (ACCOUNTS_SIGNUP_FIELDS), or when an optional one
    # was not given.
    username = UnicodeAttribute(null=True)
    password = UnicodeAttribute()
    is_active = BooleanAttribute(default=True)
    is_staff = BooleanAttribute(default=False)
    # Django's superuser: every permission (createsuperuser sets it); absent on older items.
    is_superuser = BooleanAttribute(default=False)
    created = UTCDateTimeAttribute(default_for_new=utcnow)
    updated = UTCDateTimeAttribute(default=utcnow)
    # False until the address is proven; absent (items written before verification
    # existed) counts as verified. Only a verified account holds its email lock.
    email_verified = BooleanAttribute(null=True)
    # Epoch seconds after which an unverified account (and its locks) is gone.
    expires = NumberAttribute(null=True)
    # Its phone number in E.164 (accounts.phones), on a site with phone numbers
    # (ACCOUNTS_SIGNUP_FIELDS or ACCOUNTS_LOGIN_METHODS name "phone"), and whether the code
    # texted to it was typed back: only a verified number holds its lock (UNIQ#PHONE#<E.164>).
    phone = UnicodeAttribute(null=True)
    phone_verified = BooleanAttribute(null=True)
    # A requested email change waiting for its link: the new address and the link's nonce.
    pending_email = UnicodeAttribute(null=True)
    pending_nonce = UnicodeAttribute(null=True)
    # Second factors (accounts.mfa). The credential ids of its passkeys (each locked under
    # UNIQ#WEBAUTHN#<id>; the credential items hold the rest), its TOTP secret and the time
    # step whose code turned it on (spent by that write: no item of its own, so an enrolment
    # racing a deletion leaves nothing behind), and the digests of its unused recovery codes
    # and of those used since they were generated (so a used one is told apart from a wrong one).
    passkeys = UnicodeSetAttribute(null=True)
    totp_secret = UnicodeAttribute(null=True)
    totp_created = UTCDateTimeAttribute(null=True)
    totp_step = NumberAttribute(null=True)
    recovery_codes = UnicodeSetAttribute(null=True)
    used_recovery_codes = UnicodeSetAttribute(null=True)
    # When the recovery codes were generated, and when one was last used (django-allauth's
    # created_at and last_used_at of the recovery-codes authenticator).
    recovery_codes_created = UTCDateTimeAttribute(null=True)
    recovery_codes_last_used = UTCDateTimeAttribute(null=True)
    # The OpenID Connect identities it signs in with (accounts.providers), each the pair
    # (issuer, subject) joined as identity_element() spells it, locked under
    # UNIQ#OIDC#<issuer>#<subject>.
    oidc_identities = UnicodeSetAttribute(null=True)
    # Its other addresses (ACCOUNTS_MAX_EMAIL_ADDRESSES above 1, accounts.addresses): the
    # verified ones, each locked under UNIQ#EMAIL#<key> like the primary ``email``, and those
    # added and waiting for their mailed link (no lock until it is opened).
    email_addresses = UnicodeSetAttribute(null=True)
    unverified_emails = UnicodeSetAttribute(null=True)
    # The lock keys the account holds, by namespace, written in the same transaction as each
    # lock: a change or deletion releases the key stored here, never one computed again
    # (after a Unicode upgrade it may differ). Absent on accounts written before it existed
    # (accounts_backfill records it); a namespace missing from it is computed.
    lock_keys = MapAttribute(null=True)
    # Where an imported account came from (accounts_import): ``source_id``, the user's
    # primary key at the source (as JSON), and ``last_login``, its last login there (ISO
    # 8601). This site's own logins write nothing to the account item.
    imported = MapAttribute(null=True)

    @classmethod
    def get_unique_constraints(cls):
        """The account's unique fields, from ``ACCOUNTS_UNIQUE_FIELDS``."""
        return account_constraints()

    @property
    def id(self):
        """The generated id: the PK without its ``ACCT#`` prefix."""
        return self.PK[len(ACCOUNT_PREFIX) :]

    @property
    def display_name(self):
        """What the pages and mails call the account: its username, or its email address
        when it has none (a site without usernames), as django-allauth's ``user_display``."""
        return self.username or self.email

    def owned_sort_keys(self):
        """The sort keys of the items this account owns in its partition (its passkeys'
        credential items): deleted in the transaction that deletes it, and kept from
        expiring by the one that verifies it."""
        return [passkey_sort_key(credential_id) for credential_id in sorted(self.passkeys or ())]


class Lock(TableModel):
    """A lock item: the one item that holds a unique value, pointing at its owner."""

    PK = UnicodeAttribute(hash_key=True)
    SK = UnicodeAttribute(range_key=True, default=LOCK_SORT_KEY)
    owner = UnicodeAttribute()
    # Set while the owner is an unverified account: the lock expires with it.
    expires = NumberAttribute(null=True)
    # The version of the data its key was computed with (identifiers.KEY_VERSION), for a
    # constraint whose normalizer depends on Unicode: during a rolling deploy, which of two
    # key functions wrote it.
    key_version = UnicodeAttribute(null=True)


@functools.cache
def get_account_model() -> type[Account]:
    """The PynamoDB account model named by ``ACCOUNTS_ACCOUNT_MODEL``."""
    return _import(app_settings.ACCOUNT_MODEL)


def account_pk(account_id: str) -> str:
    return f"{ACCOUNT_PREFIX}{account_id}"


def sign_in_methods_held(account):
    """How many of the :data:`MAX_PASSKEYS` passkeys and identities ``account`` holds."""
    return len(account.passkeys or ()) + len(getattr(account, "oidc_identities", None) or ())


def identity_element(issuer, subject):
    """How an account stores the OpenID Connect identity ``(issuer, subject)`` in its
    ``oidc_identities``: the element whose lock is ``UNIQ#OIDC#<issuer>#<subject>``. Issuer
    and subject are compared exactly, as OpenID Connect Core 1.0 section 2 says."""
    return join_components(issuer, subject)


def passkey_sort_key(credential_id):
    """The sort key of a passkey's credential item, in its account's partition: a digest of
    the credential id (up to 1,364 base64url characters; a sort key takes 1,024 bytes)."""
    digest = hashlib.sha256(credential_id.encode()).digest()
    return PASSKEY_SORT_PREFIX + base64.urlsafe_b64encode(digest).decode().rstrip("=")


def _import(path_or_callable):
    if callable(path_or_callable):
        return path_or_callable
    from django.utils.module_loading import import_string

    return import_string(path_or_callable)


# Both caches are cleared by configure(), which runs on every ACCOUNTS_* setting change.
@functools.cache
def account_constraints():
    """The account's :class:`UniqueConstraint` objects, built from ``ACCOUNTS_UNIQUE_FIELDS``:
    one per field, then one more per field with a ``skeleton_namespace``, then the passkeys'
    credential ids (exact: they are case-sensitive base64url), then the OpenID Connect
    identities (exact pairs of issuer and subject)."""
    constraints, skeletons = [], []
    for field, options in app_settings.UNIQUE_FIELDS.items():
        normalizer = _import(options.get("normalizer", normalize_text))
        allow_empty = options.get("allow_empty", False)
        constraints.append(
            UniqueConstraint(
                field,
                namespace=options["namespace"],
                normalizer=normalizer,
                allow_empty=allow_empty,
                # The email is held only by an account that proved it reads the mailbox.
                partial_on=options.get("partial_on", "email_verified" if field == "email" else None),
                key_version=key_version_of(normalizer),
            )
        )
        if options.get("skeleton_namespace"):
            skeleton = skeleton_normalizer(normalizer)
            skeletons.append(
                UniqueConstraint(
                    field,
                    namespace=options["skeleton_namespace"],
                    normalizer=skeleton,
                    allow_empty=allow_empty,
                    lookalike=True,
                    key_version=key_version_of(skeleton),
                )
            )
    passkeys = UniqueConstraint(
        "passkeys",
        namespace=PASSKEY_NAMESPACE,
        normalizer=normalize_exact,
        many=True,
        max_values=MAX_PASSKEYS,
        limit_group=SIGN_IN_METHODS,
    )
    identities = UniqueConstraint(
        "oidc_identities",
        namespace=OIDC_NAMESPACE,
        normalizer=normalize_exact,
        many=True,
        max_values=MAX_PASSKEYS,
        parts=2,
        limit_group=SIGN_IN_METHODS,
    )
    return (*constraints, *skeletons, passkeys, identities, *address_constraints(constraints + skeletons))


def address_constraints(constraints):
    """With ``ACCOUNTS_MAX_EMAIL_ADDRESSES`` above 1, the set-valued twin of each constraint
    on ``email`` (its lock, and its look-alike lock when one is declared): an account's other
    verified addresses (``email_addresses``), each element locked in the primary's namespace
    with the primary's normalizer, so an address is held once, as primary or not, by one
    account. Their keys depend on Unicode data: each account records them."""
    others = app_settings.MAX_EMAIL_ADDRESSES - 1
    if others < 1:
        return ()
    return tuple(
        UniqueConstraint(
            ADDRESSES_FIELD,
            namespace=constraint.namespace,
            normalizer=constraint.normalizer,
            lookalike=constraint.lookalike,
            many=True,
            max_values=others,
            key_version=constraint.key_version,
        )
        for constraint in constraints
        if constraint.fields == ("email",)
    )


_lock_models = {}


def lock_model_for(model_class: type[Model]) -> type["Lock"]:
    """The lock model living in the same table (and connection) as ``model_class``."""
    meta = model_class.Meta
    if meta is TableModel.Meta:
        return Lock
    key = (meta.table_name, meta.host, meta.region)
    if key not in _lock_models:
        lock_meta = type("Meta", (), {name: getattr(meta, name) for name in dir(meta) if not name.startswith("_")})
        _lock_models[key] = type(f"Lock_{meta.table_name}", (Lock,), {"Meta": lock_meta, "__module__": __name__})
    return _lock_models[key]


def _all_subclasses(cls):
    for subclass in cls.__subclasses__():
        yield subclass
        yield from _all_subclasses(subclass)


def _connection_settings(model: type[Model]) -> tuple[Any, ...]:
    """Everything PynamoDB builds ``model``'s connection from, and the number of handlers
    botocore gives a new session (as :class:`~.clients.ClientConfiguration`)."""
    meta = model.Meta
    return (
        meta.table_name,
        meta.host,
        meta.region,
        meta.connect_timeout_seconds,
        meta.read_timeout_seconds,
        meta.aws_access_key_id,
        meta.aws_secret_access_key,
        len(botocore.handlers.BUILTIN_HANDLERS),
    )


# Two configurations of every model (a test suite's DynamoDB Local and moto's), each
# connection holding a botocore session of its own: about 10 MB each once used.
@functools.lru_cache(maxsize=16)
def _connection_for(model: type[Model], *settings: Any) -> Any:
    """PynamoDB's connection of ``model`` under ``settings``, built once: each builds a
    botocore session of its own, which loads DynamoDB's service model again (about 0.1 s),
    and :func:`configure` runs on every change of an ``ACCOUNTS_`` setting (in every test
    that changes one, and with the ``accounts_table`` fixture)."""
    model._connection = None
    return super(TableModel, model)._get_connection()


def configure() -> None:
    """Point every table model, and the transaction client, at the configured table."""
    meta = TableModel.Meta
    meta.table_name = app_settings.TABLE_NAME
    meta.host = app_settings.ENDPOINT_URL
    meta.region = app_settings.REGION
    # PynamoDB's own clients serve commands and staff Scans (table creation, the audit):
    # the configured timeouts. Requests read and write through the shared clients below.
    meta.connect_timeout_seconds = app_settings.CONNECT_TIMEOUT
    meta.read_timeout_seconds = app_settings.READ_TIMEOUT
    meta.aws_access_key_id, meta.aws_secret_access_key = clients.credentials()
    for model in [TableModel, *_all_subclasses(TableModel)]:
        model._connection = None
    _lock_models.clear()
    get_account_model.cache_clear()
    account_constraints.cache_clear()
    clocks.skew_margin_seconds.cache_clear()
    clients.reset()


def create_table(wait=True):
    """Create the accounts table (PK/SK strings, on-demand) if missing, with TTL on
    ``expires`` (``UpdateTimeToLive``; an existing table gets TTL too), recording the key
    version its locks will be keyed with. True if created.

    Sent with :func:`dynamodb_client`, whose botocore session every client shares
    (PynamoDB's own connection would load AWS's service model once more)."""
    client = dynamodb_client()
    name = TableModel.Meta.table_name
    try:
        client.describe_table(TableName=name)
        created = False
    except client.exceptions.ResourceNotFoundException:
        schema = Account._get_schema()
        client.create_table(
            TableName=name,
            AttributeDefinitions=schema["attribute_definitions"],
            KeySchema=schema["key_schema"],
            BillingMode="PAY_PER_REQUEST",
        )
        created = True
    if wait:
        client.get_waiter("table_exists").wait(TableName=name, WaiterConfig={"Delay": 1, "MaxAttempts": 120})
    enable_ttl()
    if created:
        record_key_version()
    return created


def delete_table():
    """Delete the accounts table (tests; nothing else deletes it)."""
    dynamodb_client().delete_table(TableName=TableModel.Meta.table_name)


def record_key_version():
    """Record in the table (item ``PK=META#KEYS``, ``SK=META``) that its locks are keyed
    with this server's :data:`~accounts.identifiers.KEY_VERSION`: a new table's, or after
    ``accounts_backfill`` re-keyed them all."""
    version = {"S": identifiers.KEY_VERSION}
    dynamodb_client().put_item(TableName=TableModel.Meta.table_name, Item={**KEY_VERSION_ITEM, "key_version": version})


def recorded_key_version(client=None):
    """The key version the table records (see :func:`record_key_version`), or ``None`` for
    a table whose locks were written before keys were versioned. ``client``: the botocore
    client to read with (default: the transactions')."""
    client = client or dynamodb_client()
    answer = client.get_item(TableName=TableModel.Meta.table_name, Key=KEY_VERSION_ITEM, ConsistentRead=True)
    return raw_text(answer.get("Item", {}).get("key_version"))


def enable_ttl():
    """Turn on DynamoDB's TTL for :data:`TTL_ATTRIBUTE`, unless it is already on."""
    client = dynamodb_client()
    status = client.describe_time_to_live(TableName=TableModel.Meta.table_name)["TimeToLiveDescription"]
    if status.get("TimeToLiveStatus") in ("ENABLED", "ENABLING"):
        return
    client.update_time_to_live(
        TableName=TableModel.Meta.table_name,
        TimeToLiveSpecification={"Enabled": True, "AttributeName": TTL_ATTRIBUTE},
    )
