"""Changing the account's email address: the request (a link, or a code with
``ACCOUNTS_EMAIL_VERIFICATION_BY_CODE_ENABLED``, to the new address; or an unverified address
replaced at once), its resend, the link's or the code's confirmation, and the cancellation. A
request may carry an idempotency key (:mod:`accounts.idempotency`, the API's
``Idempotency-Key``): a resend of a change that was made changes nothing, mails nothing and
is not counted again."""

from __future__ import annotations

from dataclasses import dataclass

from django.contrib.sessions.backends.base import SessionBase
from django.http import HttpRequest

from ... import email_codes, idempotency, ratelimit, store, timeline, verification
from ...exceptions import StaleItem, TokenReused
from ...form_errors import STORE_REFUSALS
from ...tables import Account
from .email_verification import NO_CODE, KeyOutcome, send_proof, use_code

# How a request was answered: a link went to the new address (the address changes when it
# is opened); the unverified address was replaced at once and the new one gets a
# verification link; the current address, typed again, kept (cancelling a pending change);
# or the store refused it (``refusal``); or it resent a change made with its idempotency key.
EMAIL_CHANGE, VERIFICATION, KEPT, REFUSED, RESENT = "email_change", "verification", "kept", "refused", "resent"
# The rate limit of a request that mails someone (ACCOUNTS_RATE_LIMITS, per account).
ACTION = "change_email"


@dataclass(frozen=True)
class EmailChangeRequest:
    """What became of a request to change the address to ``email``: ``kind`` (see
    :data:`EMAIL_CHANGE`), ``mail`` (what became of the link's mail: ``sent``, ``too_soon``,
    ``failed``), ``cancelled`` (for ``kept``: the address of the pending change it cancelled,
    or ``None``), ``refusal`` (for ``refused``: what the store refused, one of
    :data:`~accounts.form_errors.STORE_REFUSALS`)."""

    kind: str
    email: str
    mail: str | None = None
    cancelled: str | None = None
    refusal: Exception | None = None


@dataclass(frozen=True)
class EmailChangeCancel:
    """What became of a cancellation: ``cancelled``, the address of the change it
    cancelled (``None``: none was pending); ``refusal``: busy, or changed meanwhile."""

    cancelled: str | None = None
    refusal: Exception | None = None


def request_email_change(
    request: HttpRequest, *, account: Account, email: str, idempotency_key: idempotency.ClientKey | None = None
) -> EmailChangeRequest:
    """Ask to change the address of ``account`` to ``email`` (already cleaned): a verified
    address changes only when the link mailed to the new one is opened, and the old one is
    told; an unverified one is replaced at once, and the new address gets a verification
    link. The current address (in any case or width) cancels a pending change.

    Each request that mails counts against ``change_email`` (raises
    :class:`~accounts.ratelimit.RateLimited` past it); typing the current address again
    mails nobody and is not counted, so whoever used up the limit from this account cannot
    keep its owner from cancelling their change.

    With ``idempotency_key``, the key becomes the transaction's ClientRequestToken and the
    transaction records it: a request whose key was used for a change already answers
    ``resent`` and does nothing else.
    """
    change = idempotency.change_for("email", account.id, idempotency_key)
    if change is not None and change.recorded_outcome() is not None:
        return EmailChangeRequest(RESENT, email)
    token, also = (None, []) if change is None else (change.token, [change.record_put(email)])
    try:
        if not store.is_verified(account):
            ratelimit.consume(request, ACTION)
            store.change_email(account, email, token=token, also=also, origin=timeline.origin_of(request))
            return EmailChangeRequest(VERIFICATION, email, mail=send_proof(request, account))
        if store.is_same_address(account, email):
            # The same mailbox written another way: nothing to prove, the lock stays.
            cancelled = account.pending_email
            store.change_email(account, email, token=token, also=also, origin=timeline.origin_of(request))
            return EmailChangeRequest(KEPT, email, cancelled=cancelled)
        ratelimit.consume(request, ACTION)
        mail = verification.start_email_change(request, account, email, token=token, also=also)
        return EmailChangeRequest(EMAIL_CHANGE, email, mail=mail)
    except (StaleItem, TokenReused) as refusal:
        # Refused because the first request with this key made the change meanwhile?
        if change is not None and change.recorded_outcome() is not None:
            return EmailChangeRequest(RESENT, email)
        if isinstance(refusal, TokenReused):
            raise
        return EmailChangeRequest(REFUSED, email, refusal=refusal)
    except STORE_REFUSALS as refusal:
        return EmailChangeRequest(REFUSED, email, refusal=refusal)


