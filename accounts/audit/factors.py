"""The audit's rules for second factors: what is a finding about an account's
``totp_secret``, ``recovery_codes`` and ``passkeys``, its partition's credential items
(``WEBAUTHN#``) and TOTP records (``TOTP#``), and the credential locks.

Each rule is a function of raw items (DynamoDB's attribute values, as a Scan page or an
export holds them), so any reader can call it. The workers flag what they see of each item
(:func:`has_factors`; an account's own damage through :func:`.checking.item_findings`), and
the confirmation runs :func:`partition_findings` on each flagged partition, read again with
a consistent ``Query``.

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

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

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


def has_factors(raw: dict) -> bool:
    """Whether the audit confirms ``raw``'s partition against its second factors: an
    account with ``passkeys`` (even damaged), a credential item or a TOTP record."""
    return "passkeys" in raw or is_factor_item(raw)


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
    for _, raw in sorted(credentials.items()):
        credential_id = raw_text(raw.get("credential_id"))
        if credential_id is None or credential_id in listed or TTL_ATTRIBUTE in raw:
            continue
        if not lock_names(locks.get(credential_id), pk):
            findings.append(Finding(STRAY_CREDENTIAL, passkeys_constraint, item_key(raw), False, holders=(pk,)))
    return findings


def partition_findings(
    pk: str,
    partition: list[dict],
    passkeys_constraint: Any,
    read: Callable[[list[dict]], list[dict]],
    now: int,
) -> list[Finding]:
    """The findings of one account's partition, read again consistently: each credential
    item's and TOTP record's ``damaged``, and the account's listed credentials against its
    credential items and their locks (``no_credential``, ``stray_credential``).

    ``partition``: the raw items under ``pk`` (the account among them, if live);
    ``read(keys)``: the live raw items at ``keys`` (consistent), called once for the
    credential locks."""
    findings, credentials, account = [], {}, None
    for raw in partition:
        sort_key = raw["SK"]["S"]
        if sort_key == PROFILE_SORT_KEY:
            account = None if is_gone(raw, now) else raw
        elif is_factor_item(raw):
            damaged = item_damage(raw, passkeys_constraint)
            if damaged is not None:
                findings.append(damaged)
            # A damaged credential item is there all the same: its id is not "without item".
            if sort_key.startswith(PASSKEY_SORT_PREFIX) and not is_gone(raw, now):
                credentials[sort_key] = raw
    ids = listed_ids(account) | {raw_text(raw.get("credential_id")) for raw in credentials.values()} - {None}
    by_lock_key = {passkeys_constraint.key_for(credential_id): credential_id for credential_id in ids}
    keys = [{"PK": {"S": lock_key}, "SK": {"S": LOCK_SORT_KEY}} for lock_key in sorted(by_lock_key)]
    locks = {by_lock_key[raw["PK"]["S"]]: raw for raw in (read(keys) if keys else ()) if raw["PK"]["S"] in by_lock_key}
    findings.extend(credential_findings(pk, account, credentials, locks, passkeys_constraint, now))
    return findings


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
