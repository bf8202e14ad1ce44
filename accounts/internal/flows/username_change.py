"""Changing the username of a signed-in account (a fresh proof and its current password
already checked by the front end)."""

from __future__ import annotations

from dataclasses import dataclass

from django.http import HttpRequest

from ... import notices, store, timeline
from ...form_errors import STORE_REFUSALS
from ...tables import Account


@dataclass(frozen=True)
class UsernameChange:
    """What became of a new username: ``account``, as saved; or ``refusal``, what the store
    refused (the name or a look-alike of it taken, busy, changed meanwhile)."""

    account: Account | None = None
    refusal: Exception | None = None


def change_username(request: HttpRequest, *, account: Account, username: str) -> UsernameChange:
    """Move ``account`` to ``username`` (already cleaned) in one transaction: the new name's
    locks are taken and the old one's released. The account's address, as it was, is told."""
    before = notices.addressee(account)
    try:
        changed = store.change_username(account, username, origin=timeline.origin_of(request))
    except STORE_REFUSALS as refusal:
        return UsernameChange(refusal=refusal)
    if changed.username != before.username:
        notices.username_changed(request, before, changed)
    return UsernameChange(account=changed)
