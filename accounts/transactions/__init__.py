"""The one place that builds and runs TransactWriteItems requests.

Every create, change and delete of an item with unique constraints is ONE transaction:
the item's own action plus a guarded action per lock item. The request is built here in
the order it is sent, so position ``i`` of DynamoDB's ``CancellationReasons`` is action
``i`` of :attr:`Transaction.actions`, and each failure maps back to the fields it concerns.

Expiry: an item whose ``expires`` (the table's TTL attribute) has passed (``expires <
now``) is ABSENT, though DynamoDB may keep it for days. So every lock Put is guarded by
``attribute_not_exists(PK) OR expires < :now - margin`` (a lock expired longer ago than
``ACCOUNTS_CLOCK_SKEW_MARGIN`` may be taken over: no server's clock still sees it live), a
lock Put for an item that expires carries the item's ``expires``, and every guard on an item
as read adds ``expires >= :now`` when the item expires (an expired item cannot be changed,
verified or deleted). ``:now`` is read when a request is planned and again for each new
attempt, never for a resend of the same token.

Partial constraints (the email): an item the constraint leaves out (an unverified account)
holds no lock; its create or change sends a ``ConditionCheck attribute_not_exists(PK)`` on
the lock key instead, so a value another item holds is refused by position like a Put.

Retries and unknown outcomes (a request sent, its answer lost) are :mod:`.running`'s
business: a failed condition is an answer, never retried; "nothing was written" is said
only when it is known.

Invariants the transactions keep (the audit's findings are their violations):

- **I1** each lock key has at most one live owner: every new lock is a Put guarded by
  ``attribute_not_exists(PK)``;
- **I2** every value a live item holds under a declared constraint is locked by that item:
  the item's write and its lock Puts are one transaction, and a change is guarded by every
  attribute its keys are built from, as read;
- **I3** once activity stops, no lock is left without a live owner holding its value: old
  locks are deleted in the same transaction (only if ours), and a lock found to be another
  item's is kept only while a ConditionCheck proves it still is.

The package: :mod:`.actions` (the request's actions, their roles and guards),
:mod:`.plans` (the transaction of each operation, built, not sent), :mod:`.running`
(sending it, retrying, settling an unknown outcome, reading the answer),
:mod:`.authenticators` (second factors: passkeys' credential items, single-use sign-ins),
:mod:`.tokens` (the single use of the API's refresh tokens),
:mod:`.session_ends` (ending sessions on request, none left under a new key),
:mod:`.hierarchy` (the staff hierarchy: only a superuser changes a superuser's account).
"""

# Callers use ``transactions.X``: every name they need is imported here.
from .actions import (
    CHANGE,
    CREATE,
    DELETE,
    HELD_LOCK,
    HOLDER_CHECK,
    ITEM,
    KEPT_LOCK,
    LIMIT,
    LOCK_KEYS,
    MAX_ACTIONS,
    MAX_TOKEN_LENGTH,
    NEW_LOCK,
    OLD_LOCK,
    OTHER_MEMBER,
    OWNED_ITEM,
    REGISTRY,
    REPAIR,
    REPAIRED_LOCK,
    Action,
    Role,
    Transaction,
    explain,
    leaving,
    owned_delete,
    recorded_keys,
)
from .authenticators import (
    ACCOUNT_ACTIVE,
    CLEARED,
    CODE_ISSUED,
    ID_TOKEN,
    SESSION,
    SIGN_IN,
    SLOT,
    SPEND,
    SPENT,
    STAGED_PASSWORD,
    Spend,
    account_as_signed_in,
    code_as_issued,
    id_token_spend,
    idempotency_key_spend,
    limit_action,
    limit_check,
    owned_put,
    owned_update,
    passkey_use,
    password_as_staged,
    plan_login_session,
    plan_sign_in,
    plan_spend,
    recovery_code_spend,
    run_once,
    totp_step_spend,
    used_challenge_spend,
)
from .hierarchy import TARGET_AS_READ, acting_superuser, is_superuser_as_read, staff_guards
from .plans import (
    changed_copy,
    keys_after_change,
    plan_change,
    plan_claim_lock,
    plan_create,
    plan_delete,
    plan_record_locks,
    plan_registry_entry,
    plan_release_lock,
    plan_rewrite,
    plan_transfer_lock,
)
from .running import (
    AMBIGUOUS_CODES,
    BACKOFF_BASE_SECONDS,
    CONFLICT_ATTEMPTS,
    CONTENDED_REASONS,
    LOCK_ATTEMPTS,
    MAYBE_SENT_ERRORS,
    RESEND_CODES,
    SETTLE_DELAYS,
    TRANSPORT_ATTEMPTS,
    TRANSPORT_ERRORS,
    LockNotOwned,
    another_member,
    cancellation_error,
    change,
    create,
    delete,
    other_members,
    run,
    settle,
)
from .session_ends import END_SESSIONS, ENDED, plan_end_sessions
from .tokens import LIVE_SESSION, REFRESH, plan_refresh, refresh_token_spend, session_live_check

# What callers may use as ``transactions.X`` (mypy --strict, here and in a host project, reads
# only these as exported).
__all__ = [
    "AMBIGUOUS_CODES",
    "Action",
    "acting_superuser",
    "BACKOFF_BASE_SECONDS",
    "CHANGE",
    "CLEARED",
    "ID_TOKEN",
    "CODE_ISSUED",
    "CONFLICT_ATTEMPTS",
    "CONTENDED_REASONS",
    "CREATE",
    "DELETE",
    "END_SESSIONS",
    "ENDED",
    "HELD_LOCK",
    "HOLDER_CHECK",
    "ITEM",
    "KEPT_LOCK",
    "LIMIT",
    "LOCK_ATTEMPTS",
    "LOCK_KEYS",
    "LockNotOwned",
    "MAX_ACTIONS",
    "MAX_TOKEN_LENGTH",
    "MAYBE_SENT_ERRORS",
    "NEW_LOCK",
    "OLD_LOCK",
    "OTHER_MEMBER",
    "OWNED_ITEM",
    "REGISTRY",
    "REPAIR",
    "REPAIRED_LOCK",
    "RESEND_CODES",
    "Role",
    "SESSION",
    "SETTLE_DELAYS",
    "SIGN_IN",
    "SLOT",
    "SPEND",
    "SPENT",
    "STAGED_PASSWORD",
    "Spend",
    "TARGET_AS_READ",
    "TRANSPORT_ATTEMPTS",
    "TRANSPORT_ERRORS",
    "Transaction",
    "another_member",
    "cancellation_error",
    "code_as_issued",
    "change",
    "changed_copy",
    "create",
    "delete",
    "explain",
    "id_token_spend",
    "idempotency_key_spend",
    "is_superuser_as_read",
    "keys_after_change",
    "leaving",
    "limit_action",
    "limit_check",
    "other_members",
    "owned_delete",
    "owned_put",
    "owned_update",
    "passkey_use",
    "password_as_staged",
    "plan_change",
    "plan_claim_lock",
    "plan_create",
    "plan_delete",
    "plan_end_sessions",
    "plan_login_session",
    "plan_record_locks",
    "plan_registry_entry",
    "plan_release_lock",
    "plan_rewrite",
    "plan_sign_in",
    "plan_spend",
    "plan_transfer_lock",
    "recorded_keys",
    "recovery_code_spend",
    "run",
    "run_once",
    "settle",
    "staff_guards",
    "totp_step_spend",
    "used_challenge_spend",
    "LIVE_SESSION",
    "REFRESH",
    "plan_refresh",
    "refresh_token_spend",
    "session_live_check",
]
