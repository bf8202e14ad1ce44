"""The flows of phone numbers, as django-allauth 65 has them, for the pages and the API alike:

- the **verification stage** (allauth's ``verify_phone`` pending flow): a sign-up with a number,
  or a login of an account whose number is not verified, waits for the code texted to it
  (:func:`stage`, :func:`verify_staged`, :func:`resend_staged`, :func:`change_staged`);
- a **change** of a signed-in account's number (:func:`request_change`, :func:`verify_change`):
  the account keeps its number, and its lock, until the new number's code is typed; then ONE
  transaction gives it the new number and lock and releases the old one;
- a **removal** (:func:`remove_phone`): the number's lock is released at once.

Each change of a signed-in account's number is told to its address (a security notice,
:func:`accounts.notices.phone_changed`).

Every code is :mod:`.codes`'; every write is :mod:`.store`'s. Front ends parse their input,
call one of these and render what it returns.
"""

from __future__ import annotations

import time
from dataclasses import dataclass
from typing import Any

from django.http import HttpRequest

from .. import dynamo, notices, ratelimit, signup_fields, store, timeline, transactions
from ..adapter import get_adapter
from ..app_settings import app_settings
from ..exceptions import OverLimit, StaleItem, UniqueViolation
from ..internal.flows import login as login_flow
from ..internal.flows import signup as signup_flow
from ..models import User
from ..tables import Account
from ..tables.clocks import epoch_now
from . import codes
from . import store as phone_store
from .codes import SentCode

STAGE_KEY = "verify_phone"
STAGE_SESSION_KEY = "accounts_phone_stage"
CHANGE_SESSION_KEY = "accounts_phone_change"
# The rate limit of asking to change the number, per account (django-allauth's).
CHANGE_LIMIT = "change_phone"

# How a code was judged. ``wrong_code``: counted, tries left; ``exhausted``: no tries left, the
# code is dead; ``stale``: the account changed since the code was sent (its number, or its
# password), or the code was used meanwhile; ``taken``: another account verified the number
# first; ``expired``: nothing is pending (none sent, expired, or used).
VERIFIED, WRONG_CODE, EXHAUSTED, STALE, TAKEN, EXPIRED = (
    "verified",
    "wrong_code",
    "exhausted",
    "stale",
    "taken",
    "expired",
)
# How a request for a code was answered, besides what became of its text (codes.SENT, ...):
# ``same``: the account's own verified number; ``not_allowed``: no more new codes or numbers.
SAME, NOT_ALLOWED = "same", "not_allowed"


@dataclass(frozen=True)
class PhoneVerification:
    """What became of a code typed for a change of the number: ``outcome`` (see
    :data:`VERIFIED`), and for ``verified`` the ``account`` with its new number."""

    outcome: str
    account: Account | None = None


@dataclass(frozen=True)
class StagedVerification:
    """What became of a code typed at the verification stage: ``outcome`` (see
    :data:`VERIFIED`); once ``verified``, what followed: ``logged_in`` (with ``user``), or
    ``pending``, the next stage (a second factor), or for a sign-up its verification mail
    (``mail``: ``sent``... when its address must be proven: "check your inbox");
    ``next_url``: where the login was going."""

    outcome: str
    user: User | None = None
    logged_in: bool = False
    pending: login_flow.PendingLogin | None = None
    signup: bool = False
    mail: str | None = None
    next_url: str = ""


@dataclass(frozen=True)
class PhoneRequest:
    """What became of asking for a code for ``phone``: ``outcome`` is what became of its text
    (``sent``, ``too_soon``, ``failed``), or ``same``, ``not_allowed``, ``taken`` when no code
    was asked for (nothing sent, nothing changed)."""

    outcome: str
    phone: str


def needs_verification(account: Account | None) -> bool:
    """Whether ``account`` has a number whose code was never typed back, on a site with phone
    numbers: its login (and sign-up) waits for it."""
    return (
        signup_fields.has_phone()
        and account is not None
        and bool(account.phone)
        and not phone_store.is_verified(account)
    )


