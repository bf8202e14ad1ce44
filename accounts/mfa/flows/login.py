"""Logging in with a second factor, or with a passkey alone.

After the password, an account with an authenticator app or a passkey is not logged in: its
id is *staged* in the (anonymous, server-side) session for :data:`STAGE_SECONDS`, and the
second step asks for a TOTP code, a recovery code or a passkey. No logged-in session exists
before the second factor. Wrong codes count against ``mfa_attempt`` (per account, or per
browser from a browser the account logged in from: :func:`accounts.devices.second_step_guess`),
whose counters are read with the account in one request; a right code's sign-in checks them
in its transaction.

Every successful second step, and every passkey login, ends in :func:`sign_in`: ONE
transaction writes the new session, deletes the session that held the half-login (guarded:
it must still live, so it is used once), or puts the record that a passkey login's challenge
(signed into a cookie, no session held it) was used, and spends the factor
(the TOTP step, the recovery code, the passkey's signature counter); a code's sign-in also
checks that the counters of ``mfa_attempt`` are still under the limit. It also deletes the
account's least recently seen sessions beyond ``ACCOUNTS_MAX_SESSIONS``, as a password
login's write does: the password step counted them (the staged login keeps their keys); a
passkey login reads the account's partition (account, credential item, sessions) with one
``Query``, having read the credential's lock with its session.
"""

import logging
import time

from django.contrib.auth import login
from django.contrib.auth.models import AnonymousUser
from django.utils.crypto import constant_time_compare

from ... import devices, dynamo, sessions, timeline
from ...exceptions import Busy, OverLimit, StaleItem, Unavailable
from ...internal.flows.login import BACKEND, may_log_in
from ...models import User
from ...tables import ACCOUNT_PREFIX, malformed_attributes
from ...uniqueness import LOCK_SORT_KEY
from ...verification import password_stamp
from .. import passkeys, recovery_codes, store, totp, trust
from ..notices import recovery_code_used

STAGE_SESSION_KEY = "accounts_mfa_stage"
STAGE_SECONDS = 300
RATE_LIMIT_ACTION = "mfa_attempt"

logger = logging.getLogger("accounts.mfa")

# How a second step ended. ``damaged``: the account's second factor is stored with the wrong
# type, and no code or passkey is judged until staff repair it.
SIGNED_IN, WRONG_CODE, ALREADY_USED, EXPIRED, DAMAGED = "signed_in", "wrong_code", "already_used", "expired", "damaged"
# A right recovery code spent already, seen so in the account as read: nothing sent, the
# half-login stays.
USED_CODE = "used_code"
# What the judging of a code returns for the time step its enrolment spent.
STEP_SPENT = object()


def can_log_in(account):
    """Whether ``account`` may log in at all (active, and verified when that is mandatory)."""
    return account is not None and account.is_active and may_log_in(account)


def needs_second_step(user, request=None):
    """Whether the login of ``user`` (its first step passed) must go through the second
    step: its address is verified and it has an authenticator app or a passkey, and the
    browser of ``request`` is not trusted for the account as it is now
    (:mod:`accounts.mfa.trust`, ``ACCOUNTS_MFA_TRUST_ENABLED``). A damaged
    ``email_verified`` or second factor counts as verified and present (fail closed)."""
    account = user.account
    if account is None or not store.has_second_factor(account):
        return False
    if account.email_verified is False and "email_verified" not in malformed_attributes(account):
        return False
    return request is None or not trust.is_trusted(request, account)


def _refuses_damaged(account):
    """Whether ``account``'s second factor is damaged, logged as an error when it is: such an
    account is refused at the second step, whatever it sends."""
    damaged = store.damaged_second_factor(account)
    if damaged:
        logger.error(
            "Second step refused for account %s: %s stored with the wrong type (repair it with accounts_audit).",
            account.id,
            ", ".join(damaged),
        )
    return bool(damaged)


