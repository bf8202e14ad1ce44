"""Email verification: apply a verification key (the mailed link's) or code (with
``ACCOUNTS_EMAIL_VERIFICATION_BY_CODE_ENABLED``), discard the sign-up it names, and send
the link or a new code again; both front ends call these. Every mailed code is judged here
(:func:`judge_code`): an email change's and a password reset's too."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, replace

from django.http import HttpRequest
from django.utils.crypto import constant_time_compare

from ... import address_links, email_codes, ratelimit, store, timeline, verification
from ...app_settings import app_settings
from ...exceptions import OverLimit
from ...models import User
from ...pending import PENDING_SESSION_KEY, pending_account_id, pending_method, remember_pending
from ...tables import Account
from ...transactions import Action
from . import login as login_flow

# What a resend found instead of a mail to send: no sign-up pending in this session; the
# pending sign-up gone (expired, or discarded from its link); its address already verified.
NOTHING_PENDING, GONE, ALREADY_VERIFIED = "nothing_pending", "gone", verification.ALREADY_VERIFIED
CONFIRMED = frozenset({verification.VERIFIED, verification.ALREADY_VERIFIED})
# How a typed code was judged, beside the outcomes of a key: no code is pending in this
# session (none asked, expired, or its tries used up); a wrong code (counted), whose tries
# are left, or the last one (the code then stops working: ask for a new one).
NO_CODE, WRONG_CODE, NO_TRIES_LEFT = "no_code", "wrong_code", "no_tries_left"
RIGHT_CODE = "right_code"


@dataclass(frozen=True)
class KeyOutcome:
    """What applying a key did: ``outcome`` (one of :mod:`accounts.verification`'s:
    ``verified``, ``already_verified``, ``discarded``, ``changed``, ``taken``, ``stale``,
    ``password_changed``, ``busy``, ``invalid``) and the account it named, as read."""

    outcome: str
    account: Account | None = None
    #: What this session's login became once its own pending sign-up was verified
    #: (:func:`finish_pending_signup`): ``None`` when the key was not that sign-up's.
    login: login_flow.LoginOutcome | None = None

    @property
    def confirmed(self) -> bool:
        """Whether the address of :attr:`account` is now verified (by this key or before)."""
        return self.outcome in CONFIRMED


@dataclass(frozen=True)
class Resend:
    """What became of a request to send the verification link again: ``outcome`` is the
    mail's (``sent``, ``too_soon``, ``failed``) or why none was sent (:data:`NOTHING_PENDING`,
    :data:`GONE`, :data:`ALREADY_VERIFIED`); ``email``: the address it is (or was) for."""

    outcome: str
    email: str = ""
    account: Account | None = None


def read_key(*, key: str) -> tuple[str, Account | None] | None:
    """What a verification ``key`` names, for its page before a button is pressed:
    ``(email, account)``, the account as read now (one GetItem; ``None`` when it is gone,
    holds another address, or has a new password since); ``None`` for a forged or expired key."""
    return verification.claimed_account(key)


def is_link_key(key: str) -> bool:
    """Whether ``key`` is a mailed link's (a verification's, an email change's or an added
    address's, signed and unexpired), not a code; reads nothing."""
    return (
        verification.read_verification_token(key) is not None
        or verification.read_email_change_token(key) is not None
        or address_links.read_address_token(key) is not None
    )


def verify_email(request: HttpRequest, *, key: str, end_pending: bool) -> KeyOutcome:
    """Verify the address a verification ``key`` names (one GetItem, one transaction).

    ``end_pending``: once the address is verified, this session stops keeping its sign-up
    pending (the API: its ``verify_email`` flow is done). The HTML pages keep it, so that
    "send it again" on the "check your inbox" page says the address is confirmed.
    """
    outcome, account = verification.confirm_email(key, origin=timeline.origin_of(request))
    verified = KeyOutcome(outcome, account)
    if end_pending:
        return finish_pending_signup(request, verified)
    return verified


def finish_pending_signup(request: HttpRequest, verified: KeyOutcome) -> KeyOutcome:
    """Once the address of the sign-up this session keeps pending is verified, that login
    goes on, as django-allauth's ``verify_email`` stage exits: the session stops keeping the
    sign-up pending and is logged in, or staged for the account's second factor.

    Only this session's own sign-up (made here, or an unverified login here with its right
    password) goes on: a key opened anywhere else verifies and logs nobody in."""
    account = verified.account
    if not verified.confirmed or account is None or pending_account_id(request) != account.id:
        return verified
    method = pending_method(request) or {"method": "password"}
    del request.session[PENDING_SESSION_KEY]
    user = User.from_account(account)
    if method.get("method") == "mfa":
        # Signed up with a passkey: a proof a second step would only ask for again.
        login_flow.log_in(request, user, method=method)
        return replace(verified, login=login_flow.LoginOutcome(login_flow.DONE, user=user))
    return replace(verified, login=login_flow.continue_login(request, user, redirect_to="", method=method))