def may_remove(account: Account) -> bool:
    """Whether ``account``'s number may be removed: not where a number is required
    (``phone*``), nor where the number is the only way to log in."""
    return bool(account.phone) and not signup_fields.phone_required() and signup_fields.login_methods() != ["phone"]


# The verification stage (a sign-up, or a login of an account with an unverified number).


def stage(
    request: HttpRequest,
    user: User,
    redirect_to: str,
    *,
    signup: bool = False,
    method: dict[str, Any] | None = None,
) -> None:
    """Keep the login (or ``signup``) of ``user`` pending the code of its number, and text it
    one. Past the limits of texts no code goes out: the stage waits all the same, and says so
    (``too_soon``). ``method``: how the person proved who they are, for a sign-up's completion."""
    account = user.stored_account()
    sent = _send(request, account, account.phone or "", owner=phone_store.owner_id(account.phone or ""))
    request.session[STAGE_SESSION_KEY] = {
        "id": account.id,
        "expires": sent.expires,
        "next": redirect_to,
        "signup": signup,
        "method": method or {"method": "password"},
        "sent": sent.as_session(),
    }


def _send(request: HttpRequest, account: Account, phone: str, *, owner: str | None, **carried: Any) -> SentCode:
    """:func:`codes.send_code`, or past its limits the code nobody knows (``too_soon``)."""
    try:
        return codes.send_code(request, account=account, phone=phone, owner=owner, **carried)
    except ratelimit.RateLimited:
        return codes.unsent_code(account, phone, codes.TOO_SOON, **carried)


def staged(request: HttpRequest) -> dict[str, Any] | None:
    """The login this session keeps pending its number's code, or ``None`` (none, or expired)."""
    found = request.session.get(STAGE_SESSION_KEY)
    if not found or found.get("expires", 0) < time.time() or SentCode.from_session(found.get("sent")) is None:
        return None
    return dict(found)


def staged_code(request: HttpRequest) -> SentCode | None:
    """The code the pending stage waits for, or ``None``."""
    found = staged(request)
    return None if found is None else SentCode.from_session(found["sent"])


def abandon(request: HttpRequest) -> None:
    """Forget the login this session keeps pending its number's code."""
    request.session.pop(STAGE_SESSION_KEY, None)


def can_resend(sent: SentCode) -> bool:
    """Whether the stage may ask for another code (``ACCOUNTS_PHONE_VERIFICATION_SUPPORTS_RESEND``)."""
    return sent.resends < app_settings.PHONE_VERIFICATION_MAX_RESEND_COUNT


def can_change(request: HttpRequest) -> bool:
    """Whether the pending stage may change its number: a sign-up's only, as django-allauth's
    (an account that logged in before keeps its number until it logs in), as many times as
    ``ACCOUNTS_PHONE_VERIFICATION_SUPPORTS_CHANGE`` allows."""
    found = staged(request)
    sent = None if found is None else SentCode.from_session(found["sent"])
    return (
        found is not None
        and sent is not None
        and found["signup"]
        and sent.changes < app_settings.PHONE_VERIFICATION_MAX_CHANGE_COUNT
    )


def verify_staged(request: HttpRequest, *, code: str) -> StagedVerification:
    """Judge ``code`` for the pending stage; once the number is verified, go on: a sign-up
    completes (:func:`accounts.internal.flows.signup.complete_signup`), a login passes to its
    next stage or logs in. A code that can no longer succeed (no tries left, or the account
    changed) ends the stage, as django-allauth aborts the login."""
    found = staged(request)
    if found is None:
        return StagedVerification(EXPIRED)
    sent = SentCode.from_session(found["sent"])
    assert sent is not None  # staged() checked it
    outcome, account = _verify(request, sent, code)
    if outcome == WRONG_CODE:
        return StagedVerification(outcome)
    abandon(request)
    if outcome != VERIFIED or account is None:
        return StagedVerification(outcome)
    user = User.from_account(account)
    if found["signup"]:
        completion = signup_flow.complete_signup(request, account=account, method=found["method"])
        return StagedVerification(
            VERIFIED, user, completion.logged_in, completion.pending, signup=True, mail=completion.mail
        )
    following = login_flow.next_stage(request, user, redirect_to=found["next"])
    return StagedVerification(
        VERIFIED, user, following.status == login_flow.DONE, following.pending, next_url=found["next"]
    )


