"""The actions and transactions of second factors (:mod:`accounts.mfa`).

A passkey is a credential item in its account's partition plus the lock of its credential
id, ``UNIQ#WEBAUTHN#<id>`` (the account's set-valued unique constraint ``passkeys``): the
account's own change adds or removes the id and moves the lock (:func:`.plans.plan_change`),
and carries the credential item's action built here (``also=``). So registering, removing
and deleting are each ONE transaction, guarded by the account's ``passkeys`` as read.

A sign-in with a second factor is ONE transaction too (:func:`plan_sign_in`): the new
session's Put, the Delete of the session that held the half-login or the passkey challenge,
guarded ``expires >= :now`` (so it is used once, and not after it expired), and the factor's
single-use write: the record of a TOTP time step [absent or expired longer ago than the
clock-skew margin], the removal of a recovery code [still there], or a passkey's signature
counter [as read]. Like every planner's, these transactions are built by a function of
``:now`` (:func:`~.actions.new_transaction`), so each new attempt reads the clock again: a
single-use write is given as its builder, ``spend(now)`` -> the action. A sign-in with a
code also checks that each counter of its limit (``mfa_attempt``) is still under it
(:func:`limit_check`; :mod:`accounts.ratelimit` writes the condition, as only it knows its
counters), and the second step of a login checks that the account's password is still the
one its first step was judged with (:func:`password_as_staged`). A login's sign-in (its
second step, or a passkey login) checks that its account is still there and active as read
(:func:`account_as_signed_in`, or as a conjunct of the action the transaction already has
on the account), so no deactivation or deletion committed since the read, whose
``end_sessions`` cannot see a session written after its Query, leaves a session behind for
a reactivation to let in.
"""

from collections.abc import Callable, Iterable, Mapping, Sequence
from typing import Any

from pynamodb.expressions.update import Action as UpdateAction
from pynamodb.models import Model

from ..exceptions import OutcomeUnknown
from ..tables import TableModel
from ..tables.clocks import utcnow
from .actions import (
    LIMIT,
    OWNED_ITEM,
    Action,
    Body,
    Role,
    Transaction,
    free_condition,
    guarded_put,
    hash_key_attribute,
    key_target,
    new_transaction,
    still_as_read,
)
from .events import EVENT
from .running import run, settle

SIGN_IN, SPEND = "sign_in", "spend"
# A sign-in's roles (see Role).
SESSION, SPENT, CLEARED, SLOT = Role.SESSION, Role.SPENT, Role.CLEARED, Role.SLOT
STAGED_PASSWORD, ACCOUNT_ACTIVE, ID_TOKEN = Role.STAGED_PASSWORD, Role.ACCOUNT_ACTIVE, Role.ID_TOKEN
CODE_ISSUED = Role.CODE_ISSUED
# What a sign-in checks of its account as read: still there, no tombstone, and active.
SIGNED_IN_AS_READ = ("is_active",)
# The condition the session store saves a session with (accounts.sessions.SAVE_CONDITION):
# the session still lives. Spelled here because the session store imports this package.
SESSION_LIVE = "expires >= :now"
# A single-use write, as the builder of its action at a given ``:now`` (see the module).
Spend = Callable[[int], Action]


def owned_put(item: Model) -> Action:
    """``Put item [attribute_not_exists(PK)]`` of an item an account owns: a passkey's
    credential item, sent with the account's change that adds its credential id."""
    return Action("Put", guarded_put(item), OWNED_ITEM, key_target(item))


def totp_step_spend(record: TableModel) -> Spend:
    """The builder of the ``Put`` of the record that an account used a TOTP time step,
    guarded ``attribute_not_exists(PK) OR expires < :now - margin``: a code of that step is
    accepted once. The record expires when no code of its step can be accepted any more (by
    a clock behind ours by less than the margin, either)."""
    return _single_use_record(record)


def used_challenge_spend(record: TableModel) -> Spend:
    """The builder of the ``Put`` of the record that a passkey challenge was answered
    (:class:`~accounts.mfa.tables.UsedChallenge`), guarded as :func:`totp_step_spend`. It
    stands in for the deletion of the session that held the challenge, when none did (an
    anonymous visitor's challenge is signed into a cookie). A replayed answer dies because:

    1. its challenge's record exists, so this Put fails and the whole sign-in with it;
    2. the record outlives the challenge (it expires when the signed challenge does, and is
       free again only a clock-skew margin later), and after that the cookie's signature
       has expired: no challenge is accepted again while its record is gone;
    3. the challenge is 32 random bytes, so no other ceremony is refused by its record."""
    return _single_use_record(record)