def discard_signup(*, key: str) -> KeyOutcome:
    """ "I did not sign up": delete the unverified account a verification ``key`` names and
    release its values (one guarded transaction; a verified account is never discarded)."""
    outcome, account = verification.discard_signup(key)
    return KeyOutcome(outcome, account)


def by_code() -> bool:
    """Whether addresses are proven by a mailed code (``ACCOUNTS_EMAIL_VERIFICATION_BY_CODE_ENABLED``)."""
    return app_settings.EMAIL_VERIFICATION_BY_CODE_ENABLED


def send_proof(request: HttpRequest, account: Account) -> str:
    """Ask the person in this session to prove the address of ``account``: its verification
    link, or with :func:`by_code` a code kept in this session (only this session can use it;
    a new one replaces it). Returns what became of the mail: ``sent``, ``too_soon``,
    ``failed``. Staff, who have no session of the person's, send the link
    (:func:`accounts.verification.send_verification`)."""
    if not by_code():
        return verification.send_verification(request, account)
    code = email_codes.issue(
        request.session,
        email_codes.VERIFY_EMAIL,
        account=account,
        email=account.email,
        stamp=verification.password_stamp(account),
    )
    return verification.send_verification_code(request, account, code)


def unverified_login(request: HttpRequest, account: Account) -> None:
    """The right password of ``account``, whose address is not verified yet: this session
    keeps its sign-up pending (to send the link again, to say "confirm your address"); with
    :func:`by_code`, a code is mailed to this session unless it waits for one already."""
    mail = verification.SENT
    waiting = email_codes.pending(request.session, email_codes.VERIFY_EMAIL)
    if by_code() and (waiting is None or waiting.account_id != account.id):
        mail = send_proof(request, account)
    remember_pending(request, account.id, account.email, mail, {"method": "password"})


def verify_code(request: HttpRequest, *, code: str) -> KeyOutcome:
    """Verify an address with the code this session waits for (:func:`send_proof`): the
    sign-up's, else (a logged-in person) an email change's
    (:func:`accounts.internal.flows.email_change.confirm_email_change_code`).

    A right code verifies in ONE transaction guarded by the account as the code was mailed
    for (``G_VERIFY_SAME_SIGNUP``: still unverified, so a code verifies once) with the code's
    tries checked under their limit (``G_LIMIT_UNDER``); the session then stops waiting for
    it and for its sign-up. Outcomes: those of a key (``verified``, ``already_verified``,
    ``taken``, ``stale``, ``busy``), :data:`NO_CODE`, :data:`WRONG_CODE`, :data:`NO_TRIES_LEFT`.
    """
    found = email_codes.pending(request.session, email_codes.VERIFY_EMAIL)
    if found is None:
        return KeyOutcome(NO_CODE)
    origin = timeline.origin_of(request)
    verified = use_code(
        request,
        found,
        code,
        lambda right: verification.confirm_account(right.account, origin=origin, also=right.limit_actions()),
    )
    return finish_pending_signup(request, verified)


def use_code(
    request: HttpRequest, found: email_codes.PendingCode, code: str, apply: Callable[[RightCode], str]
) -> KeyOutcome:
    """Judge ``code`` against ``found`` (:func:`judge_code`) and, when right, ``apply`` it:
    its one transaction, sent with the code's tries checked under their limit (past it, none
    is left). The session then stops waiting for the code, unless the store was too busy to
    judge (``busy``: try again)."""
    judged = judge_code(request, found, code)
    if isinstance(judged, KeyOutcome):
        return judged
    try:
        outcome = apply(judged)
    except OverLimit:
        outcome = NO_TRIES_LEFT
    if outcome != verification.BUSY:
        email_codes.forget(request.session, found.purpose)
    return KeyOutcome(outcome, judged.account)


@dataclass(frozen=True)
class CodeRead:
    """What a typed code names, before anything is done with it: ``outcome`` (:data:`RIGHT_CODE`,
    or why not: :data:`NO_CODE`, :data:`WRONG_CODE`, :data:`NO_TRIES_LEFT`), the address it
    proves and the account it is for."""

    outcome: str
    email: str = ""
    account: Account | None = None


