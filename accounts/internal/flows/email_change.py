"""Asking to change the account's address, with the email page's rules (its form, the
``change_email`` limit) and an idempotency key (:mod:`accounts.idempotency`): a resend of a
change that was made changes nothing, mails nothing and is not counted again."""

from __future__ import annotations

from django.forms import Form
from django.http import HttpRequest

from ... import idempotency, ratelimit, store
from ...exceptions import StaleItem, TokenReused

RATE_LIMIT_ACTION = "change_email"


def request_change(request: HttpRequest, form: Form, *, idempotency_key: str | None = None) -> bool:
    """Save the valid email change ``form`` (see :meth:`accounts.forms.EmailChangeForm.save`).
    Returns ``False``, or ``True`` when it is the resend of a change made with
    ``idempotency_key``. Raises :class:`~accounts.ratelimit.RateLimited` and what the form's
    save raises (a taken address, the account changed meanwhile)."""
    account = form.user.account
    email = form.cleaned_data["email"]
    change = idempotency.change_for("email", account.id, idempotency_key)
    if change is not None and change.recorded_outcome() is not None:
        return True
    if not (store.is_verified(account) and store.is_same_address(account, email)):
        # Typing the current address sends no mail, so the limit does not apply.
        ratelimit.consume(request, RATE_LIMIT_ACTION)
    if change is None:
        form.save(request)
        return False
    try:
        form.save(request, token=change.token, also=[change.record_put(email)])
    except (StaleItem, TokenReused):
        # Refused because the first request with this key made the change meanwhile?
        if change.recorded_outcome() is None:
            raise
        return True
    return False