def resend_staged(request: HttpRequest) -> str:
    """Text the pending stage a new code (the old one dies): ``sent``, ``too_soon``,
    ``failed``, or ``expired`` (nothing pending) or ``not_allowed`` (no more new codes).
    Raises :class:`~accounts.ratelimit.RateLimited` past ``verify_phone``."""
    found = staged(request)
    sent = None if found is None else SentCode.from_session(found["sent"])
    if found is None or sent is None:
        return EXPIRED
    if not can_resend(sent):
        return NOT_ALLOWED
    account = phone_store.read_account(sent.account_id)
    if not sent.is_for(account) or account is None:
        abandon(request)
        return EXPIRED
    renewed = codes.send_code(
        request,
        account=account,
        phone=sent.phone,
        owner=phone_store.owner_id(sent.phone),
        resends=sent.resends + 1,
        changes=sent.changes,
        expires=sent.expires,
    )
    request.session[STAGE_SESSION_KEY] = {**found, "sent": renewed.as_session()}
    return renewed.outcome


def change_staged(request: HttpRequest, *, phone: str) -> PhoneRequest:
    """Change the number the pending sign-up verifies to ``phone`` (already cleaned) and text
    it a code (``ACCOUNTS_PHONE_VERIFICATION_SUPPORTS_CHANGE``): the account's unverified number
    is replaced in one transaction. ``taken`` when a verified account holds ``phone`` and the
    site does not hide which numbers are registered (``ACCOUNTS_PREVENT_ENUMERATION``); when it
    hides them, the answer is the same as for a free number, nothing is written, and the
    number's owner is told instead of being texted a code. Raises
    :class:`~accounts.ratelimit.RateLimited` past ``verify_phone``."""
    found = staged(request)
    sent = None if found is None else SentCode.from_session(found["sent"])
    if found is None or sent is None:
        return PhoneRequest(EXPIRED, phone)
    if not can_change(request):
        return PhoneRequest(NOT_ALLOWED, phone)
    account = phone_store.read_account(sent.account_id)
    if account is None or not sent.is_for(account):
        abandon(request)
        return PhoneRequest(EXPIRED, phone)
    owner = phone_store.owner_id(phone)
    taken = owner is not None and owner != account.id
    if taken and store.refuses_registered_addresses():
        return PhoneRequest(TAKEN, phone)
    if not taken:
        try:
            account = phone_store.set_unverified(account, phone, origin=timeline.origin_of(request))
        except UniqueViolation:
            if store.refuses_registered_addresses():
                return PhoneRequest(TAKEN, phone)
            taken = True  # verified by another account since the read: answered as above
        except StaleItem:
            abandon(request)
            return PhoneRequest(EXPIRED, phone)
    carried = {"resends": sent.resends, "changes": sent.changes + 1, "expires": sent.expires}
    if taken:
        get_adapter(request).send_account_already_exists_sms(phone)
        renewed = codes.unsent_code(account, phone, codes.SENT, **carried)
    else:
        renewed = codes.send_code(request, account=account, phone=phone, owner=None, **carried)
    request.session[STAGE_SESSION_KEY] = {**found, "sent": renewed.as_session()}
    return PhoneRequest(renewed.outcome, phone)


# A signed-in account's change of number.