def stage(request, user, redirect_to):
    """Stage the login of ``user`` (password checked) for the second step: the session
    remembers who, until when, where to go next, whether it has a passkey to offer, the
    sessions the login will end (beyond ``ACCOUNTS_MAX_SESSIONS``, as counted by the
    password step's read of the account), the stamp of the password it was staged with
    (:func:`staged_for`), and the authenticator types that can answer it (the API's
    ``types``, :func:`~accounts.mfa.store.authenticator_types`), whatever the first step was
    (a password, a mailed code, a provider). Nothing logs in yet."""
    ends, slot = [], None
    if _counts_sessions(request):
        # The password was counted by login_failed: the half-login's session is paid for.
        request.session.limited_elsewhere()
        ends = request.session.beyond_limit_at_login(user.pk)
        slot = request.session.slot_at_login(user.pk)
    request.session[STAGE_SESSION_KEY] = {
        "id": user.pk,
        "expires": int(time.time()) + STAGE_SECONDS,
        "next": redirect_to,
        "passkeys": bool(user.account.passkeys),
        "ends": ends,
        "stamp": password_stamp(user.account),
        "slot": slot,
        "types": list(store.authenticator_types(user.account)),
    }


def staged_for(found: dict, account) -> bool:
    """Whether ``account`` (as read now) may finish the staged login ``found``: it may log
    in, and its password is still the one the login was staged with. A password changed or
    reset since ends every half-login begun with the old one, in every browser: whoever
    typed it (an intruder, say) cannot finish with a second factor after the owner changed
    it. Staged logins keep no item of the account's to delete, so the stamp is what dies."""
    return can_log_in(account) and constant_time_compare(found.get("stamp", ""), password_stamp(account))


def _counts_sessions(request):
    return isinstance(request.session, sessions.SessionStore)


def staged(request):
    """The staged login ``{"id", "expires", "next", "passkeys", "ends", "slot", "types"}``, or ``None``
    (none, or expired)."""
    found = request.session.get(STAGE_SESSION_KEY)
    if not found or found["expires"] < time.time():
        return None
    return found


def staged_account(request):
    """The account of the staged login (one consistent read), or ``None``."""
    found = staged(request)
    if found is None:
        return None
    account, _ = store.read_account(found["id"])
    return account if staged_for(found, account) else None


def sign_in(request, user, spends, ends=(), slot=None):
    """Log ``user`` in, spending ``spends`` (the factor's single-use writes) in the same
    transaction as the new session, which also deletes the session this request came with
    (the half-login, or the passkey challenge), guarded so that it is used once, and the
    sessions at ``ends`` (``[PK, SK]`` pairs: those holding no session slot), and takes the
    session slot ``slot`` (``[number, holder as read]``, as the password step chose it; by
    default one chosen from this request's read of the partition, see
    :meth:`accounts.sessions.SessionStore.slot_at_login`), guarded by its holder as read:
    ``ACCOUNTS_MAX_SESSIONS`` is a bound.

    Raises :class:`~accounts.exceptions.StaleItem` when the session or a factor was used
    meanwhile: nothing was written, and this request's session is emptied. With another
    session engine than :mod:`accounts.sessions`, the factor is spent first, then the
    session is saved as usual.
    """
    if not isinstance(request.session, sessions.SessionStore):
        store.spend(*spends)
        request.session.pop(STAGE_SESSION_KEY, None)
        login(request, user, backend=BACKEND)
        return
    # No session held a passkey login's challenge when the visitor had none (it is signed
    # into a cookie): its spends then include the record that the challenge was used.
    session_key = request.session.session_key
    spent_session = sessions.raw_key(session_key) if session_key else None
    request.session.end_with_login(ends, slot)
    # The staged login is done: the logged-in session does not carry it on.
    request.session.pop(STAGE_SESSION_KEY, None)
    login(request, user, backend=BACKEND)
    session = request.session
    write = session.prepare_write()
    try:
        store.sign_in(write.put, write.deletes, spent_session, spends, write.slot_put, write.event_put)
    except BaseException:
        session.discard()
        request.user = AnonymousUser()
        raise
    session.written(write)


