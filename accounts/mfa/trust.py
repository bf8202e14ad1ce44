"""Trusted browsers (django-allauth's ``MFA_TRUST_ENABLED``, here ``ACCOUNTS_MFA_TRUST_ENABLED``):
after a second step, a person may trust the browser, and later logins of the account from it
skip the second step for ``ACCOUNTS_MFA_TRUST_COOKIE_AGE`` (default 14 days).

The trust lives in the browser, in the signed cookie :data:`COOKIE_NAME` (HttpOnly,
SameSite=Lax, Secure on an HTTPS site), nowhere in the table: a list of ``[fingerprint,
issued at]``, at most :data:`MAX_TRUSTS`. A trust lets a login skip the second step only
while all of these hold:

1. the cookie's signature holds (``SECRET_KEY``): nobody makes one up or edits one;
2. it was issued less than ``ACCOUNTS_MFA_TRUST_COOKIE_AGE`` ago, by the date signed in it;
3. its fingerprint is the account's as read at that login: an HMAC of the account's id, the
   stamp of its password (:func:`accounts.verification.password_stamp`), its authenticator
   app's secret, its passkeys and its set of recovery codes. So a trust is of one account
   only, and it dies, in every browser at once, when the password changes or is reset
   (nothing an intruder who trusted a browser set up survives the owner's new password), and
   when the authenticator app, a passkey or the recovery codes are added, removed or made
   anew, as django-allauth's trust dies with any change of the account's authenticators;
4. the account's second factor is not damaged (a wrong-typed attribute fails closed: such an
   account always goes to the second step, which refuses it).

Being a cookie, the trust is of a browser: the ``app`` client (no cookies) is never
offered it, as in django-allauth.
"""

from __future__ import annotations

import time
from typing import Any

from django.core import signing
from django.http import HttpRequest, HttpResponse
from django.utils.crypto import constant_time_compare, salted_hmac

from .. import devices
from ..app_settings import app_settings
from ..verification import password_stamp
from . import store

COOKIE_NAME = "accounts_mfa_trusted"
SALT = "accounts.mfa.trust"
# A shared computer: the most recent trusts stay (a cookie stays small).
MAX_TRUSTS = 10


def fingerprint(account: Any) -> str:
    """What a trust of ``account`` is bound to (see the module): any change of its password
    or of its authenticators changes it."""
    parts = [
        str(account.id),
        password_stamp(account),
        account.totp_secret or "",
        ",".join(sorted(account.passkeys or ())),
        ",".join(sorted({*(account.recovery_codes or ()), *(account.used_recovery_codes or ())})),
    ]
    return salted_hmac(SALT, "|".join(parts), algorithm="sha256").hexdigest()


def _trusts(request: HttpRequest) -> list[tuple[str, int]]:
    """``[(fingerprint, issued at)]`` of this browser's cookie still within the cookie age."""
    value = request.COOKIES.get(COOKIE_NAME)
    if not value:
        return []
    age = app_settings.MFA_TRUST_COOKIE_AGE
    try:
        entries = signing.loads(value, salt=SALT, max_age=age)
        trusts = [(str(found), int(issued)) for found, issued in entries]
    except (signing.BadSignature, TypeError, ValueError):
        return []
    return [(found, issued) for found, issued in trusts if issued + age.total_seconds() > time.time()]


def is_trusted(request: HttpRequest, account: Any) -> bool:
    """Whether this browser may skip the second step of a login of ``account`` (as read by
    that login): trust is on, and the browser holds a live trust of the account as it is now."""
    if not app_settings.MFA_TRUST_ENABLED or store.damaged_second_factor(account):
        return False
    expected = fingerprint(account)
    return any(constant_time_compare(found, expected) for found, _ in _trusts(request))


def trust(request: HttpRequest, response: HttpResponse, account: Any) -> None:
    """Trust this browser for ``account`` (just through its second step): add a trust to its
    cookie on ``response``, keeping its other live trusts (the most recent :data:`MAX_TRUSTS`)."""
    entries = [[fingerprint(account), int(time.time())], *([found, issued] for found, issued in _trusts(request))]
    value = signing.dumps(entries[:MAX_TRUSTS], salt=SALT, compress=True)
    devices.set_browser_cookie(request, response, COOKIE_NAME, value, app_settings.MFA_TRUST_COOKIE_AGE)
