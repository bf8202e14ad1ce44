"""Deleting the signed-in account (its current password, and a fresh proof, already
checked by the front end)."""

from __future__ import annotations

from dataclasses import dataclass

from django.contrib.auth import logout
from django.http import HttpRequest

from ... import store
from ...form_errors import STORE_REFUSALS
from ...tables import Account


@dataclass(frozen=True)
class Deletion:
    """What became of a deletion: done (this session logged out), or ``refusal``: what the
    store refused (busy, changed meanwhile), nothing deleted."""

    refusal: Exception | None = None


def delete_account(request: HttpRequest, *, account: Account) -> Deletion:
    """Delete ``account`` and release every value it holds, in one transaction, then log
    this session out (the account's other sessions die with it)."""
    try:
        store.delete_account(account, session=request.session)
    except STORE_REFUSALS as refusal:
        return Deletion(refusal=refusal)
    logout(request)
    return Deletion()
