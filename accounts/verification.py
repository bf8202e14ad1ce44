"""Proving an address: verification and email-change links, and the mails that carry them.

A link is a signed, timestamped token (``django.core.signing``, salted per purpose) naming
the account and the address it was issued for, valid for ``ACCOUNTS_UNVERIFIED_EXPIRY``.
It is single-use because what it applies is guarded by the account as the link names it:
a verification needs the account still unverified with that address; an email change needs
the old address and the request's nonce, which the change removes, as do a cancel and a
new password. An email-change link also carries a stamp of the password it was issued
under, so the page can say that a new password cancelled it.

Opening a link never writes: the page asks for a click (a POST), so a mail scanner that
follows links cannot verify a squatter's sign-up in the owner's mailbox. The POST costs one
GetItem (the account) and one TransactWriteItems. The verification page names the account
it confirms, and offers whoever did not sign up to discard it instead.

Every mail goes through :func:`send_mail`: links on ``ACCOUNTS_SITE_URL``, never on the
request's Host, and the ``mail`` rate limit per address. A mail that cannot be sent loses
nothing (the account stays) and the caller says so and offers to send it again.
"""

import logging
import smtplib
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from django.core import signing
from django.core.exceptions import ImproperlyConfigured
from django.http import HttpRequest
from django.template.loader import render_to_string
from django.urls import reverse
from django.utils.crypto import constant_time_compare, salted_hmac

from . import email_codes, links, ratelimit, store, timeline
from .app_settings import app_settings
from .exceptions import Busy, InvalidUniqueValue, StaleItem, UniqueViolation
from .plain_mail import PlainTextMessage
from .tables import Account
from .transactions import Action
from .uniqueness import normalize_text

logger = logging.getLogger(__name__)

VERIFY_SALT = "accounts.verification.verify"
EMAIL_CHANGE_SALT = "accounts.verification.email_change"
PASSWORD_STAMP_SALT = "accounts.verification.password_stamp"
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
# A verification link's "I did not sign up": the unverified account is deleted.
DISCARDED = "discarded"
# An email-change link issued before the account's password last changed.
PASSWORD_CHANGED = "password_changed"
# How sending a mail (or a resend) ended: sent; refused by a rate limit (the ``mail``
# limit of the address, or ``resend_verification``); or not sent (the mail server, or no
# ``ACCOUNTS_SITE_URL``).
SENT, TOO_SOON, FAILED = "sent", "too_soon", "failed"

MAIL_ERRORS = (smtplib.SMTPException, OSError)
# The single-page app's pages a mail's link leads to when the site has them
# (ACCOUNTS_HEADLESS_FRONTEND_URLS, django-allauth's names): a verification or email-change
# key, and the password reset's request form.
CONFIRM_EMAIL, RESET_PASSWORD = "account_confirm_email", "account_reset_password"
# The rate limits a mail counts against (ACCOUNTS_RATE_LIMITS): any mail, or a security notice.
MAIL_LIMIT, NOTICE_LIMIT = "mail", "notice"


def mail_limit_key(address):
    """What the ``mail`` rate limit counts a mail to ``address`` under: the address's email
    lock key, so every spelling of one mailbox shares one count."""
    try:
        return store.constraint_for("email").key_for(address)
    except InvalidUniqueValue:
        return normalize_text(address)


def send_mail(
    request: HttpRequest | None,
    template: str,
    to: str,
    context: Mapping[str, Any],
    *,
    path: str | None = None,
    frontend: str | None = None,
    key: str | None = None,
    limit: str = MAIL_LIMIT,
    limit_key: str | None = None,
) -> str:
    """Render ``accounts/email/<template>_subject.txt`` and ``..._message.txt`` and send them
    to ``to``; ``path`` (a ``reverse()``d URL) is the mail's ``link``, on ``ACCOUNTS_SITE_URL``,
    unless the site's single-page app has the page ``frontend`` (``ACCOUNTS_HEADLESS_FRONTEND_URLS``,
    its ``{key}`` filled with ``key``): the link leads there (:func:`accounts.links.mail_link`).

    The one place the app sends mail. Each mail counts against the rate limit ``limit`` of
    its address: ``mail`` (default 5 a minute, whatever asks), or ``notice`` for a security
    notice (:mod:`accounts.notices`: a budget of its own, so that mail others can make the
    app send never silences one); ``limit_key`` replaces the address's key (a browser's own
    budget, see :func:`accounts.password_reset.request_reset`). Over it, nothing is sent.
    Returns ``sent``, ``too_soon`` (over the limit) or ``failed`` (the server refused it, or
    ``ACCOUNTS_SITE_URL`` is not set; logged).
    """
    try:
        context = {"site": links.site_name(), **context}
        link = links.mail_link(path, frontend, **({"key": key} if key is not None else {}))
        if link is not None:
            context["link"] = link
    except ImproperlyConfigured:
        logger.exception("The %s mail to %s was not sent.", template, to)
        return FAILED
    try:
        ratelimit.consume(request, limit, key=limit_key or mail_limit_key(to))
    except ratelimit.RateLimited:
        logger.warning("The %s mail to %s was not sent: too many mails to that address.", template, to)
        return TOO_SOON
    subject = " ".join(render_to_string(f"accounts/email/{template}_subject.txt", context, request).split())
    body = render_to_string(f"accounts/email/{template}_message.txt", context, request)
    try:
        PlainTextMessage(subject, body, to=[to]).send()
    except MAIL_ERRORS:
        logger.exception("The %s mail to %s could not be sent.", template, to)
        return FAILED
    return SENT


