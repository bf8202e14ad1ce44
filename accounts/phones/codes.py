"""The codes texted to phone numbers: made, texted through the adapter, kept and judged.

A code is made by the adapter's ``generate_phone_verification_code`` (by default a mailed
login code's kind: 8 characters nothing can be misread in) and
texted by its ``send_verification_code_sms``, which the host project implements (the one
place the app texts: :func:`text_code`). The browser's (server-side) session keeps a
:class:`SentCode`: whose code, for which number, the account as it was when the code was
sent, and the code's HMAC under a random id; never the code.

A code verifies its number once, for the account it was sent for, and nothing else, because:

1. it is bound to the number: its HMAC covers the number, and the verification writes that
   number, nothing the request says;
2. it is bound to the account as it was when it was sent: its number then, whether that was
   verified, and the stamp of its password (:func:`accounts.verification.password_stamp`).
   The verification compares them with the account as read, and its ONE transaction is
   guarded by them as read (the number and its flag, which decide the lock, and
   ``password = :read``): a number changed, verified or removed, or a password changed or
   reset, since the code was sent, before the read or between the read and the write,
   kills the code (whoever started the verification may be who the new password locks out);
3. it is used once: the transaction changes what it is guarded by (the number, or its flag),
   so of two uses of one code exactly one commits, and the session forgets the code;
4. it is tried at most ``ACCOUNTS_PHONE_VERIFICATION_MAX_ATTEMPTS`` times: each wrong code is
   counted by a guarded ``UpdateItem`` on the code's own counter, and a right code's
   transaction checks the counter is still under its limit (:class:`accounts.ratelimit.Guess`);
5. it expires after ``ACCOUNTS_PHONE_VERIFICATION_TIMEOUT``, and lives in the session that
   asked for it.

Sending is limited too: ``verify_phone`` per number and per client (django-allauth's budget)
for a verification code, and ``sms`` per number for every text the app sends, whatever sent
it (the daily cap).
"""

from __future__ import annotations

import logging
import secrets
import time
from collections.abc import Mapping
from dataclasses import asdict, dataclass
from typing import Any

from django.http import HttpRequest
from django.utils.crypto import constant_time_compare, salted_hmac

from .. import ratelimit
from ..adapter import get_adapter
from ..app_settings import app_settings
from ..models import User
from ..tables import Account
from ..verification import FAILED, SENT, TOO_SOON, password_stamp
from .numbers import normalize_phone_key
from .store import is_verified

logger = logging.getLogger("accounts.phones")

# The rate limit of every text the app sends, per number (ACCOUNTS_RATE_LIMITS).
SMS_LIMIT = "sms"
# The rate limit of asking for a verification code, per number and per client.
VERIFY_LIMIT = "verify_phone"
# The tries of one code (tries_counter).
TRIES_ACTION = "phone_code"

__all__ = ["FAILED", "SENT", "TOO_SOON", "SentCode", "digest", "send_code", "text_code", "unsent_code"]


@dataclass(frozen=True)
class SentCode:
    """What a session keeps of a code texted to ``phone`` (E.164) for account ``account_id``:
    the account's number when it was sent (``held``, ``None`` for none) and whether it was
    verified, its password's stamp, the code's random id and HMAC, when it dies
    (``expires``, epoch seconds), how many new codes and numbers it was given (``resends``,
    ``changes``) and what became of its text (``outcome``: ``sent``, ``too_soon``, ``failed``)."""

    account_id: str
    phone: str
    held: str | None
    held_verified: bool
    stamp: str
    code_id: str
    digest: str
    expires: int
    resends: int = 0
    changes: int = 0
    outcome: str = SENT

    def as_session(self) -> dict[str, Any]:
        """The plain dict a session stores."""
        return asdict(self)

    @classmethod
    def from_session(cls, data: Mapping[str, Any] | None) -> SentCode | None:
        """The code a session stored, or ``None`` (none, damaged, or expired)."""
        try:
            sent = cls(**data) if data else None
        except TypeError:
            return None
        return sent if sent is not None and sent.expires >= time.time() else None

    def is_right(self, code: str) -> bool:
        """Whether ``code`` (as typed: any case, spaces and dashes) is this code."""
        return constant_time_compare(digest(self.code_id, self.phone, normalize(code)), self.digest)

    def is_for(self, account: Account | None) -> bool:
        """Whether ``account`` (as read now) is still as it was when the code was sent: the
        same account, number, verification and password (see the module's 2.)."""
        return (
            account is not None
            and account.id == self.account_id
            and account.phone == self.held
            and is_verified(account) == self.held_verified
            and constant_time_compare(password_stamp(account), self.stamp)
        )

    def tries(self) -> ratelimit.Counter:
        """The counter of this code's wrong tries (``ACCOUNTS_PHONE_VERIFICATION_MAX_ATTEMPTS``)."""
        return tries_counter(self.code_id)