def request_change(request: HttpRequest, *, account: Account, phone: str) -> PhoneRequest:
    """Text a code to ``phone`` (already cleaned) so that ``account`` (signed in, freshly
    reauthenticated) can make it its number; its number and lock stay as they are until the
    code is typed (:func:`verify_change`). A newer request replaces the older (its code
    dies). ``same``: its own verified number (nothing sent); ``taken``: a verified account
    holds it and the site does not hide which numbers are registered. Counts against
    ``change_phone`` (per account) and ``verify_phone`` (per number and client): raises
    :class:`~accounts.ratelimit.RateLimited` past either."""
    if account.phone == phone and phone_store.is_verified(account):
        return PhoneRequest(SAME, phone)
    ratelimit.consume(request, CHANGE_LIMIT)
    owner = phone_store.owner_id(phone)
    if owner is not None and owner != account.id and store.refuses_registered_addresses():
        return PhoneRequest(TAKEN, phone)
    sent = codes.send_code(request, account=account, phone=phone, owner=owner)
    request.session[CHANGE_SESSION_KEY] = sent.as_session()
    return PhoneRequest(sent.outcome, phone)


def pending_change(request: HttpRequest, account: Account | None = None) -> SentCode | None:
    """The change of number this session waits to verify (of ``account``, when given), or ``None``."""
    sent = SentCode.from_session(request.session.get(CHANGE_SESSION_KEY))
    if sent is None or (account is not None and sent.account_id != account.id):
        return None
    return sent


def verify_change(request: HttpRequest, *, code: str) -> PhoneVerification:
    """Judge ``code`` for the change of number this session waits for: once right, ONE
    transaction gives the account the new number and its lock and releases the old number's
    (:func:`accounts.phones.store.verify`). A code that can no longer succeed is forgotten."""
    sent = pending_change(request)
    user = getattr(request, "user", None)
    if sent is None or user is None or sent.account_id != user.pk:
        return PhoneVerification(EXPIRED)
    outcome, account = _verify(request, sent, code)
    if outcome != WRONG_CODE:
        request.session.pop(CHANGE_SESSION_KEY, None)
    if outcome == VERIFIED and account is not None:
        # Told to the address as it is (a number changes nothing of it), whoever changed it.
        notices.phone_changed(request, notices.addressee(account), account, sent.held)
    return PhoneVerification(outcome, account)


def remove_phone(request: HttpRequest, *, account: Account) -> Account:
    """Take ``account``'s number off (signed in, freshly reauthenticated; :func:`may_remove`
    checked): ONE transaction, its lock released at once, and a pending change forgotten.
    Raises what the store refuses (:data:`~accounts.form_errors.STORE_REFUSALS`)."""
    old_phone = account.phone
    removed = phone_store.remove(account, origin=timeline.origin_of(request))
    request.session.pop(CHANGE_SESSION_KEY, None)
    notices.phone_changed(request, notices.addressee(removed), removed, old_phone)
    return removed


def _verify(request: HttpRequest, sent: SentCode, code: str) -> tuple[str, Account | None]:
    """Judge ``code`` as ``sent``'s: the code's tries are read and checked, a wrong code is
    counted, and a right one verifies ``sent.phone`` for the account, as read now, in ONE
    transaction that also checks the tries are still under their limit (see :mod:`.codes`)."""
    tries = sent.tries()
    guess = ratelimit.Guess(request, codes.TRIES_ACTION, counters=[tries])
    guess.take(dynamo.batch_get(guess.keys))
    try:
        guess.check()
        if not sent.is_right(code):
            guess.fail()
            return (WRONG_CODE if tries.fits(time.time()) else EXHAUSTED), None
    except ratelimit.RateLimited:
        return EXHAUSTED, None
    account = phone_store.read_account(sent.account_id)
    if account is None or not sent.is_for(account):
        return STALE, None
    # A counter's check is the same action whenever the transaction is planned.
    checks = [transactions.limit_check(params)(epoch_now()) for params in guess.conditions()]
    try:
        return VERIFIED, phone_store.verify(account, sent.phone, also=checks, origin=timeline.origin_of(request))
    except OverLimit:
        return EXHAUSTED, None
    except UniqueViolation as error:
        # Held by this very account: the same code, used at once by another request.
        return (STALE if error.owners.get("phone") == account.PK else TAKEN), None
    except StaleItem:
        return STALE, None
