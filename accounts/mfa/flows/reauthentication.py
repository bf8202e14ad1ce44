"""Reauthentication: a fresh proof of who someone is before sensitive changes.

The session records when its person last proved who they are (:data:`AUTHENTICATED_AT_SESSION_KEY`):
a login does, and so does reauthentication. Sensitive pages
(:class:`ReauthenticationRequiredMixin`: adding or removing an authenticator, changing the
email or the password, deleting the account, logging out the other sessions) send anyone
whose proof is older than ``ACCOUNTS_REAUTHENTICATION_TIMEOUT`` to that page first.

It offers what the account has (:func:`offered`), never a way it does not have: its password,
its passkey, a code of its authenticator app, a code mailed to its verified address. One
function per way (:func:`with_password`, :func:`with_passkey`, :func:`with_totp`,
:func:`with_code`), which the pages and the API both call, and a recovery code
(:func:`with_recovery_code`), which the API's ``auth/2fa/reauthenticate`` takes as
django-allauth's does. Each try of a password or a mailed code counts against
``reauthenticate``, per account; a code of the authenticator app or a recovery code against
the second step's ``mfa_attempt`` instead (every code typed anywhere draws on that one
budget, with its daily cap). Each proof but the password is used once:

1. a passkey's challenge and a mailed code live in the session, and the proof's ONE
   transaction deletes that session ``[expires >= :now]`` as it puts its successor (the
   session's key changes): of requests that read the same session, one commits;
2. a TOTP code spends its time step, as a login's second step does (the record of the step,
   ``[attribute_not_exists(PK) OR expires < :now - margin]``): a code used to log in, or the
   enrolment's, cannot be used again here, nor the other way round;
3. a recovery code is spent as at a login's second step (its digest leaves the account's
   unused codes, guarded ``contains``), with its security event and the notice to the
   account's address;
4. a mailed code is tried at most :data:`~accounts.login_codes.flows.MAX_TRIES` times (its
   own counter, checked again in the proof's transaction) and lives
   :data:`~accounts.login_codes.flows.CODE_SECONDS`.
"""

import secrets
import time
from collections.abc import Callable
from urllib.parse import urlencode

from django.http import HttpRequest
from django.shortcuts import redirect, resolve_url
from django.urls import reverse
from django.utils.crypto import constant_time_compare

from ... import devices, dynamo, ratelimit, sessions, timeline
from ... import store as account_store
from ...app_settings import app_settings
from ...exceptions import Busy, OverLimit, StaleItem, Unavailable
from ...login_codes import flows as login_codes
from ...models import User
from ...verification import SENT, send_mail
from .. import passkeys, recovery_codes, store, totp
from ..notices import recovery_code_used

AUTHENTICATED_AT_SESSION_KEY = "accounts_authenticated_at"
RATE_LIMIT_ACTION = "reauthenticate"
CODE_SESSION_KEY = "accounts_reauthentication_code"

# The ways to reauthenticate (:func:`offered`).
PASSWORD, PASSKEY, TOTP, CODE = "password", "passkey", "totp", "code"
# How a try with a code ended: ``already_used`` (a right code used meanwhile, or before:
# nothing written), ``expired`` (no mailed code pending in this session).
REAUTHENTICATED, WRONG_CODE, ALREADY_USED, EXPIRED = "reauthenticated", "wrong_code", "already_used", "expired"


def record(request):
    """Note that the person of ``request`` has just proved who they are."""
    request.session[AUTHENTICATED_AT_SESSION_KEY] = int(time.time())


def record_login(sender, request, user, **kwargs):
    """``user_logged_in`` receiver: a login is a fresh authentication."""
    if hasattr(request, "session"):
        record(request)


def is_fresh(request):
    """Whether the person of ``request`` proved who they are within the timeout."""
    at = request.session.get(AUTHENTICATED_AT_SESSION_KEY)
    return at is not None and time.time() - at <= app_settings.REAUTHENTICATION_TIMEOUT