def resend_email_change(request: HttpRequest, *, account: Account) -> str | None:
    """Mail the proof of the pending change of ``account`` again (its link, or a new code to
    this session), within the ``resend_verification`` limit: what became of the mail
    (``sent``, ``too_soon``, ``failed``), or ``None`` when no change is pending."""
    if account.pending_email is None:
        return None
    return verification.resend_email_change(request, account)


def confirm_email_change_code(request: HttpRequest, *, code: str) -> KeyOutcome:
    """Apply the pending email change this session asked for with the code mailed to its new
    address (:func:`accounts.verification.mail_email_change`).

    A right code applies it in ONE transaction guarded by the change's nonce as read
    (``G_APPLY_PENDING_AS_READ``: the change applies once; a newer request, a cancel or a
    new password replaced it) with the code's tries checked under their limit
    (``G_LIMIT_UNDER``); the old address is told. Outcomes: ``changed``, ``taken``,
    ``stale``, ``busy``, and those of a typed code (``no_code``, ``wrong_code``,
    ``no_tries_left``: see :func:`~accounts.internal.flows.email_verification.verify_code`).
    """
    found = email_codes.pending(request.session, email_codes.CHANGE_EMAIL)
    nonce = found.nonce if found is not None else None
    if found is None or nonce is None:
        return KeyOutcome(NO_CODE)
    return use_code(
        request,
        found,
        code,
        lambda right: verification.apply_pending_change(
            request, right.account, right.account.email, found.email, nonce, also=right.limit_actions()
        ),
    )


def read_key(*, key: str) -> verification.EmailChangeClaim | None:
    """What an email-change ``key`` names (account, old and new address), for its page
    before its button is pressed; ``None`` for a forged or expired key. Reads nothing."""
    return verification.read_email_change_token(key)


def claimed_change(*, key: str) -> tuple[str, Account | None] | None:
    """What an email-change ``key`` names, as :func:`~accounts.internal.flows.email_verification.read_key`
    names a verification key's: ``(new address, account)``, the account as read now (one
    GetItem; ``None`` when it no longer waits for this change); ``None`` for a forged or
    expired key."""
    claim = verification.read_email_change_token(key)
    if claim is None:
        return None
    account = store.get_account(claim.account_id)
    waits = account is not None and account.email == claim.old_email and account.pending_nonce == claim.nonce
    return claim.new_email, (account if waits else None)


def confirm_email_change(request: HttpRequest, *, key: str) -> KeyOutcome:
    """Apply an email-change ``key`` (the link mailed to the new address): one GetItem, one
    transaction, then a notice to the old address. See
    :func:`accounts.verification.apply_email_change` for its outcomes."""
    outcome, account = verification.apply_email_change(request, key)
    return KeyOutcome(outcome, account)


def cancel_email_change(*, account: Account, session: SessionBase | None = None) -> EmailChangeCancel:
    """Cancel the pending email change of ``account``: one guarded write, and its link (or
    code) stops working; ``session``, the one that asked, stops waiting for its code. Not
    rate limited: it mails nobody."""
    if session is not None:
        email_codes.forget(session, email_codes.CHANGE_EMAIL)
    try:
        return EmailChangeCancel(cancelled=store.cancel_email_change(account))
    except STORE_REFUSALS as refusal:
        return EmailChangeCancel(refusal=refusal)
