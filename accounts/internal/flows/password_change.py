"""Changing the password of a signed-in account (its current password, or a fresh proof,
already checked by the front end)."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from django.contrib.auth import password_validation, update_session_auth_hash
from django.contrib.auth.hashers import make_password
from django.contrib.sessions.backends.base import SessionBase
from django.http import HttpRequest

from ... import password_reset, store, timeline
from ...form_errors import STORE_REFUSALS
from ...models import User
from ...transactions import Action


@dataclass(frozen=True)
class PasswordChange:
    """What became of a new password: ``cancelled``, the address of the pending email change
    it cancelled (``None``: none was pending); ``refusal``: what the store refused (busy, or
    the account changed meanwhile), nothing changed."""

    cancelled: str | None = None
    refusal: Exception | None = None


def store_new_password(
    user: User,
    password: str,
    *,
    origin: timeline.Origin,
    session: SessionBase | None = None,
    also: Sequence[Action] = (),
) -> None:
    """Store ``password`` (already validated) as ``user``'s new password, as
    :meth:`~accounts.models.User.save` stores one (:func:`accounts.store.change_password`:
    one transaction, then every session of the account ends), its security event come from
    ``origin``; ``session``: this request's, when it is one of the account's (its new key
    then deletes none of the ended again). The password validators are told
    (``password_changed``). ``also``: actions sent in the same transaction (a reset code's
    tries, checked under their limit). Raises what the store refuses
    (:data:`~accounts.form_errors.STORE_REFUSALS`): nothing changed then."""
    password_hash = make_password(password)
    store.change_password(user.stored_account(), password_hash, origin=origin, session=session, also=also)
    user.password = password_hash
    password_validation.password_changed(password, user)


def change_password(request: HttpRequest, *, user: User, password: str) -> PasswordChange:
    """Set the new ``password`` (already validated) of the signed-in ``user`` in one
    transaction: every other session of the account ends and a pending email change is
    cancelled; this session stays logged in, and the account's address is told."""
    account = user.stored_account()
    pending_email = account.pending_email
    try:
        store_new_password(user, password, origin=timeline.origin_of(request), session=request.session)
    except STORE_REFUSALS as refusal:
        return PasswordChange(refusal=refusal)
    update_session_auth_hash(request, user)
    password_reset.send_password_changed_notice(request, account, reset=False)
    return PasswordChange(cancelled=pending_email)