def _max_age():
    return app_settings.UNVERIFIED_EXPIRY.total_seconds()


def verification_token(account):
    """The token of ``account``'s verification link: its id, the address to prove, and the
    stamp of the password it was mailed under (a new password ends the link)."""
    data = {"a": account.id, "e": account.email, "p": password_stamp(account)}
    return signing.dumps(data, salt=VERIFY_SALT, compress=True)


def read_verification_token(token: str) -> tuple[str, str, str] | None:
    """``(account id, email, password stamp)`` of a valid, unexpired verification token, or ``None``."""
    try:
        data = signing.loads(token, salt=VERIFY_SALT, max_age=_max_age())
        return data["a"], data["e"], data["p"]
    except (signing.BadSignature, KeyError, TypeError):
        return None


def send_verification(request: HttpRequest, account: Account) -> str:
    """Mail the verification link to the account's address: ``sent``, ``too_soon`` or ``failed``.

    With ``ACCOUNTS_PREVENT_ENUMERATION`` a sign-up is made whether or not a verified account
    holds its address (:func:`accounts.store.refuses_registered_addresses`); when one does,
    the address gets its owner's notice instead of a link, the only difference, and one only
    the mailbox sees.
    """
    if app_settings.PREVENT_ENUMERATION and store.address_held_by_another(account, account.email):
        return send_signup_attempt_notice(request, account.email)
    token = verification_token(account)
    path = reverse("accounts:verify_email", args=[token])
    return send_mail(
        request, "verification", account.email, {"account": account}, path=path, frontend=CONFIRM_EMAIL, key=token
    )


