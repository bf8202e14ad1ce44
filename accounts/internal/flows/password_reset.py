"""Password reset by email: the request (its link is mailed once the answer is sent), the
key's check, and the new password."""

from __future__ import annotations

import re
from dataclasses import dataclass

from django.http import HttpRequest
from django.utils.http import urlsafe_base64_decode

from ... import password_reset, ratelimit, store, timeline
from ...form_errors import STORE_REFUSALS
from ...models import User
from .password_change import store_new_password

# What an account id can look like (hex today); anything else is not looked up.
ACCOUNT_ID = re.compile(r"[\w-]{1,64}")
# The API's reset key is the reset link's two parts, ``<uidb64>:<token>``.
KEY_SEPARATOR = ":"


@dataclass(frozen=True)
class ResetRequested:
    """A counted reset request; :meth:`send_link` mails its link (to run once the answer is
    sent: the answer takes no longer for a registered address)."""

    request: HttpRequest
    reset: password_reset.ResetRequest

    def send_link(self) -> None:
        """Mail the reset link if a verified, active account holds the address; else nothing."""
        password_reset.request_reset(self.request, self.reset)


@dataclass(frozen=True)
class PasswordSet:
    """What became of a new password: set, or ``refusal`` (what the store refused: busy, or
    the account changed meanwhile)."""

    refusal: Exception | None = None


def request_password_reset(request: HttpRequest, *, email: str) -> ResetRequested:
    """Count a request to reset the password of ``email`` against ``reset_password`` (raises
    :class:`~accounts.ratelimit.RateLimited` past it, see
    :func:`accounts.password_reset.count_reset_request`). The answer is the same whether or
    not anybody holds the address; so is its time, as the mail is sent after it."""
    return ResetRequested(request, password_reset.count_reset_request(request, email))


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
