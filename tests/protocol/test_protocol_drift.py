"""The model and the code must not drift apart.

``protocol/conditions.tsv`` lists, per transaction, each action (kind, role) and each conjunct
of its ConditionExpression, with the guard macro of ``protocol/model.h`` that models it. These
tests build every transaction the code sends (through ``accounts_explain`` for those it
prints, through the ``plan_*`` functions for the others), with the clock stopped, normalize
each condition into the table's shape (placeholders resolved to attribute names, values
replaced by their role: ``read``, ``me``, ``other``, and a time compared with ``expires`` by
its value: ``now``, ``now - margin`` or the offset it really has, such as ``now + 3600``) and
compare with the rows the code sends today (``since`` = ``code``), in both directions; and
check that the model defines and uses exactly the table's guards.
"""

import io
import json
import re
import time
from unittest import mock

import pytest
from django.contrib.auth import SESSION_KEY
from django.core.management import call_command
from django.core.management.base import CommandParser
from django.test import RequestFactory, override_settings

from accounts import addresses, dynamo, idempotency, ratelimit, sessions, store, timeline, transactions
from accounts.headless.tables import UsedRefreshToken
from accounts.login_codes import flows as code_flows
from accounts.login_codes import store as codes_store
from accounts.management.commands.accounts_explain import Command as ExplainCommand
from accounts.mfa import store as mfa_store
from accounts.mfa.tables import Passkey
from accounts.providers import oidc
from accounts.providers import store as provider_store
from accounts.tables import (
    ACCOUNT_PREFIX,
    EVENT_SORT_PREFIX,
    STAFF_REGISTRY,
    Account,
    identity_element,
    passkey_sort_key,
    utcnow,
)
from accounts.transactions.events import EVENT
from tests.protocol_table import guards_defined, model_text, rows

GONE = f"{ACCOUNT_PREFIX}gone"
# ACCOUNTS_CLOCK_SKEW_MARGIN while the transactions are built: a takeover compares expires
# with this many seconds before now.
MARGIN = 300


def explain(*args):
    out = io.StringIO()
    call_command("accounts_explain", *args, stdout=out)
    return json.loads(out.getvalue())


def split_and(text):
    """The conjuncts of ``text``: top-level ANDs flattened, redundant outer parentheses dropped."""
    text = text.strip()
    while text.startswith("(") and _closing(text, 0) == len(text) - 1:
        text = text[1:-1].strip()
    depth, start, parts = 0, 0, []
    for index, char in enumerate(text):
        depth += {"(": 1, ")": -1}.get(char, 0)
        if depth == 0 and text.startswith(" AND ", index):
            parts.append(text[start:index])
            start = index + len(" AND ")
    if not parts:
        return [text]
    parts.append(text[start:])
    return [conjunct for part in parts for conjunct in split_and(part)]


def _closing(text, opening):
    depth = 0
    for index in range(opening, len(text)):
        depth += {"(": 1, ")": -1}.get(text[index], 0)
        if depth == 0:
            return index
    raise ValueError(f"Unbalanced parentheses: {text}")


# Lock actions by kind; a lock ConditionCheck is a kept lock's check unless it is the
# ``attribute_not_exists(PK)`` check of a value not taken (``email_check``).
LOCK_ROLES = {"Put": "new_lock", "Delete": "old_lock", "Update": "held_lock", "ConditionCheck": "kept_lock"}
ROLE_LABELS = {
    transactions.NEW_LOCK: "new_lock",
    transactions.OLD_LOCK: "old_lock",
    transactions.HELD_LOCK: "held_lock",
    transactions.KEPT_LOCK: "kept_lock",
    transactions.REPAIRED_LOCK: "repaired_lock",
}
FREE_CHECK = "attribute_not_exists(PK)"
# Actions that are not locks, by their role: an item an account owns (a passkey's credential
# item), and a sign-in's session Put, single-use writes and housekeeping deletes.
OTHER_ROLES = {
    transactions.OWNED_ITEM: "owned_item",
    transactions.SESSION: "session",
    transactions.SPENT: "spent",
    transactions.CLEARED: "cleared",
    transactions.SLOT: "slot",
    transactions.LIMIT: "limit",
    transactions.REGISTRY: "registry",
    transactions.OTHER_MEMBER: "other_member",
    EVENT: "event",
    transactions.STAGED_PASSWORD: "staged_password",
    transactions.ACCOUNT_ACTIVE: "account_active",
    transactions.ID_TOKEN: "id_token",
    transactions.LIVE_SESSION: "live_session",
    transactions.CODE_ISSUED: "code_issued",
    transactions.Role.ACTOR: "actor",
    transactions.ENDED: "ended",
}
# A registry entry's actions when the request is one accounts_explain printed (no roles):
# its own Put or Delete, and the ConditionCheck of another member's entry.
REGISTRY_ROLES = {"Put": "registry", "Delete": "registry", "ConditionCheck": "other_member"}
# A rate counter's window attributes (w<number>), by the role they play in its check.
WINDOW = re.compile(r"\bw(\d+)\b")
# The condition of an action sent with none (its row's guard is "-": nothing to model).
NO_CONDITION = "-"