def authenticate_with_code(request, code):
    """The second step with a TOTP code or a recovery code; returns ``(outcome, user)``.

    ``signed_in``; ``wrong_code`` (counted against ``mfa_attempt``); ``used_code`` (a right
    recovery code that the account as read shows used: not counted, the half-login stays);
    ``already_used`` (the code, or this half-login, was used meanwhile, or is being used by
    another request at this very moment, or the code is the one that turned the app on:
    nothing written, not counted, log in again); ``expired``; ``damaged`` (a second factor
    of the account is stored with the wrong type: nothing judged, logged).

    Raises :class:`~accounts.ratelimit.RateLimited` past the limit, for a wrong code and a
    right one alike: wrong codes are counted by guarded writes, and a right code signs in
    only if its transaction finds every counter still under the limit, so under any
    concurrency at most the limit of codes get another answer. Raises
    :class:`~accounts.exceptions.Unavailable` (the 503 page) when DynamoDB is too busy to
    count a wrong code or to sign in: a code is never judged aloud without its count.

    Costs the session's read, one read of the account with its counters, then a wrong code
    one guarded ``UpdateItem`` per counter, a right one the sign-in's transaction.
    """
    found = staged(request)
    if found is None:
        return EXPIRED, None
    guess = devices.second_step_guess(request, found["id"])
    account, counters = store.read_account(found["id"], *guess.keys)
    guess.take(counters)
    if not staged_for(found, account):
        return EXPIRED, None
    if _refuses_damaged(account):
        return DAMAGED, None
    guess.check()
    spends, used_recovery_code = _spends_for_code(account, totp.normalize(code), timeline.origin_of(request))
    if spends is STEP_SPENT:
        # The enrolment's own code: spent, as a step spent by a sign-in is (log in again).
        return ALREADY_USED, None
    if spends is None:
        # A right code that is spent already (it lost a race, or is typed again): not a
        # guess, so not counted, and told as such.
        return USED_CODE, None
    if not spends:
        guess.fail()
        return WRONG_CODE, None
    user = User.from_account(account)
    half_login = request.session.session_key
    try:
        sign_in(
            request, user, [*spends, *store.limit_checks(guess.conditions())], found.get("ends", ()), found.get("slot")
        )
    except OverLimit as error:
        _keep_half_login(request, half_login)
        raise guess.refused(error.counters) from error
    except Busy as error:
        _keep_half_login(request, half_login)
        raise Unavailable(f"DynamoDB is busy; the second step was not judged: {error}") from error
    except StaleItem:
        return ALREADY_USED, None
    if used_recovery_code:
        recovery_code_used(request, account, len(account.recovery_codes or ()) - 1)
    return SIGNED_IN, user


def _keep_half_login(request, session_key):
    """After a right code's sign-in was refused as a whole (over the limit, or DynamoDB
    busy), this request's session is the half-login again, as stored (the failed sign-in
    emptied this request's copy, which would drop its cookie): the answer is then exactly a
    wrong code's (429, or 503), and nothing in it tells that the code was right."""
    request.session = type(request.session)(session_key)


def _spends_for_code(account, code, origin):
    """``(spends, is a recovery code)`` for a typed code: ``([], False)`` when it is wrong,
    ``(STEP_SPENT, False)`` for the step the enrolment spent, ``(None, True)`` for a used
    recovery code. A recovery code's use is a security event, from ``origin``."""
    if account.totp_secret and totp.looks_like_a_code(code):
        step = totp.matching_step(account.totp_secret, code)
        if step is None:
            return [], False
        if store.step_spent_at_enrolment(account, step):
            return STEP_SPENT, False
        return [store.totp_spend(account.id, step), store.password_as_staged(account)], False
    typed = recovery_codes.normalize(code)
    if store.holds_recovery_code(account, typed):
        return [store.recovery_code_spend(account, code), store.recovery_code_event(account, origin)], True
    if store.used_recovery_code(account, typed):
        return None, True
    return [], False


def authenticate_with_passkey(request, credential_json):
    """The second step with a passkey of the staged account; returns ``(outcome, user)`` as
    :func:`authenticate_with_code`. Raises :class:`~accounts.mfa.passkeys.PasskeyRefused`."""
    found = staged(request)
    if found is None:
        return EXPIRED, None
    challenge = passkeys.take_challenge(request, passkeys.SECOND_FACTOR)
    assertion = passkeys.read_assertion(credential_json)
    account, passkey = store.read_for_passkey(found["id"], assertion.credential_id)
    if not staged_for(found, account):
        return EXPIRED, None
    if _refuses_damaged(account):
        return DAMAGED, None
    return _sign_in_with_passkey(
        request,
        account,
        passkey,
        assertion,
        challenge,
        require_user_verification=False,
        ends=found.get("ends", ()),
        slot=found.get("slot"),
        also=[store.password_as_staged(account)],
    )


