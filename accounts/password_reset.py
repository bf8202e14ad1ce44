"""Password reset by email: the request form, the link's token, and what follows a new password.

A request answers the same whatever the address (no enumeration) and mails a link only to
an address a verified account holds: the lookup goes through the email lock, which only a
verified account holds (two consistent GetItems, no Query or Scan). A new password, reset or
changed, is told to the account's (verified) address.
"""

from dataclasses import dataclass

from django import forms
from django.contrib.auth import forms as auth_forms
from django.contrib.auth.tokens import PasswordResetTokenGenerator
from django.http import HttpRequest
from django.urls import reverse
from django.utils.encoding import force_bytes
from django.utils.http import urlsafe_base64_encode
from django.utils.translation import gettext_lazy as _

from . import addresses, devices, email_codes, notices, ratelimit, store, verification
from .exceptions import InvalidUniqueValue
from .forms import EmailField, StoreErrorsMixin
from .models import User
from .tables import Account

ACTION = "reset_password"


class AccountTokenGenerator(PasswordResetTokenGenerator):
    """Django's reset token, made from what a reset changes.

    Django hashes ``last_login`` so that a login ends old links; this user model has no
    ``last_login`` (a login writes nothing). A link still works once: its hash covers the
    password hash, which the reset replaces (with a new salt even for the same password),
    and the email, so an email change ends it too. It expires after PASSWORD_RESET_TIMEOUT.
    """

    key_salt = "accounts.password_reset.AccountTokenGenerator"

    def _make_hash_value(self, user, timestamp):
        return f"{user.pk}{user.password}{timestamp}{user.email}"


token_generator = AccountTokenGenerator()


class PasswordResetRequestForm(forms.Form):
    """The address to send a reset link to."""

    email = EmailField(
        label=_("Email address"),
        max_length=254,
        widget=forms.EmailInput(attrs={"autocomplete": "email", "autofocus": True}),
    )


class SetPasswordForm(StoreErrorsMixin, auth_forms.SetPasswordForm):
    """Django's set-password form (``new_password1``, ``new_password2``, the validators);
    what the store refuses (busy, changed meanwhile) becomes a form error. The new password
    is set by :func:`accounts.internal.flows.password_reset.reset_password`."""


# The single-page app's page a reset link leads to when the site has one
# (ACCOUNTS_HEADLESS_FRONTEND_URLS); its key is the link's two parts, "<uidb64>:<token>".
FRONTEND_PAGE = "account_reset_password_from_key"
KEY_SEPARATOR = ":"


def reset_link_parts(user):
    """``(uidb64, token)`` of ``user``'s reset link as of now: its path is
    ``/accounts/password/reset/<uidb64>/<token>/``, its key ``<uidb64>:<token>``."""
    return urlsafe_base64_encode(force_bytes(user.pk)), token_generator.make_token(user)


@dataclass(frozen=True)
class ResetRequest:
    """A reset request as counted: the address asked for, the budget of the browser that
    asked (its device cookie's, see :func:`count_reset_request`; ``None``: the address's
    own), and the id of the account the address's lock named then (``None``: nobody's)."""

    email: str
    budget: str | None = None
    owner_id: str | None = None


def count_reset_request(request: HttpRequest, email: str) -> ResetRequest:
    """Count a request to reset the password of ``email`` against ``reset_password``;
    returns its :class:`ResetRequest`, or raises :class:`~accounts.ratelimit.RateLimited`.

    From a browser whose device cookie names the account holding ``email`` (its owner's,
    who logged in from it before), the request counts on that browser's own budget
    (:func:`accounts.devices.own_budget`), and so does its mail: requests from anyone else
    for the address can use up neither. From any other browser it counts per client address
    and per address asked for. One consistent GetItem (the address's lock), whether or not
    anybody holds it.
    """
    owner_id = store.email_owner_id(email)
    own = devices.own_budget(request, ACTION, owner_id)
    if own is None:
        ratelimit.consume(request, ACTION, key=store.login_lock_key(email))
        return ResetRequest(email, owner_id=owner_id)
    budget, counters = own
    ratelimit.count_attempt(ACTION, counters)
    return ResetRequest(email, budget, owner_id)


def reset_address(account: Account | None, email: str) -> str | None:
    """Where a reset of ``account`` (as read) asked for with ``email`` is mailed: the address
    ``email`` spells, when the account is active and still holds it verified (its primary or
    another of its addresses: it may have changed them since the lock was read), as the
    account holds it; else ``None``."""
    if account is None or not account.is_active:
        return None
    try:
        return addresses.held_address(account, email)
    except InvalidUniqueValue:
        return None


def may_reset(account: Account | None, email: str) -> bool:
    """Whether ``account`` (as read) may reset its password by a mail to ``email``
    (:func:`reset_address`)."""
    return reset_address(account, email) is not None


def request_reset(request: HttpRequest, reset: ResetRequest) -> None:
    """Mail a reset link if a verified, active account holds the address of ``reset`` (a
    :class:`ResetRequest`); else do nothing.

    The caller answers the same either way, and calls this once the answer is sent
    (:class:`accounts.after_response.RedirectThen`), so that the answer takes no longer for
    a registered address. The address's lock was read when the request was counted: one
    GetItem more, the account's, and only for an address somebody holds.
    """
    account = store.get_account(reset.owner_id) if reset.owner_id else None
    # To the address typed (the primary or another of the account's verified ones).
    address = reset_address(account, reset.email)
    if address is None:
        return
    parts = reset_link_parts(User.from_account(account))
    path = reverse("accounts:password_reset_confirm", args=parts)
    verification.send_mail(
        request,
        "password_reset",
        address,
        {"account": account},
        path=path,
        frontend=FRONTEND_PAGE,
        key=KEY_SEPARATOR.join(parts),
        limit_key=reset.budget,
    )


def send_reset_code(
    request: HttpRequest, account: Account, email: str, code: str, budget: str | None = None
) -> str | None:
    """Mail ``code`` (:mod:`accounts.email_codes`, kept in the session that asked) to reset
    the password of ``account`` to ``email``, the address typed (see :func:`reset_address`),
    on the ``mail`` budget ``budget`` (see :func:`count_reset_request`): ``sent``,
    ``too_soon`` or ``failed``; ``None`` when the account no longer holds that address."""
    address = reset_address(account, email)
    if address is None:
        return None
    context = {"account": account, "code": code, "minutes": email_codes.RESET_PASSWORD.seconds // 60}
    return verification.send_mail(request, "password_reset_code", address, context, limit_key=budget)


def send_password_changed_notice(request: HttpRequest, account: Account, *, reset: bool) -> str | None:
    """Tell the account's address that its password was changed (``reset=False``) or reset,
    with a link to reset it again if that was not its owner (:mod:`accounts.notices`: only
    a verified address is told, on the notices' own budget)."""
    return notices.password_changed(request, notices.addressee(account), account, reset=reset)