def id_token_spend(record: TableModel) -> Spend:
    """The builder of the ``Put`` of the record that an ID token an app posted was accepted
    (:class:`~accounts.providers.tables.UsedIdToken`), guarded as :func:`totp_step_spend`:
    sent in the sign-in's own transaction when the token signs in, alone before a half-login
    or a pending sign-up is remembered, or an identity linked. A replayed token dies because:

    1. its record exists, so this Put fails, and the sign-in with it: of any number of
       concurrent posts of one token, one commits;
    2. the record lives until the token's ``exp`` plus the leeway it is accepted with, and
       is free again only a clock-skew margin later: by then every server's clock refuses
       the token itself;
    3. its key is the digest of the issuer and ``jti`` (or of the whole token without one),
       so no other token is refused by it."""
    return _single_use_record(record, ID_TOKEN)


def idempotency_key_spend(record: TableModel) -> Spend:
    """The builder of the ``Put`` of the record that a change was made with a client's
    ``Idempotency-Key`` (:class:`accounts.idempotency.KeyRecord`), guarded as
    :func:`totp_step_spend` and sent in the change's own transaction. A resent change dies
    because:

    1. within 10 minutes DynamoDB itself refuses its ClientRequestToken (derived from the
       same key) for a request that differs, and answers one that does not with success
       without applying it again;
    2. after that, this record exists until it expires (a day), so the Put fails and the
       change with it (and a caller that reads it first sends nothing);
    3. the record's key is a digest of the key, the operation and the account: another
       account's or another operation's change is never refused by it."""
    return _single_use_record(record)


def owned_update(item: TableModel, changes: Mapping[str, Any]) -> Action:
    """``Update item SET changes [attribute_exists(PK)]`` of an item an account owns (a
    passkey's name), sent with the account's change, whose guard (the account as read) says
    it is the account's: the item must still be there, so a change never recreates an item
    removed meanwhile as a fragment."""
    model = type(item)
    attributes = model.get_attributes()
    actions: list[UpdateAction] = [attributes[name].set(value) for name, value in changes.items()]
    body = item.get_update_kwargs_from_instance(actions=actions, condition=hash_key_attribute(model).exists())
    return Action("Update", body, OWNED_ITEM, key_target(item))


def _single_use_record(record: TableModel, role: Role = SPENT) -> Spend:
    def spend(now: int) -> Action:
        condition = free_condition(type(record), now)
        return Action("Put", record.get_save_kwargs_from_instance(condition=condition), role, key_target(record))

    return spend


def recovery_code_spend(account: Any, digest: str) -> Spend:
    """The builder of ``Update account DELETE recovery_codes :digest ADD used_recovery_codes
    :digest``, guarded ``contains(recovery_codes, :digest)``: a recovery code is accepted
    once, and is known afterwards as used (not wrong). A recovery code is spent only by a
    login's second step, so the Update is also guarded by the account's password as read,
    as :func:`password_as_staged` guards the others, and by its ``is_active`` as read, as
    :func:`account_as_signed_in` guards every sign-in (one action per item: neither can be
    a ConditionCheck of its own)."""
    model = type(account)
    codes, used = model.recovery_codes, model.used_recovery_codes
    # ... and when a code was last used (the API's last_used_at), set by the spend itself.
    actions: list[UpdateAction] = [
        codes.delete({digest}),
        used.add({digest}),
        model.recovery_codes_last_used.set(utcnow()),
    ]

    def spend(now: int) -> Action:
        condition = still_as_read(account, {"password", *SIGNED_IN_AS_READ}, now) & codes.contains(digest)
        body = account.get_update_kwargs_from_instance(actions=actions, condition=condition)
        return Action("Update", body, SPENT, key_target(account))

    return spend


def password_as_staged(account: Any) -> Spend:
    """The builder of ``ConditionCheck account [password = :read AND is_active = :read]``,
    sent with the sign-in of a login's second step (its TOTP code or passkey), ``account``
    as the step read it: the check of :func:`account_as_signed_in` too (one action per
    item). A half-login dies with the password it was begun with, whatever the timing,
    because:

    1. the staged login carries the stamp of the password its first step checked, and the
       second step compares it with the account as read (``staged_for`` in
       :mod:`accounts.mfa.flows.login`): a change committed before that read ends it;
    2. this check makes the transaction commit only against that read: a change or reset of
       the password committed between the read and the sign-in cancels the sign-in whole
       (no session written, no factor spent);
    3. a new password hash is salted, so even the same password set again changes it."""
    return _account_check(account, {"password", *SIGNED_IN_AS_READ}, STAGED_PASSWORD)