def action_label(operation, kind, key, condition, role=None):
    """The table's name for an action: its role, and the namespace of a lock.

    ``role`` is the engine's (``Action.role``) when the transaction was planned here; for a
    request ``accounts_explain`` printed, it is read from the kind (and, for a lock's
    ConditionCheck, from its condition)."""
    if role in OTHER_ROLES:
        return OTHER_ROLES[role]
    if key == STAFF_REGISTRY.partition:
        return REGISTRY_ROLES[kind]
    if key.startswith(ACCOUNT_PREFIX):
        # A repair's holder (an Update recording the lock it is given) or owner: the caller's.
        return "item" if kind != "ConditionCheck" and operation != "repair" else None
    namespace = key.split("#")[1]
    if role is not None:
        label = ROLE_LABELS[role]
    elif operation == "repair":
        label = "repaired_lock"
    else:
        label = LOCK_ROLES[kind]
    if kind == "ConditionCheck" and label == "new_lock":
        label = "email_check"  # a value checked free, not taken (NEW_LOCK: refused by field)
    elif kind == "ConditionCheck" and role is None and condition == FREE_CHECK:
        label = "email_check"
    return f"{label} {namespace}"


def clock_value(value, now):
    """A time a condition compares ``expires`` with, by its offset from ``now``: ``now``,
    ``now - margin`` (the takeover's cutoff), or the offset it has (``now + 3600``)."""
    offset = int(value["N"]) - now
    if offset == 0:
        return "now"
    if offset == -MARGIN:
        return "now - margin"
    return f"now {'+' if offset > 0 else '-'} {abs(offset)}"


def normalized(body, is_lock, me, now):
    """The ConditionExpression of ``body``: names resolved, values replaced by their role
    (a time compared with ``expires`` by its offset from ``now``; ``read`` on an account;
    ``me`` or ``other`` on a lock); ``-`` when there is none."""
    if "ConditionExpression" not in body:
        return NO_CONDITION
    names = body.get("ExpressionAttributeNames", {})
    values = body.get("ExpressionAttributeValues", {})
    text = re.sub(r"#\w+", lambda match: names[match.group()], body["ConditionExpression"])
    text = re.sub(
        r"\b(expires (?:<|>|<=|>=)) (:\w+)", lambda match: f"{match[1]} {clock_value(values[match[2]], now)}", text
    )

    def role(placeholder):
        if not is_lock:
            return "read"
        return "me" if values[placeholder] == {"S": me} else "other"

    text = re.sub(r":\w+", lambda match: role(match.group()), text)
    return re.sub(r"(\w+) \(", r"\1(", text)


def shapes(name, request, operation, now, me=None, holder=None, roles=None):
    """``{(transaction, action, kind, conjunct)}`` of a TransactWriteItems request planned
    at ``now``."""
    found = set()
    for position, entry in enumerate(request["TransactItems"]):
        ((kind, body),) = entry.items()
        key = (body.get("Key") or body.get("Item"))["PK"]["S"]
        role = roles[position] if roles else None
        if (body.get("Key") or body.get("Item")).get("SK", {}).get("S", "").startswith(EVENT_SORT_PREFIX):
            role = EVENT  # a security event's Put, in the account's partition (printed requests have no roles)
        is_lock = not key.startswith(ACCOUNT_PREFIX) and role != transactions.LIMIT and key != STAFF_REGISTRY.partition
        condition = normalized(body, is_lock, me, now)
        if role == transactions.LIMIT:
            condition = window_roles(condition)
        label = action_label(operation, kind, key, condition, role)
        if label is None:
            label = "holder" if key == holder else "owner"
        found.update((name, label, kind, conjunct) for conjunct in split_and(condition))
    return found


def window_roles(condition):
    """A rate counter's check with its window attributes named by role: the later window is
    the current one, the other the previous."""
    windows = sorted({int(number) for number in WINDOW.findall(condition)})
    names = {windows[-1]: "current_window", **({windows[0]: "previous_window"} if len(windows) > 1 else {})}
    return WINDOW.sub(lambda match: names[int(match[1])], condition).replace(") AND(", ") AND (")


def staff_transactions(ada, bob, now):
    """The transactions that put an account in the staff registry or take it out: a staff
    account (ada made staff, as read) revoked, deactivated or deleted checks another
    member's entry (bob's, as the registry's Query named him)."""
    staff = transactions.changed_copy(ada, {"is_staff": True})
    others = {STAFF_REGISTRY.partition: bob.PK}
    return {
        "signup_staff": transactions.plan_create(store.build_signup_account("sam@x.io", "sam", "hash", is_staff=True)),
        "grant_staff": transactions.plan_change(ada, {"is_staff": True, "updated": now}),
        "revoke_staff": transactions.plan_change(staff, {"is_staff": False, "updated": now}, others=others),
        "deactivate_staff": transactions.plan_change(staff, {"is_active": False, "updated": now}, others=others),
        "delete_staff": transactions.plan_delete(staff, others=others),
    }