def read_passkey_answer(request, credential_json):
    """The passkey login's answer, parsed (nothing checked yet), and its credential's lock
    asked to be read with the session: call it before anything touches the session or
    ``request.user``. Raises :class:`~accounts.mfa.passkeys.PasskeyRefused` when malformed."""
    assertion = passkeys.read_assertion(credential_json)
    if _counts_sessions(request):
        request.session.read_along([dynamo.key(store.passkey_lock_key(assertion.credential_id), LOCK_SORT_KEY)])
    return assertion


def login_with_passkey(request, assertion):
    """A login with a passkey alone (no name, no password: a discoverable credential, user
    verification required), given its answer from :func:`read_passkey_answer`; returns
    ``(outcome, user)``, the outcome ``signed_in``, ``already_used`` or ``expired``. Raises
    :class:`~accounts.mfa.passkeys.PasskeyRefused` when the passkey is not one of an account
    that may log in, or its answer is not valid.

    Costs ONE read of the session (the challenge) with the credential's lock, ONE ``Query``
    of the account's partition (the passkey names its account: the user handle, else the
    lock does): the account, its credential item and its sessions, of which the login ends
    those beyond ``ACCOUNTS_MAX_SESSIONS``; and the sign-in's transaction.
    """
    challenge = passkeys.take_challenge(request, passkeys.LOGIN)
    read_along = request.session.read_along_items() if _counts_sessions(request) else None
    owner = store.credential_lock_owner(assertion.credential_id, read_along)
    account_id = assertion.user_handle or (owner or "").removeprefix(ACCOUNT_PREFIX)
    if owner and account_id != owner.removeprefix(ACCOUNT_PREFIX):
        # A passkey imported from another site (accounts_import) answers with the user handle
        # it was registered with there, which its credential item records; any other
        # handle that is not the lock's owner is refused below (WebAuthn 7.2, step 6).
        account_id = owner.removeprefix(ACCOUNT_PREFIX)
        handle = assertion.user_handle
    else:
        handle = None
    if not account_id:
        raise passkeys.PasskeyRefused(passkeys.UNKNOWN, "no account holds this credential")
    account, passkey, others = store.read_partition_for_passkey(account_id, assertion.credential_id)
    if account is None or owner != account.PK:
        # The lock is the one authority on whose credential this is (the handle is a claim).
        raise passkeys.PasskeyRefused(passkeys.UNKNOWN, "the credential's lock names another account")
    if handle is not None and (passkey is None or passkey.user_handle != handle):
        raise passkeys.PasskeyRefused(passkeys.UNKNOWN, "the user handle names another account")
    if not can_log_in(account):
        raise passkeys.PasskeyRefused(passkeys.UNKNOWN, "the account may not log in")
    if _counts_sessions(request):
        request.session.note_account_items(others)
    try:
        return _sign_in_with_passkey(
            request,
            account,
            passkey,
            assertion,
            challenge,
            require_user_verification=True,
            also=[store.used_challenge_spend(challenge), store.account_as_signed_in(account)],
        )
    except passkeys.PasskeyRefused:
        # The same answer sent twice: the other request signed in first and stored the
        # counter this one repeats. Its record of the challenge says so.
        if store.challenge_was_used(challenge):
            return ALREADY_USED, None
        raise


def _sign_in_with_passkey(
    request, account, passkey, assertion, challenge, *, require_user_verification, ends=(), slot=None, also=()
):
    """Sign in with a verified passkey answer; ``ends`` and ``slot``: the sessions the
    staged login counted to end and the slot it chose (a passkey login's come from its read
    of the partition); ``also``: single-use writes beside the passkey's counter (a signed
    challenge's record)."""
    if passkey is None or passkey.credential_id not in (account.passkeys or ()):
        raise passkeys.PasskeyRefused(passkeys.UNKNOWN, "not a passkey of this account")
    changes = passkeys.verify_assertion(
        request, assertion, challenge, passkey, require_user_verification=require_user_verification
    )
    user = User.from_account(account)
    try:
        sign_in(request, user, [store.passkey_spend(passkey, changes), *also], ends, slot)
    except (StaleItem, Busy):
        return ALREADY_USED, None
    return SIGNED_IN, user
