"""Changing the account's email address: the request (a link to the new address, or an
unverified address replaced at once), the link's confirmation, and the cancellation. A
request may carry an idempotency key (:mod:`accounts.idempotency`, the API's
``Idempotency-Key``): a resend of a change that was made changes nothing, mails nothing and
is not counted again."""

from __future__ import annotations

from dataclasses import dataclass

from django.http import HttpRequest

from ... import idempotency, ratelimit, store, timeline, verification
from ...exceptions import StaleItem, TokenReused
from ...form_errors import STORE_REFUSALS
from ...tables import Account
from .email_verification import KeyOutcome

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
            return EmailChangeRequest(VERIFICATION, email, mail=verification.send_verification(request, account))
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


def read_key(*, key: str) -> verification.EmailChangeClaim | None:
    """What an email-change ``key`` names (account, old and new address), for its page
    before its button is pressed; ``None`` for a forged or expired key. Reads nothing."""
    return verification.read_email_change_token(key)


def confirm_email_change(request: HttpRequest, *, key: str) -> KeyOutcome:
    """Apply an email-change ``key`` (the link mailed to the new address): one GetItem, one
    transaction, then a notice to the old address. See
    :func:`accounts.verification.apply_email_change` for its outcomes."""
    outcome, account = verification.apply_email_change(request, key)
    return KeyOutcome(outcome, account)


def cancel_email_change(*, account: Account) -> EmailChangeCancel:
    """Cancel the pending email change of ``account``: one guarded write, and its link stops
    working. Not rate limited: it mails nobody."""
    try:
        return EmailChangeCancel(cancelled=store.cancel_email_change(account))
    except STORE_REFUSALS as refusal:
        return EmailChangeCancel(refusal=refusal)