def staff_hierarchy_transactions(ada, bob, now):
    """A staff member's (bob's) change of an ordinary account, and change and deletion of a
    superuser's: the account's ``is_superuser`` as read, and for a superuser's, bob's own
    flags checked (accounts.transactions.hierarchy)."""
    root = transactions.changed_copy(ada, {"is_superuser": True})
    as_read, checks = transactions.staff_guards(root, bob.id)
    ordinary_as_read, _ = transactions.staff_guards(ada, bob.id)
    return {
        "staff_change": transactions.plan_change(
            ada, {"username": "countess", "updated": now}, as_read=ordinary_as_read
        ),
        "staff_change_superuser": transactions.plan_change(
            root, {"username": "countess", "updated": now}, as_read=as_read, also=checks
        ),
        "staff_delete_superuser": transactions.plan_delete(root, as_read=as_read, also=checks),
    }


def login_session_transactions(ada):
    """A login's new session with the session slot it takes (a slot absent as read, and a
    slot read naming another session, which the login ends) or without one
    (``ACCOUNTS_MAX_SESSIONS = None``), each with the check that the account the login read
    is still there and active."""
    session = sessions.SessionStore()
    session[SESSION_KEY] = ada.id
    item, _, now = session._next_item(session._get_session())
    put = session._put_params(item, True, now)
    free = sessions.slot_put(ada.id, 0, None, item["SK"]["S"])
    taken = sessions.slot_put(ada.id, 1, "SESSION#old", item["SK"]["S"])
    old = dynamo.key(ada.PK, "SESSION#old")
    check = transactions.account_as_signed_in(ada)
    return {
        "login_session": transactions.plan_login_session(put, free, [], account_check=check),
        "login_session_taking_over": transactions.plan_login_session(put, taken, [old], account_check=check),
        "login_session_without_slot": transactions.plan_login_session(put, None, [], account_check=check),
    }


def session_end_transactions(ada):
    """The deletion of sessions ending on request (accounts.logouts): two sessions of ada's
    read, each deleted still there; staff's records its security event with them."""
    table = dynamo.table_name()
    keys = [dynamo.key(ada.PK, "SESSION#one"), dynamo.key(ada.PK, "SESSION#two")]
    event = timeline.put(timeline.new_event(ada.id, timeline.SESSIONS_ENDED, origin=timeline.NO_ORIGIN))
    return {
        "end_sessions": transactions.plan_end_sessions(table, keys),
        "end_sessions_recorded": transactions.plan_end_sessions(table, keys, event),
    }