def pending_code(request: HttpRequest) -> email_codes.PendingCode | None:
    """The code this session waits for to prove an address: an added address's or an email
    change's (a logged-in person's), else a sign-up's; ``None`` when it waits for none."""
    if request.user.is_authenticated:
        for purpose in (email_codes.ADD_EMAIL, email_codes.CHANGE_EMAIL):
            found = email_codes.pending(request.session, purpose)
            if found is not None:
                return found
    return email_codes.pending(request.session, email_codes.VERIFY_EMAIL)


def read_code(request: HttpRequest, *, code: str) -> CodeRead:
    """Judge ``code`` against the code this session waits for (:func:`pending_code`) without
    using it, for a page that shows what it proves before it is used (a wrong one counts as a
    try)."""
    found = pending_code(request)
    if found is None:
        return CodeRead(NO_CODE)
    judged = judge_code(request, found, code)
    if isinstance(judged, KeyOutcome):
        return CodeRead(judged.outcome)
    return CodeRead(RIGHT_CODE, found.email, judged.account)


@dataclass(frozen=True)
class RightCode:
    """A code typed right (or before, in this session): ``found``, its ``account`` as read
    now and still as the code was mailed for, and the ``attempt`` whose checks its use sends."""

    found: email_codes.PendingCode
    account: Account
    attempt: email_codes.Attempt

    def limit_actions(self) -> list[Action]:
        """The checks that the code's tries are still under their limit, for its transaction."""
        return self.attempt.limit_actions()


def judge_code(request: HttpRequest, found: email_codes.PendingCode, code: str) -> RightCode | KeyOutcome:
    """Judge ``code`` against ``found``: a :class:`RightCode` when right and its account is
    as the code was mailed for (the same address, the same password, not gone); else the
    :class:`KeyOutcome` to answer: a wrong code is counted (:data:`WRONG_CODE`, or
    :data:`NO_TRIES_LEFT` once none is left, and the session then stops waiting for it); the
    right code of an account changed since is ``stale`` (and forgotten)."""
    try:
        attempt = email_codes.attempt(request, found)
    except ratelimit.RateLimited:
        email_codes.forget(request.session, found.purpose)
        return KeyOutcome(NO_TRIES_LEFT)
    account = attempt.account
    if email_codes.matches(found, code):
        if account is not None and as_mailed_for(found, account):
            return RightCode(found, account, attempt)
        # The right code of an account that changed since (a new password, another address,
        # gone): it no longer works, and says so rather than "wrong".
        email_codes.forget(request.session, found.purpose)
        return KeyOutcome(verification.STALE)
    try:
        attempt.guess.fail()
    except ratelimit.RateLimited:
        email_codes.forget(request.session, found.purpose)
        return KeyOutcome(NO_TRIES_LEFT)
    if not attempt.tries_left():
        email_codes.forget(request.session, found.purpose)
        return KeyOutcome(NO_TRIES_LEFT)
    return KeyOutcome(WRONG_CODE)


def as_mailed_for(found: email_codes.PendingCode, account: Account) -> bool:
    """Whether ``account`` (as read) is still as ``found`` was mailed for: the same address
    (an added one still waiting for its proof), the same password (a new one, or a reset,
    ends every code mailed before it)."""
    stamp = verification.password_stamp(account)
    if found.purpose == email_codes.ADD_EMAIL:
        same_address = found.email in (account.unverified_emails or ())
    else:
        same_address = found.email == (account.pending_email if found.nonce is not None else account.email)
    return same_address and constant_time_compare(stamp, found.stamp)


def resend_verification(request: HttpRequest, *, account: Account | None = None) -> Resend:
    """Send the verification link (or, :func:`by_code`, a new code) of ``account`` (a
    signed-in account) again, or else of the sign-up this session keeps pending, within the
    ``resend_verification`` limit (counted per account). The session stops keeping a
    sign-up that is gone or verified."""
    pending = request.session.get(PENDING_SESSION_KEY) or {}
    from_session = account is None
    if account is None:
        if not pending:
            return Resend(NOTHING_PENDING)
        account = store.get_account(pending["id"])
        if account is None:
            request.session.pop(PENDING_SESSION_KEY, None)
            return Resend(GONE, email=pending["email"])
    if store.is_verified(account):
        # Confirmed meanwhile (in another tab, say): there is no link to send.
        request.session.pop(PENDING_SESSION_KEY, None)
        return Resend(ALREADY_VERIFIED, email=account.email, account=account)
    mail = verification.resend_verification(request, account, send=lambda: send_proof(request, account))
    if from_session:
        remember_pending(request, account.id, account.email, mail, pending_method(request))
    return Resend(mail, email=account.email, account=account)
