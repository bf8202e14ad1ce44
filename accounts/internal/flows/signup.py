"""Completing a sign-up: the account is saved; log it in, or send its verification link
and keep it pending in this session (the "check your inbox" of both front ends). A stage a
new account passes first (its phone number's code, :mod:`accounts.phones`) comes before
either: the sign-up completes once it passed."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from django.http import HttpRequest

from ... import store
from ...models import User
from ...pending import remember_pending
from ...tables import Account
from . import login
from .email_verification import send_proof


@dataclass(frozen=True)
class SignupCompletion:
    """What became of a saved sign-up: ``logged_in``, and ``mail``, what became of its
    verification mail (``sent``, ``too_soon``, ``failed``; ``None``: none was needed);
    ``pending``: the stage it waits for first (its phone number's code), nothing else done."""

    logged_in: bool
    mail: str | None = None
    pending: login.PendingLogin | None = None


def complete_signup(
    request: HttpRequest, *, account: Account, method: dict[str, Any] | None = None
) -> SignupCompletion:
    """Log the new ``account`` in (verified, or verification not required), else send the
    verification mail and note the account as pending in the session; first, when it needs
    one, stage it for a stage of its sign-up (:func:`~.login.stage_signup`: its phone
    number's code), which calls this again once passed. ``method``: how the person proved
    who they are, for the session's methods (default: a password)."""
    method = method or {"method": "password"}
    pending = login.stage_signup(request, User.from_account(account), method=method)
    if pending is not None:
        return SignupCompletion(logged_in=False, pending=pending)
    if store.is_verified(account):
        login.log_in(request, User.from_account(account), method=method)
        return SignupCompletion(logged_in=True)
    mail = send_proof(request, account)
    if not store.verification_required():
        login.log_in(request, User.from_account(account), method=method)
        return SignupCompletion(logged_in=True, mail=mail)
    remember_pending(request, account.id, account.email, mail, method)
    return SignupCompletion(logged_in=False, mail=mail)
