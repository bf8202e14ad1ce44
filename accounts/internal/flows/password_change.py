"""Changing the password of a signed-in account (its current password, or a fresh proof,
already checked by the front end)."""

from __future__ import annotations

from dataclasses import dataclass

from django.contrib.auth import update_session_auth_hash
from django.http import HttpRequest

from ... import password_reset
from ...form_errors import STORE_REFUSALS
from ...models import User


@dataclass(frozen=True)
class PasswordChange:
    """What became of a new password: ``cancelled``, the address of the pending email change
    it cancelled (``None``: none was pending); ``refusal``: what the store refused (busy, or
    the account changed meanwhile), nothing changed."""

    cancelled: str | None = None
    refusal: Exception | None = None


def change_password(request: HttpRequest, *, user: User, password: str) -> PasswordChange:
    """Set the new ``password`` (already validated) of the signed-in ``user`` in one
    transaction: every other session of the account ends and a pending email change is
    cancelled; this session stays logged in, and the account's address is told."""
    account = user.stored_account()
    pending_email = account.pending_email
    user.set_password(password)
    try:
        user.save()
    except STORE_REFUSALS as refusal:
        return PasswordChange(refusal=refusal)
    update_session_auth_hash(request, user)
    password_reset.send_password_changed_notice(request, account, reset=False)
    return PasswordChange(cancelled=pending_email)
