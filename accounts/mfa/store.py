"""Second factors through the engine: the reads and writes of passkeys, the authenticator
app (TOTP) and recovery codes. Flows call these; every write goes through
:mod:`accounts.store` and :mod:`accounts.transactions`, every read is consistent.
"""

import time
from collections.abc import Callable

from django.contrib.auth.hashers import is_password_usable

from .. import dynamo, lookups, store, timeline, transactions
from ..tables import (
    PASSKEY_SORT_PREFIX,
    PROFILE_SORT_KEY,
    account_pk,
    get_account_model,
    is_gone,
    malformed_attributes,
    raw_text,
    sign_in_methods_held,
    utcnow,
)
from ..transactions.events import EventSpend
from ..uniqueness import LOCK_SORT_KEY
from . import passkeys, recovery_codes, totp
from .tables import Passkey, UsedChallenge, UsedTotpStep


class TooManyPasskeys(Exception):
    """The account already has :data:`~accounts.mfa.passkeys.MAX_PASSKEYS` passkeys and
    OpenID Connect identities together."""


class LastWayIn(Exception):
    """The passkey is the account's only way in: it has no usable password (it signed up
    with a passkey) and no other passkey. It must set a password first."""


# The account's attributes that hold a second factor, or stand in for one.
SECOND_FACTOR_ATTRIBUTES = ("totp_secret", "passkeys", "recovery_codes")


def has_second_factor(account) -> bool:
    """Whether a login of ``account`` needs a second step: it has an authenticator app or a
    passkey (recovery codes only stand in for them), or one of those attributes is stored
    with the wrong type. Damage fails closed: a wrong-typed attribute reads as absent, and
    "absent" must never let a password alone in."""
    return bool(account.totp_secret or account.passkeys or damaged_second_factor(account))


# The authenticator types of django-allauth's API, in the order allauth lists them (its
# ``Authenticator.Type``): a client such as allauth's React app opens the first one.
AUTHENTICATOR_TYPES = ("recovery_codes", "totp", "webauthn")


def authenticator_types(account) -> tuple[str, ...]:
    """The authenticator types ``account`` holds, as django-allauth reports them in a pending
    ``mfa_authenticate`` flow (``types``): each of :data:`AUTHENTICATOR_TYPES` the account has,
    in that order. Recovery codes count while the account has a set of them, used or not, as
    allauth counts its recovery-codes authenticator."""
    held = {
        "recovery_codes": bool(account.recovery_codes or account.used_recovery_codes),
        "totp": bool(account.totp_secret),
        "webauthn": bool(account.passkeys),
    }
    return tuple(kind for kind in AUTHENTICATOR_TYPES if held[kind])


def damaged_second_factor(account) -> list[str]:
    """The attributes of ``account`` that hold a second factor and are stored with the wrong
    type (an operator's raw write), sorted; empty for a sound account. The second step
    refuses such an account until staff repair it."""
    return sorted(name for name in malformed_attributes(account) if name in SECOND_FACTOR_ATTRIBUTES)


def passkey_lock_key(credential_id):
    """The lock key of a credential id: ``UNIQ#WEBAUTHN#<id>``."""
    return store.constraint_for("passkeys").key_for(credential_id)


def _live(raw):
    return raw is not None and not is_gone(raw)


def passkeys_of(account):
    """The account's passkeys, oldest first: one Query of its partition (none when it has
    none)."""
    if not account.passkeys:
        return []
    items = dynamo.query_partition(account.PK, PASSKEY_SORT_PREFIX)
    found = [Passkey.from_raw_data(raw) for raw in items if _live(raw)]
    return sorted((passkey for passkey in found if passkey.credential_id in account.passkeys), key=lambda p: p.created)


def read_account(account_id, *keys):
    """Account ``account_id`` and the items at ``keys`` (raw keys, e.g. rate counters) in one
    ``BatchGetItem``: ``(account or None, raw items found)``."""
    if not lookups.can_be_a_key(account_pk(account_id)):
        return None, []
    profile = dynamo.key(account_pk(account_id), PROFILE_SORT_KEY)
    items = dynamo.batch_get([profile, *keys])
    account = next((raw for raw in items if raw["PK"] == profile["PK"] and raw["SK"] == profile["SK"]), None)
    others = [raw for raw in items if raw is not account]
    return (get_account_model().from_raw_data(account) if _live(account) else None), others