def code_transactions(ada, bob, carol):
    """Every transaction the code sends, as ``(name, request, operation, me, holder, roles)``.

    ``ada`` and ``bob`` are verified; ``carol`` is unverified (her username lock expires)."""
    email = store.constraint_for("email")
    username = store.constraint_for("username")
    email_key = email.lock_key(ada)
    email_free_key = email.key_for("free@x.io")
    now = utcnow()
    yield "signup", explain("signup", "--email", "new@x.io", "--username", "new"), "create", None, None, None
    yield (
        "change_email",
        explain("change-email", "--email", "ada@x.io", "--to", "lovelace@x.io"),
        "change",
        ada.PK,
        None,
        None,
    )
    yield (
        "change_username",
        explain("change-username", "--username", "ada", "--to", "countess"),
        "change",
        ada.PK,
        None,
        None,
    )
    yield "delete", explain("delete", "--email", "ada@x.io"), "delete", ada.PK, None, None
    yield "verify", explain("verify", "--username", "carol"), "change", carol.PK, None, None
    store.request_email_change(bob, "robert@x.io")
    yield "apply_email_change", explain("apply-email-change", "--username", "bob"), "change", bob.PK, None, None
    pending = store.get_account(bob.id)
    kept = transactions.plan_change(
        pending,
        {**store.email_change_changes(pending), "updated": now},
        keep_locks={email.lock_key(pending): ada.PK},
    )
    yield (
        "apply_email_change_keeping_lock",
        json.loads(transactions.explain(kept)),
        "change",
        bob.PK,
        None,
        [action.role for action in kept.actions],
    )
    planned = {
        "signup_unverified": transactions.plan_create(
            store.build_signup_account("dora@x.io", "dora", "hash", email_verified=False)
        ),
        "change_both": transactions.plan_change(ada, {"email": "l@x.io", "username": "l", "updated": now}),
        "change_email_unverified": transactions.plan_change(carol, {"email": "c@x.io", "updated": now}),
        "change_username_unverified": transactions.plan_change(carol, {"username": "caroline", "updated": now}),
        "change_email_keeping_lock": transactions.plan_change(
            ada, {"email": "l@x.io", "updated": now}, keep_locks={email_key: bob.PK}
        ),
        "change_email_keeping_nobodys_lock": transactions.plan_change(
            ada, {"email": "l@x.io", "updated": now}, keep_locks={email_key: None}
        ),
        "request_email_change": transactions.plan_change(
            ada,
            {"pending_email": "free@x.io", "pending_nonce": "n", "updated": now},
            unheld=[(email, email_free_key)],
        ),
        "delete_unverified": transactions.plan_delete(carol),
        "delete_keeping_lock": transactions.plan_delete(ada, keep_locks={email_key: bob.PK}),
        "delete_keeping_nobodys_lock": transactions.plan_delete(ada, keep_locks={email_key: None}),
    }
    # Issue 18 (ownership): what ACCOUNTS_PREVENT_ENUMERATION sends instead (no check that the
    # address is free), the profile's cancel of a pending change, and the verification link's
    # "I did not sign up" (the delete of an unverified account).
    planned["signup_unverified_unchecked"] = transactions.plan_create(
        store.build_signup_account("erin@x.io", "erin", "hash", email_verified=False), check_unheld=False
    )
    planned["request_email_change_unchecked"] = transactions.plan_change(
        ada, {"pending_email": "free@x.io", "pending_nonce": "n", "updated": now}
    )
    planned["cancel_email_change"] = transactions.plan_change(pending, {**store.CANCEL_EMAIL_CHANGE, "updated": now})
    planned["discard_signup"] = transactions.plan_delete(carol)
    # A pending change replaced by a newer request: the pending fields are guarded as read.
    planned["request_email_change again"] = transactions.plan_change(
        store.get_account(bob.id),
        {"pending_email": "free@x.io", "pending_nonce": "n", "updated": now},
        unheld=[(email, email_free_key)],
    )
    # The repairs, of each account constraint, for a verified holder (ada) and an unverified
    # one (carol: her username lock expires with her), from an owner that changed (verified
    # bob, or unverified carol), is gone, or is nobody.
    holders = {email: [ada], username: [ada, carol]}
    for constraint, items in holders.items():
        key = constraint.key_for("somebody@x.io" if constraint is email else "somebody")
        owners = [("changed", bob.PK, bob), ("gone", GONE, None), ("no", None, None)]
        if constraint is username:
            owners.append(("changed", carol.PK, carol))
        for holder in items:
            planned[f"claim {constraint.namespace} {holder.PK}"] = (
                transactions.plan_claim_lock(holder, constraint),
                holder,
            )
            for suffix, owner, owner_item in owners:
                if owner == holder.PK:
                    continue
                planned[f"transfer_from_{suffix}_owner {constraint.namespace} {holder.PK} {owner}"] = (
                    transactions.plan_transfer_lock(holder, constraint, owner, owner_item),
                    holder,
                )
        for suffix, owner, owner_item in owners:
            planned[f"release_from_{suffix}_owner {constraint.namespace} {owner}"] = (
                transactions.plan_release_lock(Account, constraint, key, owner, owner_item),
                None,
            )
    planned.update(second_factor_transactions(ada, carol))
    planned.update(staff_transactions(ada, bob, now))
    planned.update(login_session_transactions(ada))
    planned.update(staff_hierarchy_transactions(ada, bob, now))
    planned.update(identity_transactions(ada))
    planned.update(address_transactions(ada))
    planned.update(totp_and_recovery_code_transactions(ada))
    planned.update(token_transactions(ada))
    planned.update(phone_transactions(ada, carol))
    planned.update(login_code_transactions(ada))
    planned.update(session_end_transactions(ada))
    # The repairs of a passkey's lock, held by ada (as read with one passkey).
    with_passkey = transactions.changed_copy(ada, {"passkeys": {"cred1"}})
    passkeys = store.constraint_for("passkeys")
    key = passkeys.key_for("cred1")
    changed_owner = transactions.changed_copy(bob, {"passkeys": {"cred2"}})
    planned["claim WEBAUTHN"] = (transactions.plan_claim_lock(with_passkey, passkeys, key=key), with_passkey)
    for suffix, owner, owner_item in [("changed", bob.PK, changed_owner), ("gone", GONE, None), ("no", None, None)]:
        planned[f"transfer_from_{suffix}_owner WEBAUTHN"] = (
            transactions.plan_transfer_lock(with_passkey, passkeys, owner, owner_item, key=key),
            with_passkey,
        )
        planned[f"release_from_{suffix}_owner WEBAUTHN"] = (
            transactions.plan_release_lock(Account, passkeys, key, owner, owner_item),
            None,
        )
    for label, transaction in planned.items():
        transaction, holder_item = transaction if isinstance(transaction, tuple) else (transaction, None)
        name = label.split()[0]
        holder = holder_item.PK if holder_item is not None else None
        me = holder if transaction.operation == "repair" else transaction.actions[0].target[1]
        roles = [action.role for action in transaction.actions]
        yield name, json.loads(transactions.explain(transaction)), transaction.operation, me, holder, roles


# A site with phone numbers (accounts.phones): the number is the account's partial constraint
# `phone` (UNIQ#PHONE#<E.164>, held while phone_verified), on top of the default fields.
PHONE_SITE = {"ACCOUNTS_SIGNUP_FIELDS": ["email*", "username*", "phone", "password1*", "password2*"]}
NUMBER, OTHER_NUMBER = "+819012345678", "+447911123456"


def _store_change(send):
    """The change ``send()`` makes through :func:`accounts.transactions.change` (the store's
    transaction, security event included), planned instead of sent."""
    change = mock.Mock()
    with mock.patch.object(transactions, "change", change):
        send()
    account, changes = change.call_args.args
    return transactions.plan_change(account, changes, **change.call_args.kwargs)


