"""The audit's rules for second factors: what is a finding about an account's
``totp_secret``, ``recovery_codes`` and ``passkeys``, its partition's credential items
(``WEBAUTHN#``) and TOTP records (``TOTP#``), and the credential locks.

Each rule is a function of raw items (DynamoDB's attribute values, as a Scan page or an
export holds them), so any reader can call it: :func:`check_factors` is how a Scan page
(:mod:`.checking`) does, with one consistent ``BatchGetItem`` for what the page lacks.

- ``malformed`` (WEBAUTHN): the account's ``passkeys`` is of the wrong type. Its repair
  rebuilds it from the credential items and the locks that name the account
  (:func:`rebuilt_passkeys`), never writes it absent: that would release a passkey's lock
  and lose the registration. Its locks are not ``orphaned`` meanwhile.
- ``damaged``: an attribute of a second factor that no repair can rebuild is of the wrong
  type: the account's ``totp_secret`` or ``totp_step`` (TOTP), ``recovery_codes`` or
  ``used_recovery_codes`` (RECOVERY), a credential item's ``credential_id``,
  ``public_key`` or ``sign_count`` (WEBAUTHN), a TOTP record's ``expires`` (TOTP). A person
  has the owner set the factor up again.
- ``no_credential`` (WEBAUTHN): the account lists a credential id whose lock names it, but
  the credential item is gone: the passkey cannot be used (a passkey-only account is locked
  out). A person has the owner register it again.
- ``stray_credential`` (WEBAUTHN): a credential item that its account does not list and no
  lock names the account for, and that does not expire: left behind (a registration's item
  outside its transaction, a deletion behind the engine).
"""

from dataclasses import dataclass

from ..tables import PASSKEY_SORT_PREFIX, PROFILE_SORT_KEY, TTL_ATTRIBUTE, is_gone, passkey_sort_key, raw_text
from ..uniqueness import LOCK_SORT_KEY
from .findings import DAMAGED, NO_CREDENTIAL, STRAY_CREDENTIAL, Finding

TOTP_RECORD_PREFIX = "TOTP#"
WEBAUTHN = "WEBAUTHN"


@dataclass(frozen=True)
class FactorNamespace:
    """The namespace of a second factor that has no lock of its own (TOTP, RECOVERY), as a
    finding names it."""

    namespace: str
    fields: tuple
    lookalike: bool = False


TOTP = FactorNamespace("TOTP", ("totp_secret",))
RECOVERY = FactorNamespace("RECOVERY", ("recovery_codes",))

# The DynamoDB type each attribute must have, by namespace.
ACCOUNT_TYPES = {
    TOTP: {"totp_secret": "S", "totp_step": "N"},
    RECOVERY: {"recovery_codes": "SS", "used_recovery_codes": "SS"},
}
CREDENTIAL_TYPES = {"credential_id": "S", "public_key": "B", "sign_count": "N"}
TOTP_RECORD_TYPES = {TTL_ATTRIBUTE: "N"}
# What a Scan page must read of each item for these rules (beside keys and ``expires``).
SCANNED_ATTRIBUTES = frozenset(
    {"passkeys", *CREDENTIAL_TYPES, *(name for types in ACCOUNT_TYPES.values() for name in types)}
)


def wrongly_typed(raw, types):
    """``{attribute: raw value}`` of the attributes of ``raw`` present with another type
    than ``types`` names (a null counts as absent)."""
    return {
        name: raw[name]
        for name, kind in types.items()
        if name in raw and "NULL" not in raw[name] and kind not in raw[name]
    }


def item_key(raw):
    """How a finding names an item that is not an account: ``<PK>|<SK>``."""
    return f"{raw['PK']['S']}|{raw['SK']['S']}"


def account_damage(pk, raw, model=None):
    """The ``damaged`` findings of an account's TOTP and recovery codes (raw item), one per
    namespace."""
    findings = []
    for namespace, types in ACCOUNT_TYPES.items():
        stored = wrongly_typed(raw, types)
        if stored:
            findings.append(_damaged(namespace, pk, pk, stored, model))
    return findings


def item_damage(raw, passkeys_constraint):
    """The ``damaged`` finding of a credential item or a TOTP record (raw), or ``None``."""
    sort_key = raw["SK"]["S"]
    if sort_key.startswith(PASSKEY_SORT_PREFIX):
        namespace, types = passkeys_constraint, CREDENTIAL_TYPES
    elif sort_key.startswith(TOTP_RECORD_PREFIX):
        namespace, types = TOTP, TOTP_RECORD_TYPES
    else:
        return None
    stored = wrongly_typed(raw, types)
    return _damaged(namespace, item_key(raw), raw["PK"]["S"], stored) if stored else None


def _damaged(namespace, key, holder, stored, model=None):
    return Finding(
        DAMAGED, namespace, key, True, holders=(holder,), model=model, malformed=tuple(sorted(stored)), stored=stored
    )


def is_factor_item(raw):
    """Whether ``raw`` is a credential item or a TOTP record of an account's partition."""
    sort_key = raw.get("SK", {}).get("S", "")
    return sort_key.startswith((PASSKEY_SORT_PREFIX, TOTP_RECORD_PREFIX))


def listed_ids(raw_account):
    """The credential ids a raw account lists (none when ``passkeys`` is damaged)."""
    value = raw_account.get("passkeys", {}) if raw_account else {}
    ids = value.get("SS") if isinstance(value, dict) else None
    return set(ids) if isinstance(ids, list) else set()