def read_for_passkey(account_id, credential_id):
    """The account ``account_id`` and its credential item of ``credential_id``, in one
    ``BatchGetItem``: ``(account or None, passkey or None)``."""
    pk, sk = Passkey.key_for(account_id, credential_id)
    account, items = read_account(account_id, dynamo.key(pk, sk))
    passkey = next((raw for raw in items if _live(raw)), None)
    return account, (Passkey.from_raw_data(passkey) if passkey else None)


def read_partition_for_passkey(account_id, credential_id):
    """The account ``account_id``, its credential item of ``credential_id`` and the other
    items of its partition (its sessions, for a login to count), in one ``Query``:
    ``(account or None, passkey or None, other raw items)``."""
    if not lookups.can_be_a_key(account_pk(account_id)):
        return None, None, []
    pk, sk = Passkey.key_for(account_id, credential_id)
    items = dynamo.query_partition(pk)
    account = next((raw for raw in items if raw["SK"]["S"] == PROFILE_SORT_KEY), None)
    passkey = next((raw for raw in items if raw["SK"]["S"] == sk), None)
    others = [raw for raw in items if raw is not account and raw is not passkey]
    return (
        get_account_model().from_raw_data(account) if _live(account) else None,
        Passkey.from_raw_data(passkey) if _live(passkey) else None,
        others,
    )


def credential_lock_owner(credential_id, read_along=None):
    """The PK the lock of ``credential_id`` names, or ``None``: from ``read_along`` (the
    items read with the session, ``{(PK, SK): raw}``) when it holds the lock's read, else
    with a consistent GetItem."""
    key = (passkey_lock_key(credential_id), LOCK_SORT_KEY)
    if read_along is None:
        return lookups.lock_owner(get_account_model(), key[0])
    lock = read_along.get(key)
    return raw_text(lock.get("owner")) if lock is not None else None


def new_passkey(account, credential, name):
    """The credential item of ``credential`` (a checked :class:`~.passkeys.NewCredential`)
    for ``account``, unsaved."""
    pk, sk = Passkey.key_for(account.id, credential.credential_id)
    return Passkey(
        PK=pk,
        SK=sk,
        credential_id=credential.credential_id,
        name=name,
        public_key=credential.public_key,
        sign_count=credential.sign_count,
        backup_eligible=credential.backup_eligible,
        backup_state=credential.backup_state,
        transports=credential.transports or None,
        aaguid=credential.aaguid,
        discoverable=credential.discoverable,
        expires=account.expires,
    )


def add_passkey(account, credential, name, *, token=None, also=(), origin=timeline.NO_ORIGIN):
    """Register a passkey: ONE transaction adds its credential id to the account (as read),
    Puts the id's lock ``[attribute_not_exists(PK) OR expires < :now - margin]`` and the credential
    item ``[attribute_not_exists(PK)]``. Returns the item. ``token`` and ``also``: the
    transaction's ClientRequestToken and other actions (an idempotency key's record);
    ``origin``: where its security event comes from (:func:`accounts.store.update_account`).

    Raises :class:`~accounts.exceptions.UniqueViolation` (``passkeys``) when any account,
    this one included, already registered this credential; :class:`TooManyPasskeys`;
    :class:`~accounts.exceptions.StaleItem` when the account changed since it was read.
    """
    held = set(account.passkeys or ())
    if sign_in_methods_held(account) >= passkeys.MAX_PASSKEYS:
        raise TooManyPasskeys(f"An account has at most {passkeys.MAX_PASSKEYS} passkeys.")
    passkey = new_passkey(account, credential, name)
    store.update_account(
        account,
        passkeys=held | {credential.credential_id},
        also=[transactions.owned_put(passkey), *also],
        token=token,
        origin=origin,
    )
    return passkey


def rename_passkey(account, passkey, name):
    """Rename ``passkey`` (a credential item of ``account``): ONE transaction changes the
    account (as read) and sets the item's name ``[attribute_exists(PK)]``. Raises
    :class:`~accounts.exceptions.StaleItem` when either changed or went meanwhile."""
    store.update_account(account, also=[transactions.owned_update(passkey, {"name": name})])
    passkey.name = name
    return passkey