def phone_transactions(ada, carol):
    """The transactions of phone numbers, planned on a site that has them, by the table's
    names: a sign-up with a number (checked free, not locked), its verification (the
    number's lock taken, the code's tries checked), a change of a verified number (the new
    lock taken and the old released, in one transaction), a sign-up's number changed before
    its code, a removal, a deletion, an address verified by an account holding its number's
    lock, and the audit's repairs of a number's lock."""
    from django.test import override_settings

    from accounts.phones import store as phone_store

    with override_settings(**PHONE_SITE):
        counter = ratelimit.Counter("phone_code", ratelimit.Rule(3, 86400, "key"), "code-id")
        guess = ratelimit.Guess(None, "phone_code", counters=[counter])
        guess.take([])
        checks = [transactions.limit_check(params)(0) for params in guess.conditions()]
        unverified = transactions.changed_copy(ada, {"phone": NUMBER, "phone_verified": False})
        verified = transactions.changed_copy(ada, {"phone": NUMBER, "phone_verified": True})
        carol_verified = transactions.changed_copy(carol, {"phone": NUMBER, "phone_verified": True})
        phones = store.constraint_for("phone")
        planned = {
            "signup_with_phone": transactions.plan_create(
                store.build_signup_account("dan@x.io", "dan", "hash", phone=NUMBER, phone_verified=False)
            ),
            "verify_phone": _store_change(lambda: phone_store.verify(unverified, NUMBER, also=checks)),
            "change_phone": _store_change(lambda: phone_store.verify(verified, OTHER_NUMBER, also=checks)),
            "add_phone": _store_change(lambda: phone_store.verify(ada, OTHER_NUMBER, also=checks)),
            "change_unverified_phone": _store_change(lambda: phone_store.set_unverified(unverified, OTHER_NUMBER)),
            "remove_phone": _store_change(lambda: phone_store.remove(verified)),
            "delete_with_phone": transactions.plan_delete(verified),
            "verify_with_phone": transactions.plan_change(
                carol_verified, {**store.VERIFY_CHANGES, "updated": utcnow()}
            ),
            "claim PHONE": (transactions.plan_claim_lock(verified, phones), verified),
        }
        changed_owner = transactions.changed_copy(ada, {"phone": OTHER_NUMBER, "phone_verified": True})
        for suffix, owner, owner_item in [("changed", ada.PK, changed_owner), ("gone", GONE, None), ("no", None, None)]:
            holder = transactions.changed_copy(carol_verified, {})
            planned[f"transfer_from_{suffix}_owner PHONE"] = (
                transactions.plan_transfer_lock(holder, phones, owner, owner_item),
                holder,
            )
            planned[f"release_from_{suffix}_owner PHONE"] = (
                transactions.plan_release_lock(Account, phones, phones.key_for(NUMBER), owner, owner_item),
                None,
            )
    return planned


def token_transactions(ada):
    """A refresh token's use (the API's JWT strategy): its record's Put and the check that
    its session (of ``ada``) still lives."""
    record = UsedRefreshToken.build("a-jti", int(time.time()) + 3600)
    session = sessions.raw_key(f"{ada.id}.secret")
    check = transactions.session_live_check(dynamo.table_name(), session)
    return {"refresh_token": transactions.plan_refresh(transactions.refresh_token_spend(record), check)}


def _passkey(account, credential_id, **values):
    pk, sk = account.PK, passkey_sort_key(credential_id)
    return Passkey(PK=pk, SK=sk, credential_id=credential_id, name="Laptop", public_key=b"key", **values)


def _sign_in(account, spends):
    """A sign-in's transaction, with the session write the session store hands over: the
    new session of ``account``, deleting the anonymous one that held the half-login."""
    staged = sessions.SessionStore()
    staged["accounts_mfa_stage"] = {"id": account.id}
    staged.create()
    session = sessions.SessionStore(staged.session_key)
    session.cycle_key()
    session[SESSION_KEY] = account.id
    session.delete_with_next_save(dynamo.key("RATE#mfa_attempt#key#300#digest", "RATE"))
    write = session.prepare_write()
    return transactions.plan_sign_in(write.put, write.deletes, sessions.raw_key(staged.session_key), spends)


def _reauthentication(account, spends):
    """A reauthentication's transaction (:func:`accounts.mfa.flows.reauthentication.with_passkey`):
    the logged-in session that held the challenge gets a new key, and its old item is deleted."""
    session = sessions.SessionStore()
    session[SESSION_KEY] = account.id
    session.create()
    spent_session = sessions.raw_key(session.session_key)
    session.cycle_key()
    write = session.prepare_write()
    return transactions.plan_sign_in(write.put, write.deletes, spent_session, spends)


def _limit_checks(account):
    """The ConditionChecks of the second step's limit (``mfa_attempt``) for ``account``, as
    a sign-in with a code sends them, with no attempt read in either window."""
    guess = ratelimit.Guess(RequestFactory().post("/"), "mfa_attempt", key=account.id)
    guess.take([])
    return mfa_store.limit_checks(guess.conditions())


