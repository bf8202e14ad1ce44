"""Password reset by email: the request (its link, or with
``ACCOUNTS_PASSWORD_RESET_BY_CODE_ENABLED`` a code kept in this session, is mailed once the
answer is sent), the key's or the code's check, and the new password."""

from __future__ import annotations

import re
import secrets
from dataclasses import dataclass

from django.http import HttpRequest
from django.utils.http import urlsafe_base64_decode

from ... import email_codes, password_reset, ratelimit, store, timeline, verification
from ...app_settings import app_settings
from ...exceptions import OverLimit
from ...form_errors import STORE_REFUSALS
from ...models import User
from ...tables import Account
from .email_verification import NO_CODE, NO_TRIES_LEFT, KeyOutcome, RightCode, as_mailed_for, judge_code
from .password_change import store_new_password

# What an account id can look like (hex today); anything else is not looked up.
ACCOUNT_ID = re.compile(r"[\w-]{1,64}")
# The API's reset key is the reset link's two parts, ``<uidb64>:<token>``.
KEY_SEPARATOR = password_reset.KEY_SEPARATOR


@dataclass(frozen=True)
class ResetRequested:
    """A counted reset request; :meth:`send_link` mails its link, or its code (``code``, for
    ``account``) (to run once the answer is sent: the answer takes no longer for a
    registered address)."""

    request: HttpRequest
    reset: password_reset.ResetRequest
    account: Account | None = None
    code: str | None = None

    def send_link(self) -> None:
        """Mail the reset link (or code) if a verified, active account holds the address;
        else nothing."""
        if not by_code():
            password_reset.request_reset(self.request, self.reset)
        elif self.account is not None and self.code is not None:
            password_reset.send_reset_code(self.request, self.account, self.reset.email, self.code, self.reset.budget)


@dataclass(frozen=True)
class PasswordSet:
    """What became of a new password: set, or ``refusal`` (what the store refused: busy, or
    the account changed meanwhile); for a code, ``outcome`` says why it was refused
    (:data:`~accounts.internal.flows.email_verification.NO_CODE`, ``WRONG_CODE``,
    ``NO_TRIES_LEFT``)."""

    refusal: Exception | None = None
    outcome: str | None = None


def by_code() -> bool:
    """Whether a reset mails a code instead of a link (``ACCOUNTS_PASSWORD_RESET_BY_CODE_ENABLED``)."""
    return app_settings.PASSWORD_RESET_BY_CODE_ENABLED


def request_password_reset(request: HttpRequest, *, email: str) -> ResetRequested:
    """Count a request to reset the password of ``email`` against ``reset_password`` (raises
    :class:`~accounts.ratelimit.RateLimited` past it, see
    :func:`accounts.password_reset.count_reset_request`). The answer is the same whether or
    not anybody holds the address; so is its time, as the mail is sent after it.

    With :func:`by_code`, this session keeps a code for the address (a code nobody knows
    when no account may reset by it), so that it looks the same either way: the account is
    read now (another id's nothing when nobody holds the address: one GetItem either way),
    as the code is bound to its password."""
    reset = password_reset.count_reset_request(request, email)
    if not by_code():
        return ResetRequested(request, reset)
    account = store.get_account(reset.owner_id or secrets.token_hex(16))
    mailed = account if password_reset.may_reset(account, email) else None
    stamp = verification.password_stamp(mailed) if mailed is not None else ""
    code = email_codes.issue(request.session, email_codes.RESET_PASSWORD, account=mailed, email=email, stamp=stamp)
    return ResetRequested(request, reset, mailed, code)


def code_pending(request: HttpRequest) -> bool:
    """Whether this session waits for a reset code (or, the code typed, for its new password)."""
    return by_code() and email_codes.pending(request.session, email_codes.RESET_PASSWORD) is not None


def _judged_reset_code(request: HttpRequest, code: str | None) -> RightCode | KeyOutcome:
    """The :class:`~accounts.internal.flows.email_verification.RightCode` of the reset code
    this session waits for, typed as ``code`` (``None``: typed right before, in this
    session), whose account may reset its password; else the :class:`KeyOutcome` saying why
    not."""
    found = email_codes.pending(request.session, email_codes.RESET_PASSWORD) if by_code() else None
    if found is None or (code is None and not found.confirmed):
        return KeyOutcome(NO_CODE)
    judged = judge_code(request, found, code) if code is not None else _typed_before(request, found)
    if isinstance(judged, KeyOutcome):
        return judged
    if not password_reset.may_reset(judged.account, found.email):
        return KeyOutcome(NO_CODE)
    return judged