def offered(user: User) -> tuple[str, ...]:
    """The ways ``user`` can reauthenticate: a password only when it has a usable one, a
    passkey or a TOTP code only when it has one, a mailed code only to a verified address."""
    account = user.account
    found = [PASSWORD] if user.has_usable_password() else []
    if account is not None:
        found += [PASSKEY] if account.passkeys else []
        found += [TOTP] if account.totp_secret else []
        mailable = account.email and account_store.is_verified(account)
        found += [CODE] if mailable and app_settings.REAUTHENTICATION_BY_CODE_ENABLED else []
    return tuple(found)


def code_recipients(user: User) -> list[dict[str, str]]:
    """Where :func:`mail_code` mails a code to ``user`` (django-allauth's recipients of its
    ``reauthenticate_by_code`` flow): the account's verified address, else nowhere."""
    return [{"email": user.account.email}] if CODE in offered(user) else []


def count_password_check(request: HttpRequest | None, user) -> None:
    """Count one check of ``user``'s password against ``reauthenticate``, per account: this
    page's and every change form's current-password field share the one count, so a session
    cannot guess the password on a form the limit does not watch. Raises
    :class:`~accounts.ratelimit.RateLimited` (the password is then not checked)."""
    ratelimit.consume(request, RATE_LIMIT_ACTION, user=user.pk)


def with_password(request, password):
    """Reauthenticate with the account's password. Returns whether it was right; each try
    counts against ``reauthenticate`` (raises :class:`~accounts.ratelimit.RateLimited`)."""
    count_password_check(request, request.user)
    if not request.user.check_password(password):
        return False
    record(request)
    return True


def with_passkey(request, credential_json):
    """Reauthenticate with a passkey of the account (user verification required). Raises
    :class:`~accounts.mfa.passkeys.PasskeyRefused` or
    :class:`~accounts.exceptions.StaleItem` (the challenge or the passkey was used
    meanwhile: this request's session is then emptied).

    The challenge is used once whatever the passkey's counter (a synced passkey reports 0
    every time, so its counter's guard lets one answer through any number of times): the
    session that holds it gets a new key, and ONE transaction puts the new session, deletes
    the old one ``[expires >= :now]`` and records the passkey's use ``[sign_count as read]``
    (:func:`accounts.transactions.plan_sign_in`, as a sign-in). Of requests that read the
    same challenge, only the first deletes its session; the others are cancelled whole. With
    another session engine the use is recorded alone, and only the counter guards it.
    """
    challenge = passkeys.take_challenge(request, passkeys.REAUTHENTICATE)
    assertion = passkeys.read_assertion(credential_json)
    account, passkey = store.read_for_passkey(request.user.pk, assertion.credential_id)
    if account is None or passkey is None or passkey.credential_id not in (account.passkeys or ()):
        raise passkeys.PasskeyRefused(passkeys.UNKNOWN, "not a passkey of this account")
    changes = passkeys.verify_assertion(request, assertion, challenge, passkey, require_user_verification=True)
    _record_spending(request, account, [store.passkey_spend(passkey, changes)])


def _record_spending(request: HttpRequest, account, spends: list) -> None:
    """Record the proof, spending the session it was held in and ``spends`` in ONE
    transaction (:func:`accounts.transactions.plan_sign_in`): the session gets a new key,
    and its old item is deleted ``[expires >= :now]``. The transaction also checks that
    ``account`` is still there and active as read (:func:`accounts.mfa.store.account_as_signed_in`):
    a deactivation or deletion commits, then ``end_sessions`` Queries the account's sessions
    and deletes those it found; a reauthentication committing between the two would put a
    session under a new key that the deletion misses, and a reactivation would let it in.
    Raises :class:`~accounts.exceptions.StaleItem` (this request's session is then emptied)
    when another request used it, or a spend, first, or the account is no longer active;
    with another session engine, ``spends`` are sent alone."""
    spends = [*spends, store.account_as_signed_in(account)]
    if not isinstance(request.session, sessions.SessionStore):
        store.spend(*spends)
        record(request)
        return
    spent_session = sessions.raw_key(request.session.session_key)
    request.session.cycle_key()
    record(request)
    write = request.session.prepare_write()
    try:
        store.sign_in(write.put, write.deletes, spent_session, spends)
    except BaseException:
        request.session.discard()
        raise
    request.session.written(write)


