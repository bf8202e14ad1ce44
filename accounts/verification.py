"""Proving an address: verification and email-change links, and the mails that carry them.

A link is a signed, timestamped token (``django.core.signing``, salted per purpose) naming
the account and the address it was issued for, valid for ``ACCOUNTS_UNVERIFIED_EXPIRY``.
It is single-use because what it applies is guarded by the account as the link names it:
a verification needs the account still unverified with that address; an email change needs
the old address and the request's nonce, which the change removes.

Opening a link never writes: the page asks for a click (a POST), so a mail scanner that
follows links cannot verify a squatter's sign-up in the owner's mailbox. The POST costs one
GetItem (the account) and one TransactWriteItems.

Mail goes through Django's email framework; a mail that cannot be sent loses nothing (the
account stays) and the caller says so and offers to send it again.
"""

import logging
import smtplib

from django.core import signing
from django.template.loader import render_to_string
from django.urls import reverse

from . import ratelimit, store
from .app_settings import app_settings
from .exceptions import Busy, StaleItem, UniqueViolation
from .plain_mail import PlainTextMessage

logger = logging.getLogger(__name__)

VERIFY_SALT = "accounts.verification.verify"
EMAIL_CHANGE_SALT = "accounts.verification.email_change"
# How applying a link ended.
VERIFIED, ALREADY_VERIFIED, CHANGED, TAKEN, STALE, INVALID, BUSY = (
    "verified",
    "already_verified",
    "changed",
    "taken",
    "stale",
    "invalid",
    "busy",
)
# How a resend ended.
SENT, TOO_SOON, FAILED = "sent", "too_soon", "failed"

MAIL_ERRORS = (smtplib.SMTPException, OSError)


def send_mail(request, template, to, context):
    """Render ``accounts/email/<template>_subject.txt`` and ``..._message.txt`` and send
    them to ``to``. Returns False (and logs) when the mail could not be sent."""
    context = {"site": request.get_host(), **context}
    subject = " ".join(render_to_string(f"accounts/email/{template}_subject.txt", context, request).split())
    body = render_to_string(f"accounts/email/{template}_message.txt", context, request)
    try:
        PlainTextMessage(subject, body, to=[to]).send()
    except MAIL_ERRORS:
        logger.exception("The %s mail to %s could not be sent.", template, to)
        return False
    return True


def _link(request, name, token):
    return request.build_absolute_uri(reverse(name, args=[token]))


def _max_age():
    return app_settings.UNVERIFIED_EXPIRY.total_seconds()


def verification_token(account):
    """The token of ``account``'s verification link: its id and the address to prove."""
    return signing.dumps({"a": account.id, "e": account.email}, salt=VERIFY_SALT, compress=True)


def read_verification_token(token):
    """``(account id, email)`` of a valid, unexpired verification token, or ``None``."""
    try:
        data = signing.loads(token, salt=VERIFY_SALT, max_age=_max_age())
    except signing.BadSignature:
        return None
    return data["a"], data["e"]


def send_verification(request, account):
    """Mail the verification link to the account's address. Returns whether it was sent."""
    link = _link(request, "accounts:verify_email", verification_token(account))
    return send_mail(request, "verification", account.email, {"account": account, "link": link})


def resend_verification(request, account):
    """Send the verification mail again: ``sent``, ``too_soon`` or ``failed``.

    The ``resend_verification`` rate limit (``ACCOUNTS_RATE_LIMITS``, default once a minute
    per account) is counted for the account, whoever asks: the person or staff.
    """
    try:
        ratelimit.consume(request, "resend_verification", user=account.id)
    except ratelimit.RateLimited:
        return TOO_SOON
    return SENT if send_verification(request, account) else FAILED


def confirm_email(token):
    """Apply a verification link: one GetItem, then one transaction.

    Returns ``(outcome, account or None)``: ``verified``, ``already_verified``, ``taken``
    (another account verified the address first), ``stale`` (the account's address changed,
    or it expired), ``busy`` (nothing written, try again) or ``invalid`` (forged or expired link).
    """
    claim = read_verification_token(token)
    if claim is None:
        return INVALID, None
    account_id, email = claim
    account = store.get_account(account_id)
    if account is None or account.email != email:
        return STALE, account
    if store.is_verified(account):
        return ALREADY_VERIFIED, account
    return _refusal(lambda: store.verify_email(account)) or VERIFIED, account


def _refusal(apply):
    """Run a link's transaction, ``apply()``: the outcome saying why it was refused
    (``taken``, ``stale`` or ``busy``), or ``None`` when it committed."""
    try:
        apply()
    except UniqueViolation:
        return TAKEN
    except StaleItem:
        return STALE
    except Busy:
        return BUSY
    return None


def email_change_token(account, new_email, nonce):
    """The token of an email-change link: account, old and new address, the request's nonce."""
    data = {"a": account.id, "o": account.email, "n": new_email, "x": nonce}
    return signing.dumps(data, salt=EMAIL_CHANGE_SALT, compress=True)


def read_email_change_token(token):
    """``(account id, old email, new email, nonce)`` of a valid token, or ``None``."""
    try:
        data = signing.loads(token, salt=EMAIL_CHANGE_SALT, max_age=_max_age())
    except signing.BadSignature:
        return None
    return data["a"], data["o"], data["n"], data["x"]


def start_email_change(request, account, new_email):
    """Record the pending change, mail the link to ``new_email`` and a notice to the old
    address. Returns whether the link was sent (the request is recorded either way)."""
    nonce = store.request_email_change(account, new_email)
    link = _link(request, "accounts:email_change_confirm", email_change_token(account, new_email, nonce))
    context = {"account": account, "new_email": new_email, "old_email": account.email}
    sent = send_mail(request, "email_change", new_email, {**context, "link": link})
    send_mail(request, "email_change_requested", account.email, context)
    return sent


def apply_email_change(request, token):
    """Apply an email-change link: one GetItem, then one transaction; after it commits, a
    notice to the old address. Returns ``(outcome, account or None)``: ``changed``,
    ``taken`` (the new address was verified by another account meanwhile), ``stale`` (used,
    replaced by a newer request, or the address changed), ``busy`` or ``invalid``."""
    claim = read_email_change_token(token)
    if claim is None:
        return INVALID, None
    account_id, old_email, new_email, nonce = claim
    account = store.get_account(account_id)
    if account is None:
        return STALE, None
    refusal = _refusal(lambda: store.apply_email_change(account, old_email, new_email, nonce))
    if refusal:
        return refusal, account
    send_mail(request, "email_changed", old_email, {"account": account, "old_email": old_email, "new_email": new_email})
    return CHANGED, account


def send_signup_attempt_notice(request, email):
    """``ACCOUNTS_PREVENT_ENUMERATION``: tell the owner of ``email`` someone tried to sign up with it."""
    return send_mail(request, "signup_attempt", email, {"email": email, "login_url": request.build_absolute_uri(reverse("accounts:login"))})