def _code_tries_checks():
    """The ConditionCheck of a mailed code's tries (code_flows.TRIES_RULE), as a
    reauthentication with that code sends it, with no try read."""
    tries = ratelimit.Counter(code_flows.TRIES_ACTION, code_flows.TRIES_RULE, "code-id")
    guess = ratelimit.Guess(RequestFactory().post("/"), code_flows.TRIES_ACTION, counters=[tries])
    guess.take([])
    return mfa_store.limit_checks(guess.conditions())


def second_factor_transactions(ada, carol):
    """The transactions of passkeys and second factors, by the table's names."""
    now = utcnow()
    with_passkey = transactions.changed_copy(ada, {"passkeys": {"cred1"}})
    verified = store.build_signup_account("eve@x.io", "eve", "!", email_verified=True, passkeys={"cred1"})
    unverified = store.build_signup_account("fay@x.io", "fay", "!", email_verified=False, passkeys={"cred1"})
    unverified_carol = transactions.changed_copy(carol, {"passkeys": {"cred1"}})
    return {
        "passkey_register": transactions.plan_change(
            ada, {"passkeys": {"cred1"}, "updated": now}, also=[transactions.owned_put(_passkey(ada, "cred1"))]
        ),
        "passkey_register another": transactions.plan_change(
            with_passkey,
            {"passkeys": {"cred1", "cred2"}, "updated": now},
            also=[transactions.owned_put(_passkey(ada, "cred2"))],
        ),
        "passkey_remove": transactions.plan_change(
            with_passkey,
            {"passkeys": None, "updated": now},
            also=[transactions.owned_delete(with_passkey, passkey_sort_key("cred1"))],
        ),
        "delete_with_passkey": transactions.plan_delete(with_passkey),
        "signup_with_passkey": transactions.plan_create(
            verified, also=[transactions.owned_put(_passkey(verified, "cred1"))]
        ),
        "signup_unverified_with_passkey": transactions.plan_create(
            unverified, also=[transactions.owned_put(_passkey(unverified, "cred1", expires=unverified.expires))]
        ),
        "verify_with_passkey": transactions.plan_change(unverified_carol, {**store.VERIFY_CHANGES, "updated": now}),
        "sign_in_totp": _sign_in(ada, [mfa_store.totp_spend(ada.id, 100), mfa_store.password_as_staged(ada)]),
        "sign_in_totp_under_limit": _sign_in(
            ada, [mfa_store.totp_spend(ada.id, 100), mfa_store.password_as_staged(ada), *_limit_checks(ada)]
        ),
        "sign_in_recovery_code": _sign_in(ada, [mfa_store.recovery_code_spend(ada, "code")]),
        "sign_in_passkey": _sign_in(
            ada,
            [
                mfa_store.passkey_spend(_passkey(ada, "cred1", sign_count=3), {"sign_count": 4}),
                mfa_store.password_as_staged(ada),
            ],
        ),
        "sign_in_passkey_login": _sign_in(
            ada,
            [
                mfa_store.passkey_spend(_passkey(ada, "cred1", sign_count=3), {"sign_count": 4}),
                mfa_store.used_challenge_spend(b"challenge"),
                mfa_store.account_as_signed_in(ada),
            ],
        ),
        "reauthenticate_passkey": _reauthentication(
            ada,
            [
                mfa_store.passkey_spend(_passkey(ada, "cred1", sign_count=0), {"sign_count": 0}),
                mfa_store.account_as_signed_in(ada),
            ],
        ),
        "reauthenticate_code": _reauthentication(ada, [*_code_tries_checks(), mfa_store.account_as_signed_in(ada)]),
        "sign_in_code": _sign_in(ada, [*_limit_checks(ada), mfa_store.account_as_signed_in(ada)]),
        "spend_totp_step_under_limit": transactions.plan_spend(
            [mfa_store.totp_spend(ada.id, 100), *_limit_checks(ada)]
        ),
        # A reauthentication with a recovery code: the code's Update and its security event, with
        # the second step's limit checked (every code typed anywhere draws on it).
        "spend_recovery_code": transactions.plan_spend(
            [
                mfa_store.recovery_code_spend(ada, "code"),
                mfa_store.recovery_code_event(ada, timeline.NO_ORIGIN),
                *_limit_checks(ada),
            ]
        ),
        "spend_passkey": transactions.plan_spend(
            [mfa_store.passkey_spend(_passkey(ada, "cred1", sign_count=3), {"sign_count": 4})]
        ),
    }


def login_code_transactions(ada):
    """The sign-in of a login code (:func:`accounts.login_codes.flows.confirm_code`): the
    account's password, address and phone number as the code was judged against them (an
    account with no number, and one with a number: a code texted to it), and the code's
    tries and the login's limits under their limits, as the confirmation sends them."""
    guess = ratelimit.Guess(
        RequestFactory().post("/"),
        code_flows.TRIES_ACTION,
        counters=[ratelimit.Counter(code_flows.TRIES_ACTION, code_flows.TRIES_RULE, "code-id")],
    )
    guess.take([])
    limits = mfa_store.limit_checks(guess.conditions())
    with_number = transactions.changed_copy(ada, {"phone": NUMBER, "phone_verified": True})
    return {
        "sign_in_code": _sign_in(ada, [codes_store.as_issued(ada), *limits]),
        "sign_in_code texted": _sign_in(with_number, [codes_store.as_issued(with_number), *limits]),
    }