def with_totp(request: HttpRequest, code: str) -> str:
    """Reauthenticate with a code of the account's authenticator app: ``reauthenticated``,
    ``wrong_code`` (also when the account has no app), or ``already_used`` (its time step
    was spent: by a login's second step, the enrolment, or another reauthentication).

    A code typed here is a guess at the same secret as the second step's, so it draws on
    the same budget, ``mfa_attempt`` (:func:`accounts.devices.second_step_guess`: the
    account's counters, or this browser's own where its device cookie names the account),
    with its daily cap: a stolen session cannot guess here at a rate the second step
    refuses. Only a wrong code counts; a right one spends its step in ONE transaction that
    checks each counter still under its limit. Raises
    :class:`~accounts.ratelimit.RateLimited` past the limit, for a wrong code and a right
    one alike (the code is then not judged aloud), and
    :class:`~accounts.exceptions.Unavailable` when DynamoDB is too busy to write it.

    Costs the account and its counters in one ``BatchGetItem``, then a wrong code one
    guarded ``UpdateItem`` per counter, a right one the spending transaction."""
    guess = devices.second_step_guess(request, str(request.user.pk))
    account, counters = store.read_account(request.user.pk, *guess.keys)
    guess.take(counters)
    guess.check()
    step = totp.matching_step(account.totp_secret, totp.normalize(code)) if account and account.totp_secret else None
    if step is None:
        guess.fail()
        return WRONG_CODE
    if store.step_spent_at_enrolment(account, step):
        return ALREADY_USED
    if not _spent(
        guess, lambda: store.spend(store.totp_spend(account.id, step), *store.limit_checks(guess.conditions()))
    ):
        return ALREADY_USED
    record(request)
    return REAUTHENTICATED


def _spent(guess: ratelimit.Guess, spend: Callable[[], object]) -> bool:
    """Send ``spend`` (a code's spend with the guess's counters checked under their limits):
    ``False`` when the code was spent already. Raises :class:`~accounts.ratelimit.RateLimited`
    when a counter went past its limit meanwhile, :class:`Unavailable` when DynamoDB is busy."""
    try:
        spend()
    except OverLimit as error:
        raise guess.refused(error.counters) from error
    except Busy as error:
        raise Unavailable(f"DynamoDB is busy; the code was not judged: {error}") from error
    except StaleItem:
        return False
    return True


def with_recovery_code(request: HttpRequest, code: str) -> str:
    """Reauthenticate with one of the account's recovery codes (django-allauth's
    ``auth/2fa/reauthenticate`` takes them): ``reauthenticated`` (the code is spent, and the
    account's address told), ``wrong_code``, or ``already_used``.

    A recovery code is a second factor as the app's codes are: it draws on the same budget,
    ``mfa_attempt``, as :func:`with_totp` (a wrong code counts; a right one is spent in ONE
    transaction that checks each counter still under its limit). Raises
    :class:`~accounts.ratelimit.RateLimited` past the limit (the code is then not judged
    aloud) and :class:`~accounts.exceptions.Unavailable` when DynamoDB is too busy."""
    guess = devices.second_step_guess(request, str(request.user.pk))
    account, counters = store.read_account(request.user.pk, *guess.keys)
    guess.take(counters)
    guess.check()
    typed = recovery_codes.normalize(code)
    if account is None or not store.holds_recovery_code(account, typed):
        if account is not None and store.used_recovery_code(account, typed):
            return ALREADY_USED
        guess.fail()
        return WRONG_CODE
    checks = store.limit_checks(guess.conditions())
    if not _spent(
        guess, lambda: store.spend_recovery_code(account, typed, *checks, origin=timeline.origin_of(request))
    ):
        return ALREADY_USED
    record(request)
    recovery_code_used(request, account, len(account.recovery_codes or ()) - 1)
    return REAUTHENTICATED


