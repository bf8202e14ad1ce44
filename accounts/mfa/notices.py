"""The mails second factors send to the account's address, through
:func:`accounts.notices.notify` (the one place notices go out, on their own budget): an
authenticator added or removed, recovery codes made anew or used. Each is a notice:
whoever did not do it should act."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from django.http import HttpRequest
from django.utils.translation import gettext_lazy as _

from ..notices import addressee, notify
from ..tables import Account

if TYPE_CHECKING:
    from django_stubs_ext import StrOrPromise

# What each kind of authenticator is called in a notice.
KINDS: dict[str, StrOrPromise] = {
    "totp": _("an authenticator app"),
    "passkey": _("a passkey"),
    "recovery_codes": _("recovery codes"),
}


def authenticator_added(request: HttpRequest, account: Account, kind: str, name: str = "") -> str | None:
    """Tell the account's address that an authenticator of ``kind`` (named ``name``) was added."""
    context = _context(account, kind, name)
    return notify(request, addressee(account), "mfa_authenticator_added", context, with_reset_link=False)


def authenticator_removed(
    request: HttpRequest, account: Account, kind: str, name: str = "", by_staff: bool = False
) -> str | None:
    """Tell the account's address that an authenticator was removed (``by_staff``: by staff)."""
    context = {**_context(account, kind, name), "by_staff": by_staff}
    return notify(request, addressee(account), "mfa_authenticator_removed", context, with_reset_link=False)


def recovery_code_used(request: HttpRequest, account: Account, left: int) -> str | None:
    """Tell the account's address that a recovery code was used to log in; ``left`` remain."""
    context = {"account": account, "left": left}
    return notify(request, addressee(account), "mfa_recovery_code_used", context, with_reset_link=False)


def _context(account: Account, kind: str, name: str) -> dict[str, Any]:
    described = KINDS[kind]
    if name:
        described = _("%(authenticator)s “%(name)s”") % {"authenticator": described, "name": name}
    return {"account": account, "authenticator": described}
