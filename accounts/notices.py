"""Security notices: the mail that tells an account's address, as it was before a change,
that a credential or an address changed, whoever changed it (its owner, or staff).

Every such change calls :func:`notify` with the :class:`Addressee` read before it, so a
new address never receives the only notice of its own arrival, and whoever took an
account over cannot keep the notice from its owner. A notice counts against the
``notice`` rate limit of its address, a budget of its own (``ACCOUNTS_RATE_LIMITS``,
default 10 an hour): the mail anyone may make the app send an address (sign-ups, reset
requests, counted by ``mail``) never uses it up. Only a verified address is told: an
unverified one may be somebody else's. An account with several addresses
(``ACCOUNTS_MAX_EMAIL_ADDRESSES``) is told at each of its verified ones.
"""

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from django.http import HttpRequest
from django.urls import reverse

from . import store
from .tables import Account
from .verification import NOTICE_LIMIT, RESET_PASSWORD, send_mail


@dataclass(frozen=True)
class Addressee:
    """Where a notice goes: the account's address as read before the change, and its other
    verified addresses (``others``)."""

    email: str
    username: str | None
    verified: bool
    others: tuple[str, ...] = ()


def addressee(account: Account) -> Addressee:
    """The :class:`Addressee` of ``account`` as read now: take it before changing the account."""
    others = tuple(sorted(getattr(account, "email_addresses", None) or ()))
    return Addressee(email=account.email, username=account.username, verified=store.is_verified(account), others=others)


def notify(
    request: HttpRequest, before: Addressee, template: str, context: Mapping[str, Any], *, with_reset_link: bool = True
) -> str | None:
    """Mail the notice ``template`` to ``before`` (see :func:`addressee`: its address and its
    other verified ones), its link leading to the password reset (whoever did not make the
    change should act). Returns what became of the mail to its address (``sent``,
    ``too_soon``, ``failed``), or ``None`` for an unverified address."""
    path, frontend = (reverse("accounts:password_reset"), RESET_PASSWORD) if with_reset_link else (None, None)
    for other in before.others:
        send_mail(request, template, other, context, path=path, frontend=frontend, limit=NOTICE_LIMIT)
    if not before.verified:
        return None
    return send_mail(request, template, before.email, context, path=path, frontend=frontend, limit=NOTICE_LIMIT)


def password_changed(
    request: HttpRequest, before: Addressee, account: Account, *, reset: bool, by_staff: bool = False
) -> str | None:
    """A new password: changed by its owner, reset with a mailed link, or set by staff."""
    return notify(request, before, "password_changed", {"account": account, "reset": reset, "by_staff": by_staff})


def username_changed(
    request: HttpRequest, before: Addressee, account: Account, *, by_staff: bool = False
) -> str | None:
    """A new username (``account`` carries it), by its owner or by staff."""
    context = {
        "account": account,
        "old_username": before.username,
        "new_username": account.username,
        "by_staff": by_staff,
    }
    return notify(request, before, "username_changed", context)


def email_set_by_staff(request: HttpRequest, before: Addressee, account: Account) -> str | None:
    """Staff gave the account a new address (unverified until its mailbox confirms it)."""
    context = {"account": account, "old_email": before.email, "new_email": account.email, "by_staff": True}
    return notify(request, before, "email_changed", context)


def phone_changed(request: HttpRequest, before: Addressee, account: Account, old_phone: str | None) -> str | None:
    """The account's phone number changed, was verified, or was removed (``account`` carries
    the new one): a way to log in and to be sent codes."""
    context = {"account": account, "old_phone": old_phone, "new_phone": account.phone}
    return notify(request, before, "phone_changed", context)