def totp_and_recovery_code_transactions(ada):
    """The enrolment of the authenticator app (ONE change of the account as read, as
    :func:`accounts.mfa.store.enable_totp` sends it, with new recovery codes or keeping the
    account's), its removal as the last second factor (the recovery codes go with it) and
    the regeneration of recovery codes, and the removal of a passkey, the last factor (the
    recovery codes go with it), as the store plans them, by the table's names."""
    codes = {"recovery_codes": {"old"}, "used_recovery_codes": {"spent"}}
    dates = {"recovery_codes_created": utcnow(), "recovery_codes_last_used": utcnow()}
    with_codes = transactions.changed_copy(ada, {**codes, **dates})
    with_totp = transactions.changed_copy(
        with_codes, {"totp_secret": "S" * 32, "totp_created": utcnow(), "totp_step": 99}
    )
    with_passkey_and_codes = transactions.changed_copy(with_codes, {"passkeys": {"cred1"}})
    sends = {
        "totp_disable": lambda: mfa_store.disable_totp(with_totp),
        "totp_enable": lambda: mfa_store.enable_totp(ada, "S" * 32, 100, ["c1", "c2"]),
        "totp_enable_keeping_codes": lambda: mfa_store.enable_totp(with_codes, "S" * 32, 100),
        "recovery_codes_regenerate": lambda: mfa_store.set_recovery_codes(with_codes, ["c3"]),
        "passkey_remove_last_factor": lambda: mfa_store.remove_passkey(with_passkey_and_codes, "cred1"),
    }
    planned = {}
    for name, send in sends.items():
        change = mock.Mock()
        with mock.patch.object(transactions, "change", change):
            send()
        account, changes = change.call_args.args
        planned[name] = transactions.plan_change(account, changes, **change.call_args.kwargs)
    return planned


def _id_token_spend(now):
    """The single-use write of an ID token an app posted, accepted until ``now`` + 360 s."""
    verified = oidc.VerifiedIdentity(
        issuer="https://id.example",
        subject="248289761001",
        email=None,
        email_verified=False,
        preferred_username=None,
        token_digest="d" * 64,
        accepted_until=now + 360,
    )
    return provider_store.id_token_spend(verified)


def _app_sign_in(account, spends):
    """A sign-in's transaction from the app client, whose request held no session."""
    session = sessions.SessionStore()
    session[SESSION_KEY] = account.id
    write = session.prepare_write()
    return transactions.plan_sign_in(write.put, write.deletes, None, spends)


def identity_transactions(ada):
    """The transactions of OpenID Connect identities (accounts.providers), by the table's names:
    with an ID token an app posted, its sign-in from the browser client (the session it came
    with deleted) and the app client (none), and its spend alone (before a half-login, a
    pending sign-up, a link)."""
    now = utcnow()
    spend = _id_token_spend(int(time.time()))
    identity = identity_element("https://id.example", "248289761001")
    other = identity_element("https://login.example", "7")
    linked = transactions.changed_copy(ada, {"oidc_identities": {identity}})
    signup = store.build_signup_account("eve@x.io", "eve", "!", email_verified=True, oidc_identities={identity})
    return {
        "identity_link": transactions.plan_change(ada, {"oidc_identities": {identity}, "updated": now}),
        "identity_link another": transactions.plan_change(
            linked, {"oidc_identities": {identity, other}, "updated": now}
        ),
        "identity_unlink": transactions.plan_change(linked, {"oidc_identities": None, "updated": now}),
        "delete_with_identity": transactions.plan_delete(linked),
        "signup_with_identity": transactions.plan_create(signup),
        "sign_in_id_token": _sign_in(ada, [spend]),
        "sign_in_id_token_app": _app_sign_in(ada, [spend]),
        "spend_id_token": transactions.plan_spend([spend]),
    }


def address_transactions(ada):
    """The transactions of an account's other addresses (``ACCOUNTS_MAX_EMAIL_ADDRESSES``
    above 1), as :mod:`accounts.addresses` builds them and :func:`accounts.store.update_account`
    sends them, by the table's names: planned with the setting on (its constraints are
    declared then), from ``ada`` as read without addresses, and with one waiting for its link
    and one verified."""
    now = utcnow()
    with override_settings(ACCOUNTS_MAX_EMAIL_ADDRESSES=4):
        both = transactions.changed_copy(ada, {"email_addresses": {"work@x.io"}, "unverified_emails": {"home@x.io"}})
        both.lock_keys = {
            **transactions.recorded_keys(ada),
            **transactions.keys_after_change(ada, {"email_addresses": {"work@x.io"}}),
        }

        def planned(item, change):
            changes = {**change.changes, "updated": now}
            return transactions.plan_change(item, changes, unheld=change.unheld, as_read=change.as_read)

        waiting = transactions.changed_copy(ada, {"unverified_emails": {"home@x.io"}})
        return {
            "add_email": planned(ada, addresses.adding(ada, "home@x.io")),
            "verify_email_address first": planned(waiting, addresses.verifying(waiting, "home@x.io")),
            "delete_with_addresses none": transactions.plan_delete(ada),
            "add_email again": planned(both, addresses.adding(both, "more@x.io")),
            "verify_email_address": planned(both, addresses.verifying(both, "home@x.io")),
            "make_primary": planned(both, addresses.making_primary(both, "work@x.io")[1]),
            "remove_email": planned(both, addresses.removing(both, "work@x.io")[1]),
            "remove_email_unverified": planned(both, addresses.removing(both, "home@x.io")[1]),
            "delete_with_addresses": transactions.plan_delete(both),
        }