def account_as_signed_in(account: Any) -> Spend:
    """The builder of ``ConditionCheck account [is_active = :read]`` (so the account exists
    and is no tombstone, which holds no ``is_active``), sent with a sign-in whose
    transaction has no other action on the account (a passkey login). A session never
    outlives a deactivation or deletion racing its sign-in, because:

    1. the sign-in read the account active; a deactivation or deletion committed before that
       read refuses it there;
    2. one committed after the read and before the sign-in's transaction fails this check:
       the sign-in is cancelled whole, no session written;
    3. one committed after the sign-in's transaction is followed by ``end_sessions``, whose
       Query finds the session, and the session's load refuses an inactive account meanwhile.
    Without 2, the session written after ``end_sessions``' Query outlives it, and a later
    reactivation of the account lets it in."""
    return _account_check(account, set(SIGNED_IN_AS_READ), ACCOUNT_ACTIVE)


def code_as_issued(account: Any) -> Spend:
    """The builder of ``ConditionCheck account [password = :read AND email = :read AND
    phone = :read AND is_active = :read]`` (``attribute_not_exists(phone)`` when the account
    had no number as read), sent with the sign-in of a login code, mailed or texted,
    ``account`` as the code was judged against it (:mod:`accounts.login_codes.flows`). A
    code dies with the password, the address and the phone number it was issued under,
    whatever the timing, because:

    1. the code is an HMAC of the request's secret, the stamp of the account's password,
       its address and its number, as the account is when it is sent and again when it is
       typed: a change committed before the confirmation's read makes the typed code wrong;
    2. this check makes the sign-in commit only against that read: a password change, a
       reset, an email change, or a number changed, added or removed, committed between the
       read and the sign-in cancels it whole (no session written, the code's session not
       spent);
    3. a new password hash is salted, so even the same password set again changes it.

    The number is checked whichever way the code went (mailed or texted): the code is made
    from it either way, and a sign-in commits only against the account its code was judged
    against. It is also :func:`account_as_signed_in`'s check (one action per item): no
    session outlives a deactivation racing the sign-in."""
    return _account_check(account, {"password", "email", "phone", *SIGNED_IN_AS_READ}, CODE_ISSUED)


def _account_check(account: Any, names: set[str], role: Role) -> Spend:
    model = type(account)

    def check(now: int) -> Action:
        condition = still_as_read(account, names, now)
        body = model.get_operation_kwargs_from_class(account.PK, account.SK, condition=condition)
        return Action("ConditionCheck", body, role, key_target(account))

    return check


def passkey_use(passkey: Model, changes: Mapping[str, Any]) -> Spend:
    """The builder of the ``Update`` of a passkey's credential item after a use (``changes``:
    signature counter, backup state, last used), guarded by its ``sign_count`` as read (and
    ``expires >= :now`` while its account is unverified): of two uses that read one counter
    only one stores its own, so an older count never overwrites a newer one."""
    attributes = type(passkey).get_attributes()
    actions: list[UpdateAction] = [attributes[name].set(value) for name, value in changes.items()]

    def spend(now: int) -> Action:
        condition = still_as_read(passkey, {"sign_count"}, now)
        body = passkey.get_update_kwargs_from_instance(actions=actions, condition=condition)
        return Action("Update", body, SPENT, key_target(passkey))

    return spend


def _raw_target(table: str, key: Mapping[str, Any]) -> tuple[str, str, str]:
    return table, key["PK"]["S"], key["SK"]["S"]


def limit_check(params: Body) -> Spend:
    """The builder of the ``ConditionCheck`` that a rate counter is still under its limit,
    sent with a sign-in (``params`` from :meth:`accounts.ratelimit.Counter.under_limit`).
    When it fails the transaction raises :class:`~accounts.exceptions.OverLimit`, before any
    other refusal."""
    action = limit_action(params)
    return lambda now: action


def limit_action(params: Body) -> Action:
    """:func:`limit_check`'s ``ConditionCheck`` itself, for a change of an item that sends it
    among its ``also`` actions (a mailed code's tries, checked as a right code is used)."""
    return Action("ConditionCheck", params, LIMIT, _raw_target(params["TableName"], params["Key"]))