def send_verification_code(request: HttpRequest, account: Account, code: str) -> str:
    """Mail ``code`` (:mod:`accounts.email_codes`, kept in the session that asked) to prove
    the account's address: ``sent``, ``too_soon`` or ``failed``. With
    ``ACCOUNTS_PREVENT_ENUMERATION``, an address a verified account holds gets its owner's
    notice instead, as a link would (:func:`send_verification`)."""
    if app_settings.PREVENT_ENUMERATION and store.address_held_by_another(account, account.email):
        return send_signup_attempt_notice(request, account.email)
    context = {"account": account, "code": code, "minutes": email_codes.VERIFY_EMAIL.seconds // 60}
    return send_mail(request, "verification_code", account.email, context)


def resend_verification(request: HttpRequest, account: Account, *, send: Callable[[], str] | None = None) -> str:
    """Send the verification mail again: ``sent``, ``too_soon`` or ``failed``; ``send``: what
    sends it (default: the link, :func:`send_verification`; a new code to the person's
    session, :func:`accounts.internal.flows.email_verification.send_proof`).

    The ``resend_verification`` rate limit (``ACCOUNTS_RATE_LIMITS``, default once a minute
    per account) is counted for the account, whoever asks: the person or staff. Resending
    does not extend the sign-up: it still expires ``ACCOUNTS_UNVERIFIED_EXPIRY`` after it
    was made.
    """
    try:
        ratelimit.consume(request, "resend_verification", user=account.id)
    except ratelimit.RateLimited:
        return TOO_SOON
    return send() if send is not None else send_verification(request, account)


def claimed_account(token: str) -> tuple[str, Account | None] | None:
    """What a verification link names: ``(email, account)``, the account as read now (one
    GetItem), ``None`` when it is gone, now holds another address, or has had a new password
    since the link was mailed (whoever had the old one may have asked for it); ``None`` for
    a forged or expired link. The link's page shows it before its buttons are pressed."""
    claim = read_verification_token(token)
    if claim is None:
        return None
    account_id, email, stamp = claim
    account = store.get_account(account_id)
    current = account is not None and account.email == email and constant_time_compare(password_stamp(account), stamp)
    return email, (account if current else None)


def _claimed_account_as_read(token):
    """``(outcome, account)``: ``(None, account)`` when the link's account still holds its
    address, else the outcome to answer (``invalid`` or ``stale``)."""
    claim = claimed_account(token)
    if claim is None:
        return INVALID, None
    _email, account = claim
    return (None, account) if account is not None else (STALE, None)


def confirm_email(token: str, *, origin: timeline.Origin = timeline.NO_ORIGIN) -> tuple[str, Account | None]:
    """Apply a verification link: one GetItem, then one transaction (its security event
    from ``origin``).

    Returns ``(outcome, account or None)``: ``verified``, ``already_verified``, ``taken``
    (another account verified the address first), ``stale`` (the account's address changed,
    or it expired or was discarded), ``busy`` (nothing written, try again) or ``invalid``
    (forged or expired link).
    """
    outcome, account = _claimed_account_as_read(token)
    if outcome is not None:
        return outcome, account
    return confirm_account(account, origin=origin), account


def confirm_account(account: Account, *, origin: timeline.Origin, also: Sequence[Action] = ()) -> str:
    """Verify the address of ``account`` as read (a link or a code named it): one
    transaction, with ``also`` (a code's tries, checked under their limit: raises
    :class:`~accounts.exceptions.OverLimit` past it). Returns ``verified``,
    ``already_verified``, ``taken``, ``stale`` or ``busy``."""
    if store.is_verified(account):
        return ALREADY_VERIFIED
    return _refusal(lambda: store.verify_email(account, origin=origin, also=also)) or VERIFIED


def discard_signup(token: str) -> tuple[str, Account | None]:
    """A verification link's "I did not sign up": delete the unverified account it names and
    release its locks, in one guarded transaction (:func:`accounts.store.discard_signup`).

    Returns ``(outcome, account or None)``: ``discarded``, ``already_verified`` (a verified
    account is never discarded, nor one verified meanwhile: the transaction's guard refuses
    it), ``stale`` (gone, or its address changed), ``busy`` or ``invalid``.
    """
    outcome, account = _claimed_account_as_read(token)
    if outcome is not None:
        return outcome, account
    if store.is_verified(account):
        return ALREADY_VERIFIED, account
    refusal = _refusal(lambda: store.discard_signup(account))
    if refusal == STALE:
        # Verified (or changed) since it was read: say which, from the account as it is now.
        current = store.get_account(account.id)
        if current is not None and store.is_verified(current):
            return ALREADY_VERIFIED, current
    return refusal or DISCARDED, account


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


def password_stamp(account: Account) -> str:
    """A stamp of the account's password hash (an HMAC: it reveals nothing of the hash); a
    new password, or a reset, changes it."""
    return salted_hmac(PASSWORD_STAMP_SALT, account.password, algorithm="sha256").hexdigest()[:20]


@dataclass(frozen=True)
class EmailChangeClaim:
    """What an email-change link names."""

    account_id: str
    old_email: str
    new_email: str
    nonce: str
    password_stamp: str


def email_change_token(account, new_email, nonce):
    """The token of an email-change link: account, old and new address, the request's
    nonce, and the stamp of the password it was asked under."""
    data = {"a": account.id, "o": account.email, "n": new_email, "x": nonce, "p": password_stamp(account)}
    return signing.dumps(data, salt=EMAIL_CHANGE_SALT, compress=True)


def read_email_change_token(token: str) -> EmailChangeClaim | None:
    """The :class:`EmailChangeClaim` of a valid, unexpired token, or ``None``."""
    try:
        data = signing.loads(token, salt=EMAIL_CHANGE_SALT, max_age=_max_age())
        return EmailChangeClaim(data["a"], data["o"], data["n"], data["x"], data["p"])
    except (signing.BadSignature, KeyError, TypeError):
        return None


def start_email_change(
    request: HttpRequest,
    account: Account,
    new_email: str,
    *,
    token: str | None = None,
    also: Sequence[Action] = (),
) -> str:
    """Record the pending change, mail its proof to ``new_email`` (:func:`mail_email_change`)
    and a notice to the old address. Returns what became of the proof's mail: ``sent``,
    ``too_soon`` or ``failed`` (the request is recorded either way). ``token`` and ``also``:
    the record's transaction's (see :func:`accounts.store.update_account`)."""
    store.request_email_change(account, new_email, token=token, also=also)
    outcome = mail_email_change(request, account)
    # A notice to the address as it is (before the change): never silenced by the mail others
    # can make the app send it.
    context = {"account": account, "new_email": new_email, "old_email": account.email}
    send_mail(request, "email_change_requested", account.email, context, limit=NOTICE_LIMIT)
    return outcome


def mail_email_change(request: HttpRequest, account: Account) -> str:
    """Mail the proof of ``account``'s pending email change to its new address: the link, or
    with ``ACCOUNTS_EMAIL_VERIFICATION_BY_CODE_ENABLED`` a code kept in this session (bound to
    the change's nonce and the account's password). Returns ``sent``, ``too_soon`` or
    ``failed``.

    With ``ACCOUNTS_PREVENT_ENUMERATION`` an address another account holds is recorded and
    answered the same (so the requester cannot tell), but it gets no proof: its owner is told
    someone tried to move another account to it.
    """
    new_email, nonce = account.pending_email, account.pending_nonce
    context = {"account": account, "new_email": new_email, "old_email": account.email}
    if app_settings.PREVENT_ENUMERATION and store.address_held_by_another(account, new_email):
        path = reverse("accounts:password_reset")
        return send_mail(
            request, "email_change_attempt", new_email, {"email": new_email}, path=path, frontend=RESET_PASSWORD
        )
    if app_settings.EMAIL_VERIFICATION_BY_CODE_ENABLED:
        code = email_codes.issue(
            request.session,
            email_codes.CHANGE_EMAIL,
            account=account,
            email=new_email,
            stamp=password_stamp(account),
            nonce=nonce,
        )
        context = {**context, "code": code, "minutes": email_codes.CHANGE_EMAIL.seconds // 60}
        return send_mail(request, "email_change_code", new_email, context)
    token = email_change_token(account, new_email, nonce)
    path = reverse("accounts:email_change_confirm", args=[token])
    return send_mail(request, "email_change", new_email, context, path=path, frontend=CONFIRM_EMAIL, key=token)


def resend_email_change(request: HttpRequest, account: Account) -> str:
    """Mail the proof of ``account``'s pending email change again (the same change: its link
    works as the first; a code replaces the first), within the ``resend_verification`` limit
    of the account: ``sent``, ``too_soon`` or ``failed``."""
    try:
        ratelimit.consume(request, "resend_verification", user=account.id)
    except ratelimit.RateLimited:
        return TOO_SOON
    return mail_email_change(request, account)


def apply_email_change(request: HttpRequest, token: str) -> tuple[str, Account | None]:
    """Apply an email-change link: one GetItem, then one transaction; after it commits, a
    notice to the old address. Returns ``(outcome, account or None)``: ``changed``,
    ``taken`` (the new address was verified by another account meanwhile),
    ``password_changed`` (the password changed since the link was sent, which cancelled the
    change), ``stale`` (used, cancelled, replaced by a newer request, or the address
    changed), ``busy`` or ``invalid``.

    The transaction is guarded by the request's nonce as read, which a new password removes
    in its own transaction: a link issued before the last password change never applies,
    even when it is read before that change and sent after it.
    """
    claim = read_email_change_token(token)
    if claim is None:
        return INVALID, None
    account = store.get_account(claim.account_id)
    if account is None:
        return STALE, None
    if not constant_time_compare(password_stamp(account), claim.password_stamp):
        return PASSWORD_CHANGED, account
    return apply_pending_change(request, account, claim.old_email, claim.new_email, claim.nonce), account


def apply_pending_change(
    request: HttpRequest, account: Account, old_email: str, new_email: str, nonce: str, also: Sequence[Action] = ()
) -> str:
    """Apply the email change of ``account`` (as read) from ``old_email`` to ``new_email``
    whose request had ``nonce`` (a link or a code named them): one transaction, guarded by
    that nonce as read, with ``also`` (a code's tries, checked under their limit: raises
    :class:`~accounts.exceptions.OverLimit` past it); after it commits, a notice to the old
    address. Returns ``changed``, ``taken``, ``stale`` or ``busy``."""
    origin = timeline.origin_of(request)
    refusal = _refusal(lambda: store.apply_email_change(account, old_email, new_email, nonce, origin=origin, also=also))
    if refusal:
        return refusal
    context = {"account": account, "old_email": old_email, "new_email": new_email}
    send_mail(request, "email_changed", old_email, context, limit=NOTICE_LIMIT)
    return CHANGED


def send_signup_attempt_notice(request, email):
    """``ACCOUNTS_PREVENT_ENUMERATION``: tell the owner of ``email`` (a verified account) that
    someone tried to sign up with it, and, if it was them, to reset the password."""
    path = reverse("accounts:password_reset")
    return send_mail(request, "signup_attempt", email, {"email": email}, path=path, frontend=RESET_PASSWORD)