def lock_names(raw_lock, pk):
    return raw_lock is not None and raw_text(raw_lock.get("owner")) == pk


def credential_findings(pk, raw_account, credentials, locks, passkeys_constraint, now):
    """The ``no_credential`` and ``stray_credential`` findings of one partition.

    ``raw_account``: the account (``None``: gone); ``credentials``: its raw credential items
    read, by sort key; ``locks``: the raw credential locks read, by credential id (a missing
    one is absent). Only the ids listed and the items given are judged.
    """
    findings = []
    listed = listed_ids(raw_account)
    for credential_id in sorted(listed):
        credential = credentials.get(passkey_sort_key(credential_id))
        if credential is None and lock_names(locks.get(credential_id), pk):
            lock_key = passkeys_constraint.key_for(credential_id)
            findings.append(Finding(NO_CREDENTIAL, passkeys_constraint, lock_key, True, owner=pk, holders=(pk,)))
    for sort_key, raw in sorted(credentials.items()):
        credential_id = raw_text(raw.get("credential_id"))
        if credential_id is None or credential_id in listed or TTL_ATTRIBUTE in raw:
            continue
        if not lock_names(locks.get(credential_id), pk):
            findings.append(Finding(STRAY_CREDENTIAL, passkeys_constraint, item_key(raw), False, holders=(pk,)))
    return findings


def check_factors(raw_items, accounts, passkeys_constraint, read, now):
    """Every finding about second factors on one Scan page.

    ``raw_items``: the page; ``accounts``: its live accounts (PK -> raw item);
    ``read(keys)``: the live raw items at ``keys`` (consistent), called once for the
    credential items of the page's accounts and the accounts and locks of its credential
    items."""
    findings = []
    credentials = {}
    for raw in raw_items:
        if not is_factor_item(raw):
            continue
        damaged = item_damage(raw, passkeys_constraint)
        if damaged is not None:
            findings.append(damaged)
        elif raw["SK"]["S"].startswith(PASSKEY_SORT_PREFIX) and not is_gone(raw, now):
            credentials[(raw["PK"]["S"], raw["SK"]["S"])] = raw
    for pk, raw in accounts.items():
        findings.extend(account_damage(pk, raw))
    # What the page lacks: each listed credential's item and lock, each credential item's
    # account and lock.
    wanted = {}
    for pk, raw in accounts.items():
        for credential_id in listed_ids(raw):
            wanted[(pk, passkey_sort_key(credential_id))] = None
            wanted[(passkeys_constraint.key_for(credential_id), LOCK_SORT_KEY)] = None
    for (pk, _), raw in credentials.items():
        wanted[(pk, PROFILE_SORT_KEY)] = None
        credential_id = raw_text(raw.get("credential_id"))
        if credential_id is not None:
            wanted[(passkeys_constraint.key_for(credential_id), LOCK_SORT_KEY)] = None
    have = {**{(pk, PROFILE_SORT_KEY): raw for pk, raw in accounts.items()}, **credentials}
    keys = [{"PK": {"S": pk}, "SK": {"S": sk}} for pk, sk in wanted if (pk, sk) not in have]
    if keys:
        have.update({(raw["PK"]["S"], raw["SK"]["S"]): raw for raw in read(keys)})
    partitions = {pk for pk in accounts} | {pk for pk, _ in credentials}
    for pk in sorted(partitions):
        account = have.get((pk, PROFILE_SORT_KEY))
        # A credential item of another page's account is judged on this page only when
        # this page holds the item; the listed ids of an account only on its own page.
        owned = {sk: raw for (item_pk, sk), raw in have.items() if item_pk == pk and sk.startswith(PASSKEY_SORT_PREFIX)}
        judged = (
            dict(owned) if pk in accounts else {sk: raw for (item_pk, sk), raw in credentials.items() if item_pk == pk}
        )
        ids = listed_ids(account) | {raw_text(raw.get("credential_id")) for raw in owned.values()} - {None}
        locks = {
            credential_id: have.get((passkeys_constraint.key_for(credential_id), LOCK_SORT_KEY))
            for credential_id in ids
        }
        listing = account if pk in accounts else _listing_only(account, judged)
        findings.extend(credential_findings(pk, listing, judged, locks, passkeys_constraint, now))
    return findings


def _listing_only(account, judged):
    """The account as a page that does not hold it judges it: only whether it lists the
    credential items this page holds (its own page judges its listed ids)."""
    if account is None:
        return None
    listed = listed_ids(account) & {raw_text(raw.get("credential_id")) for raw in judged.values()}
    return {"passkeys": {"SS": sorted(listed)}} if listed else {}


# The account's attributes of second factors that no repair rewrites as read (``damaged``).
UNREBUILDABLE = frozenset(name for types in ACCOUNT_TYPES.values() for name in types)


def rebuilt_passkeys(pk, credential_items, locks):
    """The credential ids a damaged ``passkeys`` is rebuilt from: those of the partition's
    live credential items (raw) whose lock (raw, by credential id) names the account."""
    rebuilt = set()
    for raw in credential_items:
        credential_id = raw_text(raw.get("credential_id"))
        if credential_id is not None and lock_names(locks.get(credential_id), pk):
            rebuilt.add(credential_id)
    return rebuilt