def mail_code(request: HttpRequest, *, resends: int = 0) -> bool:
    """Mail a new code to the signed-in account's verified address, for :func:`with_code`
    in this session (it replaces a code asked for before: the old one is wrong from then
    on, and the new one has tries of its own). Returns whether it was sent: not to an
    account without a verified address, nor past the address's ``mail`` limit (a code
    mailed before then stays the one to type). ``resends``: how many codes this one
    replaces by :func:`resend_code`."""
    user = request.user
    if CODE not in offered(user):
        return False
    code, code_id = login_codes.new_code(), secrets.token_urlsafe(16)
    context = {"account": user.account, "code": code, "minutes": login_codes.CODE_SECONDS // 60}
    if send_mail(request, "reauthentication_code", user.account.email, context) != SENT:
        return False
    request.session[CODE_SESSION_KEY] = {
        "code_id": code_id,
        "digest": login_codes.code_digest(code_id, code),
        "expires": int(time.time()) + login_codes.CODE_SECONDS,
        "resends": resends,
    }
    return True


def can_resend(request: HttpRequest) -> bool:
    """Whether this session holds a mailed code still valid that may be replaced by a new
    one (:func:`resend_code`): at most :data:`~accounts.login_codes.flows.MAX_RESENDS`
    times, as a login's code (asking anew starts over, as django-allauth's)."""
    return code_pending(request) and request.session[CODE_SESSION_KEY].get("resends", 0) < login_codes.MAX_RESENDS


def resend_code(request: HttpRequest) -> bool:
    """Mail a new code in place of the pending one (:func:`can_resend`): whether it was
    sent (else the pending code stays the one to type)."""
    return mail_code(request, resends=request.session[CODE_SESSION_KEY].get("resends", 0) + 1)


def code_pending(request: HttpRequest) -> bool:
    """Whether this session holds a mailed code still valid (none counts while
    ``ACCOUNTS_REAUTHENTICATION_BY_CODE_ENABLED`` is off: a code mailed before it was turned
    off no longer works)."""
    found = request.session.get(CODE_SESSION_KEY)
    return app_settings.REAUTHENTICATION_BY_CODE_ENABLED and bool(found) and found["expires"] >= time.time()


def with_code(request: HttpRequest, code: str) -> str:
    """Reauthenticate with the code :func:`mail_code` mailed: ``reauthenticated``,
    ``wrong_code`` (counted against the code's tries), ``already_used`` (used meanwhile by
    another request: nothing written) or ``expired``. Each try counts against
    ``reauthenticate``; past it or past the code's tries raises
    :class:`~accounts.ratelimit.RateLimited`, for a wrong code and a right one alike."""
    if not code_pending(request):
        return EXPIRED
    found = request.session[CODE_SESSION_KEY]
    count_password_check(request, request.user)
    tries = ratelimit.Counter(login_codes.TRIES_ACTION, login_codes.TRIES_RULE, found["code_id"])
    guess = ratelimit.Guess(request, login_codes.TRIES_ACTION, counters=[tries])
    guess.take(dynamo.batch_get(guess.keys))
    guess.check()
    if not constant_time_compare(
        login_codes.code_digest(found["code_id"], login_codes.normalize(code)), found["digest"]
    ):
        guess.fail()
        return WRONG_CODE
    held_in = request.session.session_key
    del request.session[CODE_SESSION_KEY]
    try:
        _record_spending(request, request.user.account, store.limit_checks(guess.conditions()))
    except OverLimit as error:
        # Refused as a whole: the session is as stored (the failed write emptied this
        # request's copy, which would drop its cookie), and the answer a wrong code's.
        request.session = type(request.session)(held_in)
        raise guess.refused(error.counters) from error
    except StaleItem:
        return ALREADY_USED
    return REAUTHENTICATED


def reauthenticate_url(request, back_to: str | None = None) -> str:
    """The reauthentication page, coming back to ``back_to``, else to this page (a GET) or
    to the profile."""
    if back_to is None:
        back_to = request.get_full_path() if request.method == "GET" else resolve_url("accounts:profile")
    return f"{reverse('accounts:mfa:reauthenticate')}?{urlencode({'next': back_to})}"


class ReauthenticationRequiredMixin:
    """A view for signed-in people who proved who they are within
    ``ACCOUNTS_REAUTHENTICATION_TIMEOUT``; others go to the reauthentication page first
    (anonymous visitors are left to the login-required check)."""

    def dispatch(self, request, *args, **kwargs):
        if request.user.is_authenticated and not is_fresh(request):
            return redirect(reauthenticate_url(request))
        return super().dispatch(request, *args, **kwargs)
