"""Email verification: apply a verification key (the mailed link's), discard the sign-up it
names, and send the link again; both front ends call these."""

from __future__ import annotations

from dataclasses import dataclass

from django.http import HttpRequest

from ... import store, timeline, verification
from ...pending import PENDING_SESSION_KEY, pending_account_id, remember_pending
from ...tables import Account

# What a resend found instead of a mail to send: no sign-up pending in this session; the
# pending sign-up gone (expired, or discarded from its link); its address already verified.
NOTHING_PENDING, GONE, ALREADY_VERIFIED = "nothing_pending", "gone", verification.ALREADY_VERIFIED
CONFIRMED = frozenset({verification.VERIFIED, verification.ALREADY_VERIFIED})


@dataclass(frozen=True)
class KeyOutcome:
    """What applying a key did: ``outcome`` (one of :mod:`accounts.verification`'s:
    ``verified``, ``already_verified``, ``discarded``, ``changed``, ``taken``, ``stale``,
    ``password_changed``, ``busy``, ``invalid``) and the account it named, as read."""

    outcome: str
    account: Account | None = None

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


def verify_email(request: HttpRequest, *, key: str, end_pending: bool) -> KeyOutcome:
    """Verify the address a verification ``key`` names (one GetItem, one transaction).

    ``end_pending``: once the address is verified, this session stops keeping its sign-up
    pending (the API: its ``verify_email`` flow is done). The HTML pages keep it, so that
    "send it again" on the "check your inbox" page says the address is confirmed.
    """
    outcome, account = verification.confirm_email(key, origin=timeline.origin_of(request))
    verified = KeyOutcome(outcome, account)
    if end_pending and verified.confirmed and account is not None and pending_account_id(request) == account.id:
        del request.session[PENDING_SESSION_KEY]
    return verified


def discard_signup(*, key: str) -> KeyOutcome:
    """ "I did not sign up": delete the unverified account a verification ``key`` names and
    release its values (one guarded transaction; a verified account is never discarded)."""
    outcome, account = verification.discard_signup(key)
    return KeyOutcome(outcome, account)


def resend_verification(request: HttpRequest, *, account: Account | None = None) -> Resend:
    """Send the verification link of ``account`` (a signed-in account) again, or else of the
    sign-up this session keeps pending, within the ``resend_verification`` limit (counted
    per account). The session stops keeping a sign-up that is gone or verified."""
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
    mail = verification.resend_verification(request, account)
    if from_session:
        remember_pending(request, account.id, account.email, mail)
    return Resend(mail, email=account.email, account=account)