def explained_operations():
    """The operations ``accounts_explain`` prints (its subcommands), in the table's spelling."""
    parser = ExplainCommand().create_parser("manage.py", "accounts_explain")
    assert isinstance(parser, CommandParser)
    subparsers = next(action for action in parser._actions if action.dest == "operation")
    return {name.replace("-", "_") for name in subparsers.choices}


@pytest.fixture
def stopped_clock(monkeypatch, settings):
    """The clock stopped at a whole second, and the margin at :data:`MARGIN`: every
    transaction is planned at that second. Returns it."""
    settings.ACCOUNTS_CLOCK_SKEW_MARGIN = MARGIN
    now = int(time.time())
    monkeypatch.setattr(time, "time", lambda: float(now))
    return now


@pytest.fixture
def accounts_read(ddb, stopped_clock):
    store.signup("ada@x.io", "ada", "hash")
    store.signup("bob@x.io", "bob", "hash")
    store.signup("carol@x.io", "carol", "hash", email_verified=False)
    return store.get_by_email("ada@x.io"), store.get_by_email("bob@x.io"), store.get_by_username("carol")


@pytest.fixture
def session_writes(ddb, monkeypatch, stopped_clock):
    """The conditions of the session writes the code sends (not transactions: one PutItem
    each), recorded on their way to DynamoDB Local: a new session, then a save of it."""
    sent = recorded_puts(monkeypatch, stopped_clock)
    new = sessions.SessionStore()
    new["cart"] = "tea"
    new.create()
    loaded = sessions.SessionStore(new.session_key)
    loaded["cart"] = "coffee"
    loaded.save()
    created, saved = sent
    return {("session_create", "session", "Put", conjunct) for conjunct in split_and(created)} | {
        ("session_save", "session", "Put", conjunct) for conjunct in split_and(saved)
    }


def recorded_puts(monkeypatch, now):
    """The normalized conditions of the PutItems sent from now on (a list that fills)."""
    sent = []
    send = dynamo.call

    def recording(operation, **params):
        if operation == "put_item":
            sent.append(normalized(params, False, None, now))
        return send(operation, **params)

    monkeypatch.setattr(dynamo, "call", recording)
    return sent


@pytest.fixture
def claim_writes(ddb, monkeypatch, stopped_clock):
    """The condition of an idempotency key's claim (one PutItem), recorded on its way to
    DynamoDB Local."""
    sent = recorded_puts(monkeypatch, stopped_clock)
    idempotency.ClientKey(key="1", operation="email:POST", caller="account:ada", fingerprint="f").claim()
    return {("idempotency_claim", "claim", "Put", conjunct) for condition in sent for conjunct in split_and(condition)}


def test_conditions_the_code_sends_are_the_table_rows_of_today(
    accounts_read, session_writes, claim_writes, stopped_clock
):
    sent = set(session_writes) | set(claim_writes)
    for name, request, operation, me, holder, roles in code_transactions(*accounts_read):
        sent |= shapes(name, request, operation, stopped_clock, me, holder, roles)
    table = {(row.transaction, row.action, row.kind, row.condition) for row in rows() if row.since == "code"}
    assert sorted(sent - table) == [], "sent by the code, missing from protocol/conditions.tsv"
    assert sorted(table - sent) == [], "in protocol/conditions.tsv, not sent by the code"


def test_every_operation_accounts_explain_prints_is_checked(ddb):
    checked = {row.transaction for row in rows() if row.since == "code"}
    assert explained_operations() <= checked


def test_model_defines_and_uses_exactly_the_guards_of_the_table():
    text = model_text()
    defined = guards_defined(text)
    assert len(defined) == len(set(defined))
    assert set(defined) == {row.guard for row in rows()} - {NO_CONDITION}
    unused = [guard for guard in defined if len(re.findall(rf"\b{guard}\b", text)) < 2]
    assert unused == []


def test_table_rows_are_well_formed():
    table = rows()
    assert {row.since for row in table} == {"code"}
    assert {row.kind for row in table} <= {"Put", "Update", "Delete", "ConditionCheck"}
    keys = [(row.transaction, row.action, row.kind, row.condition) for row in table]
    assert len(keys) == len(set(keys))


@pytest.mark.parametrize(
    "expression,conjuncts",
    [
        ("attribute_not_exists (PK)", ["attribute_not_exists (PK)"]),
        ("((a AND b) AND (c OR d))", ["a", "b", "c OR d"]),
        ("(x = read OR attribute_not_exists (PK))", ["x = read OR attribute_not_exists (PK)"]),
    ],
)
def test_conditions_split_into_their_conjuncts(expression, conjuncts):
    assert split_and(expression) == conjuncts