def _typed_before(request: HttpRequest, found: email_codes.PendingCode) -> RightCode | KeyOutcome:
    """The :class:`~accounts.internal.flows.email_verification.RightCode` of a reset code
    typed right before in this session: its account read again (with its tries' counter,
    which a right code's transaction checks), still as the code was mailed for; nothing is
    guessed."""
    try:
        attempt = email_codes.attempt(request, found)
    except ratelimit.RateLimited:
        email_codes.forget(request.session, found.purpose)
        return KeyOutcome(NO_TRIES_LEFT)
    if attempt.account is None or not as_mailed_for(found, attempt.account):
        return KeyOutcome(NO_CODE)
    return RightCode(found, attempt.account, attempt)


def user_of_code(request: HttpRequest, *, code: str) -> tuple[User | None, str | None]:
    """``(user, None)`` when ``code`` is the reset code this session waits for (the new
    password comes next: the code then lives :data:`~accounts.email_codes.RESET_PASSWORD`'s
    time again, as allauth's does); else ``(None, why)``: ``no_code``, ``wrong_code``
    (counted) or ``no_tries_left``."""
    judged = _judged_reset_code(request, code)
    if isinstance(judged, KeyOutcome):
        return None, judged.outcome
    email_codes.mark_confirmed(request.session, judged.found)
    return User.from_account(judged.account), None


def user_of_link(uidb64: str) -> User | None:
    """The user a reset link's ``uidb64`` names (one GetItem), or ``None``; its token is
    checked by the caller (Django's reset view, or :func:`user_of_key`)."""
    try:
        account_id = urlsafe_base64_decode(uidb64).decode()
    except (TypeError, ValueError, OverflowError, UnicodeDecodeError):
        return None
    if not ACCOUNT_ID.fullmatch(account_id):
        return None
    account = store.get_account(account_id)
    return User.from_account(account) if account is not None else None


def user_of_key(*, key: str) -> User | None:
    """The user whose reset ``key`` (``<uidb64>:<token>``) is valid now, or ``None``: the
    token dies with a new password, a new address, or after ``PASSWORD_RESET_TIMEOUT``."""
    uidb64, separator, token = key.partition(KEY_SEPARATOR)
    if not separator:
        return None
    user = user_of_link(uidb64)
    if user is None or not password_reset.token_generator.check_token(user, token):
        return None
    return user


def code_user(request: HttpRequest) -> User | None:
    """The user whose reset code this session typed right already (its new password comes
    next), as read now; ``None`` when none is pending (or no longer may be reset)."""
    judged = _judged_reset_code(request, None)
    return None if isinstance(judged, KeyOutcome) else User.from_account(judged.account)


def reset_password_by_code(request: HttpRequest, *, code: str | None, password: str) -> PasswordSet:
    """Set the new ``password`` (already validated) with the reset code this session waits
    for, typed as ``code`` (``None``: typed right before in this session, the HTML page's
    second step), as :func:`reset_password` does with a key.

    The new password is ONE transaction, from the account as read now and found still as the
    code was mailed for (its address, the stamp of its password), guarded by that account as
    read: its password and its ``updated`` stamp (``G_CHANGE_UPDATED_AS_READ``), so two uses
    of one code cannot both set a password (the first's changes both, and its new password
    is no longer the one the code was mailed under); and by the code's tries under their
    limit (``G_LIMIT_UNDER``). The session then stops waiting for the code."""
    judged = _judged_reset_code(request, code)
    if isinstance(judged, KeyOutcome):
        return PasswordSet(outcome=judged.outcome)
    user = User.from_account(judged.account)
    try:
        store_new_password(
            user, password, origin=timeline.origin_of(request), session=request.session, also=judged.limit_actions()
        )
    except OverLimit:
        email_codes.forget(request.session, judged.found.purpose)
        return PasswordSet(outcome=NO_TRIES_LEFT)
    except STORE_REFUSALS as refusal:
        return PasswordSet(refusal=refusal)
    email_codes.forget(request.session, judged.found.purpose)
    ratelimit.forget_account(user.pk)
    password_reset.send_password_changed_notice(request, user.stored_account(), reset=True)
    return PasswordSet()


def reset_password(request: HttpRequest, *, user: User, password: str) -> PasswordSet:
    """Set the new ``password`` (already validated) of ``user``, who proved the mailbox with
    a reset key, in one transaction: it ends every session of the account and cancels a
    pending email change. The account's login failure counters are cleared (whoever had
    locked it, its owner logs in at once) and its address is told."""
    try:
        store_new_password(user, password, origin=timeline.origin_of(request), session=request.session)
    except STORE_REFUSALS as refusal:
        return PasswordSet(refusal=refusal)
    ratelimit.forget_account(user.pk)
    password_reset.send_password_changed_notice(request, user.stored_account(), reset=True)
    return PasswordSet()
