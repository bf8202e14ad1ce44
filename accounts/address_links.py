"""Proving an added address: its verification link, and the mails about an account's addresses.

A link names the account, the address and a stamp of the password it was mailed under
(signed and timestamped by ``django.core.signing``, salted for this purpose, valid for
``ACCOUNTS_UNVERIFIED_EXPIRY``). It is single use because what it applies is guarded by the
account as read: the address must still wait for its link, and a verified one no longer
does. A new password ends every link mailed before it (whoever had the old one may have
added the address). Opening a link never writes: its page asks for a click (a POST), as the
sign-up's verification link does, so a mail scanner verifies nothing.

Notices of a change of the addresses go to every verified address of the account as read
before the change (:mod:`accounts.notices`), so a new address never receives the only
notice of its own arrival.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from django.core import signing
from django.http import HttpRequest
from django.urls import reverse

from . import addresses, email_codes, store
from .app_settings import app_settings
from .tables import Account
from .verification import CONFIRM_EMAIL, NOTICE_LIMIT, RESET_PASSWORD, password_stamp, send_mail

ADDRESS_SALT = "accounts.addresses.verify"
# The changes a notice tells of.
ADDED, VERIFIED, REMOVED, PRIMARY = "added", "verified", "removed", "primary"


@dataclass(frozen=True)
class AddressClaim:
    """What an address's verification link names."""

    account_id: str
    email: str
    password_stamp: str


def stamp_of(account: Account) -> str:
    """The stamp of ``account``'s password a link carries (an HMAC of its hash, see
    :func:`accounts.verification.password_stamp`): a new password changes it."""
    stamp: str = password_stamp(account)
    return stamp


def address_token(account: Account, email: str) -> str:
    """The token of the link verifying ``email``, an address added to ``account``."""
    data = {"a": account.id, "e": email, "p": stamp_of(account)}
    return signing.dumps(data, salt=ADDRESS_SALT, compress=True)


def read_address_token(token: str) -> AddressClaim | None:
    """The :class:`AddressClaim` of a valid, unexpired token, or ``None``."""
    try:
        data = signing.loads(token, salt=ADDRESS_SALT, max_age=app_settings.UNVERIFIED_EXPIRY)
        return AddressClaim(data["a"], data["e"], data["p"])
    except (signing.BadSignature, KeyError, TypeError):
        return None


def send_address_proof(request: HttpRequest, account: Account, email: str) -> str:
    """Mail the proof of ``email``, an address added to ``account``, to it: its link (into
    the single-page app's ``account_confirm_email`` page when the site has one, as every
    verification link), or with ``ACCOUNTS_EMAIL_VERIFICATION_BY_CODE_ENABLED`` a code kept
    in this session (:data:`accounts.email_codes.ADD_EMAIL`: only this session can use it; a
    new one replaces it), as django-allauth proves an added address. Returns ``sent``,
    ``too_soon`` or ``failed``.

    With ``ACCOUNTS_PREVENT_ENUMERATION`` an address another account holds was added all the
    same (so the person adding it cannot tell); it gets no proof, but its owner's notice that
    someone tried to add it to another account.
    """
    if app_settings.PREVENT_ENUMERATION and store.address_held_by_another(account, email):
        path = reverse("accounts:password_reset")
        return send_mail(request, "email_address_attempt", email, {"email": email}, path=path, frontend=RESET_PASSWORD)
    context = {"account": account, "email": email}
    if app_settings.EMAIL_VERIFICATION_BY_CODE_ENABLED:
        purpose = email_codes.ADD_EMAIL
        code = email_codes.issue(request.session, purpose, account=account, email=email, stamp=stamp_of(account))
        context = {**context, "code": code, "minutes": purpose.seconds // 60}
        return send_mail(request, "email_address_code", email, context)
    token = address_token(account, email)
    path = reverse("accounts:email_address_verify", args=[token])
    return send_mail(request, "email_address_verify", email, context, path=path, frontend=CONFIRM_EMAIL, key=token)


def notify_addresses(
    request: HttpRequest, account: Account, told: Sequence[str], change: str, email: str, *, by_staff: bool = False
) -> list[str]:
    """Tell each address of ``told`` (the account's verified addresses as read before the
    change) that ``email`` was added, verified, removed or made primary (``change``), with a
    link to reset the password (whoever did not make the change should act). Each counts
    against the ``notice`` limit of its address. Returns what became of each mail."""
    context = {"account": account, "change": change, "email": email, "by_staff": by_staff}
    path = reverse("accounts:password_reset")
    return [
        send_mail(
            request, "email_addresses_changed", to, context, path=path, frontend=RESET_PASSWORD, limit=NOTICE_LIMIT
        )
        for to in told
    ]


def told_of(account: Account) -> list[str]:
    """Where notices about ``account`` go: its verified addresses, as read now (take them
    before changing it)."""
    return addresses.verified_addresses(account)