def remove_passkey(account, credential_id, *, origin=timeline.NO_ORIGIN):
    """Remove a passkey: ONE transaction takes its id out of the account (as read), releases
    the lock ``[owner = me OR attribute_not_exists(PK)]`` and deletes the credential item.
    Removing the last second factor removes the recovery codes too.

    Raises :class:`LastWayIn` for the last passkey of an account without a usable password:
    nothing else logs it in (a TOTP code is only a second step). The transaction is guarded
    by ``passkeys`` as read, so two removals of its last two passkeys cannot both commit.
    ``origin``: as :func:`add_passkey`."""
    held = set(account.passkeys or ()) - {credential_id}
    if not held and not is_password_usable(account.password):
        raise LastWayIn("The account's last passkey is its only way in: set a password first.")
    changes = {"passkeys": held or None}
    # Dropped with the last factor, the recovery codes go only while the app is still off as
    # read: an enrolment keeping them cannot commit in between and be left with none.
    kept = ()
    if not held and not account.totp_secret:
        changes.update(NO_RECOVERY_CODES)
        kept = ("totp_secret",)
    sort_key = Passkey.key_for(account.id, credential_id)[1]
    store.update_account(
        account, also=[transactions.owned_delete(account, sort_key)], as_read=kept, origin=origin, **changes
    )


def totp_spend(account_id, step):
    """The single-use write of TOTP step ``step`` (see :func:`accounts.transactions.totp_step_spend`)."""
    return transactions.totp_step_spend(UsedTotpStep.build(account_id, step, totp.step_record_expires(step)))


def recovery_code_spend(account, code):
    """The single-use write of recovery code ``code`` (guarded by the password as read, too)."""
    return transactions.recovery_code_spend(account, recovery_codes.digest(account.id, code))


def password_as_staged(account):
    """The check, sent with a second step's sign-in, that ``account``'s password is still
    the one read and the account still active (:func:`accounts.transactions.password_as_staged`)."""
    return transactions.password_as_staged(account)


def account_as_signed_in(account):
    """The check, sent with a passkey login's sign-in, that ``account`` is still there and
    active as read (:func:`accounts.transactions.account_as_signed_in`)."""
    return transactions.account_as_signed_in(account)


def used_challenge_spend(challenge: bytes) -> Callable[[int], transactions.Action]:
    """The single-use write of a passkey challenge that no session held (see
    :func:`accounts.transactions.used_challenge_spend`): its record lives as long as the
    challenge can (issued at most :data:`~accounts.mfa.passkeys.CHALLENGE_SECONDS` ago)."""
    expires = int(time.time()) + passkeys.CHALLENGE_SECONDS
    return transactions.used_challenge_spend(UsedChallenge.build(challenge, expires))


def challenge_was_used(challenge: bytes) -> bool:
    """Whether a sign-in recorded ``challenge`` as used (one consistent read)."""
    record = UsedChallenge.build(challenge, 0)
    return bool(dynamo.batch_get([dynamo.key(record.PK, record.SK)]))


def passkey_spend(passkey, changes):
    """The single-use write of a passkey's use: ``changes`` (counter, backup state) and now
    as its last use, guarded by its counter as read."""
    return transactions.passkey_use(passkey, {**changes, "last_used": utcnow()})


def limit_checks(conditions):
    """The checks that a sign-in is still within a rate limit: ``conditions`` from
    :meth:`accounts.ratelimit.Guess.conditions`, sent with the sign-in's single-use writes."""
    return [transactions.limit_check(params) for params in conditions]


def spend(*spends):
    """Send single-use writes alone (one transaction); raises
    :class:`~accounts.exceptions.StaleItem` when one was spent already."""
    transactions.run_once(transactions.plan_spend(spends))


def sign_in(session_put, deletes, spent_session, spends, slot_put=None, event_put=None):
    """Send a sign-in: the session's write (with the Put of the session slot it takes,
    ``slot_put``, and of the login's security event, ``event_put``) and the factor's
    single-use writes in ONE transaction (:func:`accounts.transactions.plan_sign_in`). Once
    it committed, :data:`~accounts.signals.security_event` is sent for each event among
    ``spends`` (:func:`recovery_code_event`)."""
    transactions.run_once(transactions.plan_sign_in(session_put, deletes, spent_session, spends, slot_put, event_put))
    for spend in spends:
        if isinstance(spend, EventSpend):
            timeline.committed(get_account_model(), spend.item)