def _session_actions(
    table: str,
    session_put: Body,
    slot_put: Body | None,
    deletes: Sequence[Mapping[str, Any]],
    now: int,
    spent_session: Mapping[str, Any] | None = None,
    event_put: Body | None = None,
) -> list[Action]:
    planned = [Action("Put", session_put, SESSION, _raw_target(table, session_put["Item"]))]
    if slot_put is not None:
        planned.append(Action("Put", slot_put, SLOT, _raw_target(table, slot_put["Item"])))
    if event_put is not None:
        planned.append(Action("Put", event_put, EVENT, _raw_target(table, event_put["Item"])))
    for key in deletes:
        body: Body = {"TableName": table, "Key": key}
        role = CLEARED
        if key == spent_session:
            body.update(ConditionExpression=SESSION_LIVE, ExpressionAttributeValues={":now": {"N": str(now)}})
            role = SPENT
        planned.append(Action("Delete", body, role, _raw_target(table, key)))
    return planned


def plan_login_session(
    session_put: Body,
    slot_put: Body | None,
    deletes: Sequence[Mapping[str, Any]],
    event_put: Body | None = None,
    account_check: Spend | None = None,
) -> Transaction:
    """The transaction of a login's new session: the session's Put
    (``attribute_not_exists(PK)``), the Put of the slot it takes under
    ``ACCOUNTS_MAX_SESSIONS`` (``slot_put``, guarded by the slot's holder as read: absent,
    or the session it names), the Put of the login's security event (``event_put``,
    unguarded: see :mod:`.events`), ``deletes`` (the raw keys of the session it replaces,
    the slot's previous holder, cleared rate counters), unconditionally, and
    ``account_check``, the check that the account is still there and active as the login
    read it (:func:`account_as_signed_in`: a password, provider or code login's session
    outlives no deactivation racing it, for the reasons given there). A cancelled one raises
    :class:`~accounts.exceptions.AccountRefused` when the account check failed, else
    :class:`~accounts.exceptions.StaleItem`: the slot changed hands since it was read."""
    table = session_put["TableName"]

    def actions(now: int) -> list[Action]:
        planned = _session_actions(table, session_put, slot_put, deletes, now, event_put=event_put)
        return [*planned, account_check(now)] if account_check is not None else planned

    return new_transaction(SIGN_IN, actions, None)


def plan_sign_in(
    session_put: Body,
    deletes: Sequence[Mapping[str, Any]],
    spent_session: Mapping[str, Any] | None,
    spends: Iterable[Spend],
    slot_put: Body | None = None,
    event_put: Body | None = None,
) -> Transaction:
    """The transaction of a sign-in with a second factor.

    ``session_put``: the PutItem of the new session (``attribute_not_exists(PK)``, from
    :meth:`accounts.sessions.SessionStore.prepare_write`); ``deletes``: the raw keys it deletes,
    among them ``spent_session``, the session that held the half-login or the challenge,
    deleted ``[expires >= :now]`` (``None`` when no session held it: a passkey login's
    challenge signed into a cookie, spent by :func:`used_challenge_spend` instead); the
    others (cleared rate counters) unconditionally.
    ``spends``: the builders of the factor's single-use actions (:func:`totp_step_spend`,
    :func:`recovery_code_spend`, :func:`passkey_use`), and the :func:`limit_check` of each
    counter of the limit a code's sign-in is under. ``slot_put``: the session slot the new
    session takes (see :func:`plan_login_session`), if any; ``event_put``: the Put of the
    login's security event, if any.
    """
    if spent_session is not None and spent_session not in deletes:
        raise ValueError("The session that held the sign-in is not among the session's deletes.")
    table = session_put["TableName"]

    def actions(now: int) -> list[Action]:
        planned = _session_actions(table, session_put, slot_put, deletes, now, spent_session, event_put)
        return [*planned, *(spend(now) for spend in spends)]

    return new_transaction(SIGN_IN, actions, None)


def plan_spend(spends: Iterable[Spend]) -> Transaction:
    """The transaction of single-use writes alone (a TOTP step at enrolment, a passkey's
    counter at reauthentication), given as their builders."""
    builders = list(spends)
    return new_transaction(SPEND, lambda now: [spend(now) for spend in builders], None)


def run_once(transaction: Transaction) -> None:
    """Run a sign-in or spend transaction; a lost answer is settled by resending it with
    the same token. A cancelled one raises :class:`~accounts.exceptions.StaleItem`: a
    single-use value (or the half-login) was used meanwhile, and nothing was written."""
    try:
        run(transaction)
    except OutcomeUnknown:
        settle(transaction)