def tries_counter(code_id: str) -> ratelimit.Counter:
    """The counter of the wrong tries of the code ``code_id``: a day's window, so that its
    count decays by under 1% while the code lives."""
    rule = ratelimit.Rule(app_settings.PHONE_VERIFICATION_MAX_ATTEMPTS, 24 * 3600, "key")
    return ratelimit.Counter(TRIES_ACTION, rule, code_id)


def normalize(code: str) -> str:
    """The code as typed, upper-cased, without spaces or dashes (as a mailed login code's)."""
    return "".join(character for character in code.upper() if character not in " -")


def digest(code_id: str, phone: str, code: str) -> str:
    """The HMAC a session keeps of ``code``, texted to ``phone``, under its random ``code_id``."""
    return salted_hmac("accounts.phones.code", f"{code_id}:{phone}:{code}", algorithm="sha256").hexdigest()


def text_code(request: HttpRequest | None, *, user: User, phone: str, code: str, **kwargs: Any) -> str:
    """Text ``code`` to ``phone`` for ``user`` through the adapter's
    ``send_verification_code_sms`` (``kwargs`` go along: ``login=True`` for a login code).
    The one place the app texts a code: each text counts against ``sms`` per number; over
    it, nothing is sent. Returns ``sent``, ``too_soon`` or ``failed`` (the adapter raised:
    logged)."""
    try:
        ratelimit.consume(request, SMS_LIMIT, key=normalize_phone_key(phone))
    except ratelimit.RateLimited:
        logger.warning("No code was texted to %s: too many texts to that number.", phone)
        return TOO_SOON
    try:
        get_adapter(request).send_verification_code_sms(user=user, phone=phone, code=code, **kwargs)
    except Exception:
        logger.exception("The code to %s could not be texted.", phone)
        return FAILED
    return SENT


def send_code(
    request: HttpRequest,
    *,
    account: Account,
    phone: str,
    owner: str | None,
    resends: int = 0,
    changes: int = 0,
    expires: int | None = None,
) -> SentCode:
    """Text a new code for ``phone`` to ``phone``, for ``account`` (as read), and return what
    the session keeps of it. Counts against ``verify_phone`` first (per number and per
    client: raises :class:`~accounts.ratelimit.RateLimited` past it, nothing sent).

    ``owner``: the account id whose lock holds ``phone`` as read (one GetItem of the lock,
    which chooses the text, never whether the number is taken). A number another account
    holds gets the adapter's ``send_account_already_exists_sms`` instead of a code, and the
    session keeps the HMAC of a code nobody knows: the answer, the session and the page are
    the same, so nobody learns whose number it is, and its owner is told.
    ``resends``, ``changes``, ``expires``: carried over from the code this one replaces."""
    ratelimit.consume(request, VERIFY_LIMIT, key=normalize_phone_key(phone))
    adapter = get_adapter(request)
    if owner is not None and owner != account.id:
        adapter.send_account_already_exists_sms(phone)
        return unsent_code(account, phone, SENT, resends=resends, changes=changes, expires=expires)
    user = User.from_account(account)
    code = adapter.generate_phone_verification_code(user=user, phone=phone)
    outcome = text_code(request, user=user, phone=phone, code=code)
    return _kept(account, phone, code, outcome, resends=resends, changes=changes, expires=expires)


def unsent_code(
    account: Account, phone: str, outcome: str, *, resends: int = 0, changes: int = 0, expires: int | None = None
) -> SentCode:
    """What the session keeps when no code went to ``phone`` (``outcome``: ``too_soon`` past
    the limits, or ``sent`` when its owner was told instead): the HMAC of a code nobody
    knows, so the verification waits as any other and nothing verifies it."""
    nobodys = secrets.token_hex(16)  # never texted, never shown: nothing can be typed for it
    return _kept(account, phone, nobodys, outcome, resends=resends, changes=changes, expires=expires)


def _kept(
    account: Account, phone: str, code: str, outcome: str, *, resends: int, changes: int, expires: int | None
) -> SentCode:
    code_id = secrets.token_urlsafe(16)
    return SentCode(
        account_id=account.id,
        phone=phone,
        held=account.phone,
        held_verified=is_verified(account),
        stamp=password_stamp(account),
        code_id=code_id,
        digest=digest(code_id, phone, normalize(code)),
        expires=expires or int(time.time()) + app_settings.PHONE_VERIFICATION_TIMEOUT,
        resends=resends,
        changes=changes,
        outcome=outcome,
    )