def spend_recovery_code(account, code, *checks, origin: timeline.Origin = timeline.NO_ORIGIN):
    """Spend recovery code ``code`` of ``account`` outside a login (a reauthentication): ONE
    transaction, the code's guarded Update (:func:`recovery_code_spend`), its security event,
    from ``origin``, and ``checks`` (the second step's limit: :func:`limit_checks`). Raises
    :class:`~accounts.exceptions.StaleItem` when it was spent meanwhile, or the account
    changed its password or was deactivated since it was read, and
    :class:`~accounts.exceptions.OverLimit` when a counter of ``checks`` reached its limit."""
    event = recovery_code_event(account, origin)
    spend(recovery_code_spend(account, code), event, *checks)
    timeline.committed(get_account_model(), event.item)


def recovery_code_event(account, origin: timeline.Origin) -> EventSpend:
    """The security event of a recovery code's use, from ``origin``, written by the sign-in
    that spends it."""
    return EventSpend(dynamo.table_name(), timeline.new_event(account.id, timeline.RECOVERY_CODE_USED, origin=origin))


def enable_totp(account, secret, step, codes=None, *, origin=timeline.NO_ORIGIN):
    """Turn the authenticator app on with ``secret``, whose code of ``step`` confirmed it:
    ONE guarded change of the account as read stores the secret, ``step`` as spent (a login
    refuses a code of that step or an earlier one: :func:`step_spent_at_enrolment`) and the
    digests of ``codes`` (new recovery codes), or else keeps the account's codes as read.
    Raises :class:`~accounts.exceptions.StaleItem` when the account changed or was deleted
    since it was read: then nothing is written, in its partition or elsewhere. ``origin``:
    as :func:`add_passkey`."""
    changes = {"totp_secret": secret, "totp_created": utcnow(), "totp_step": step}
    # Kept, the recovery codes are guarded as read: the removal of the passkey they came
    # with (the last factor, which drops them) cannot commit in between and leave the app
    # with no recovery codes.
    kept = ()
    if codes:
        changes.update(_new_recovery_codes(account.id, codes))
    else:
        kept = ("recovery_codes",)
    store.update_account(account, as_read=kept, origin=origin, **changes)


def step_spent_at_enrolment(account, step):
    """Whether the code of TOTP time step ``step`` can no longer be used because the
    enrolment spent it (or a later step)."""
    spent = account.totp_step
    return isinstance(spent, (int, float)) and step <= spent


def disable_totp(account, *, origin=timeline.NO_ORIGIN):
    """Turn the authenticator app off (and the recovery codes, with the last second factor).
    ``origin``: as :func:`add_passkey`."""
    changes = {"totp_secret": None, "totp_created": None, "totp_step": None}
    if not account.passkeys:
        changes.update(NO_RECOVERY_CODES)
    store.update_account(account, origin=origin, **changes)


# The changes that remove the recovery codes, with the last second factor.
NO_RECOVERY_CODES = {
    "recovery_codes": None,
    "used_recovery_codes": None,
    "recovery_codes_created": None,
    "recovery_codes_last_used": None,
}


def _new_recovery_codes(account_id, codes):
    return {
        **NO_RECOVERY_CODES,
        "recovery_codes": recovery_codes.digests(account_id, codes),
        "recovery_codes_created": utcnow(),
    }


def set_recovery_codes(account, codes, *, origin=timeline.NO_ORIGIN):
    """Replace the account's recovery codes by ``codes`` (only their digests are stored);
    the old ones, used or not, are forgotten. ``origin``: as :func:`add_passkey`."""
    store.update_account(account, origin=origin, **_new_recovery_codes(account.id, codes))


def holds_recovery_code(account, code):
    return recovery_codes.digest(account.id, code) in (account.recovery_codes or ())


def used_recovery_code(account, code):
    """Whether ``code`` is one of the account's recovery codes that was used already."""
    return recovery_codes.digest(account.id, code) in (account.used_recovery_codes or ())
