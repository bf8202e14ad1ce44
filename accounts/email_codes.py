"""Codes mailed in place of a link: to prove an address (at sign-up, at a login of an
unverified account, for an email change, added to an account) and to reset a password, when
``ACCOUNTS_EMAIL_VERIFICATION_BY_CODE_ENABLED`` or ``ACCOUNTS_PASSWORD_RESET_BY_CODE_ENABLED``
is on (django-allauth's ``..._BY_CODE_ENABLED``).

A code has allauth's format: 8 characters of :data:`ALPHABET` (RFC 8628 §6.1: no vowel, so
no word, nothing to misread), mailed as ``XXXX-XXXX``; typed in any case, with or without
its dash or spaces. The session that asked keeps what the code is for (the account, the
address, the stamp of the account's password, the email change's nonce), until when, and
the code's HMAC under a random id: never the code.

A code stops working, and nothing else is done with it, because:

1. it is used once: what it does is ONE transaction guarded by the account as the code was
   issued for (:mod:`accounts.internal.flows.email_codes` names each guard), which its own
   use changes: a verification needs the account still unverified (``G_VERIFY_SAME_SIGNUP``),
   an email change its nonce (``G_APPLY_PENDING_AS_READ``), an added address the set of
   addresses waiting for their proof as read, which its verification leaves
   (``G_UNVERIFIED_AS_READ``), a reset its ``updated`` stamp as read, after the password
   stamp was found unchanged (``G_CHANGE_UPDATED_AS_READ``);
2. it is tried at most :data:`MAX_TRIES` times: each wrong code is counted by a guarded
   ``UpdateItem`` on the code's own counter, and a right code's transaction checks that the
   counter is still under the limit (``G_LIMIT_UNDER``), so concurrent guesses cannot
   outnumber it (:class:`accounts.ratelimit.Guess`, as a login code);
3. it expires: :data:`VERIFY_EMAIL`, :data:`CHANGE_EMAIL` and :data:`ADD_EMAIL` after 15 minutes,
   :data:`RESET_PASSWORD` after 3, allauth's defaults;
4. it is of this session: it lives in the session that asked, and a new code replaces it;
5. it dies with a new password or another address: its session keeps the stamp of the
   password and the address it was mailed for, and the account as read must still match.
"""

from __future__ import annotations

import secrets
import time
from dataclasses import dataclass
from typing import Any

from django.contrib.sessions.backends.base import SessionBase
from django.utils.crypto import constant_time_compare, salted_hmac

from . import dynamo, ratelimit, transactions
from .tables import PROFILE_SORT_KEY, Account, account_pk, get_account_model
from .tables.raw import is_gone

ALPHABET = "BCDFGHJKLMNPQRSTVWXZ"
LENGTH = 8
MAX_TRIES = 3
DIGEST_SALT = "accounts.email_codes"
# The tries of one code: a day's window, so that its count decays by under 1% while the
# code lives (a sliding window weighs the previous one by the part still inside it).
TRIES_RULE = ratelimit.Rule(MAX_TRIES, 24 * 3600, "key")


@dataclass(frozen=True)
class Purpose:
    """What a code is for: its ``name`` (its session key and its tries' counter), and how
    long it lives (``seconds``)."""

    name: str
    seconds: int

    @property
    def session_key(self) -> str:
        return f"accounts_code_{self.name}"


VERIFY_EMAIL = Purpose("verify_email", 15 * 60)
CHANGE_EMAIL = Purpose("change_email", 15 * 60)
# An address added to an account (ACCOUNTS_MAX_EMAIL_ADDRESSES above 1), waiting for its proof.
ADD_EMAIL = Purpose("add_email", 15 * 60)
RESET_PASSWORD = Purpose("reset_password", 3 * 60)


@dataclass(frozen=True)
class PendingCode:
    """A code a session waits for: for account ``account_id`` (``None``: nobody's, a code
    nobody knows stands in) and ``email``; ``stamp``: the stamp of the account's password
    then; ``nonce``: the email change's; ``confirmed``: a reset code already typed right
    (the new password comes next)."""

    purpose: Purpose
    account_id: str | None
    email: str
    code_id: str
    digest: str
    expires: int
    stamp: str = ""
    nonce: str | None = None
    confirmed: bool = False


def new_code() -> str:
    """A fresh code, as mailed: ``XXXX-XXXX``."""
    code = "".join(secrets.choice(ALPHABET) for _ in range(LENGTH))
    return f"{code[: LENGTH // 2]}-{code[LENGTH // 2 :]}"


def normalize(code: str) -> str:
    """The code as typed, upper-cased, without dashes, spaces or other punctuation."""
    return "".join(character for character in code.upper() if character.isalnum())


def _digest(code_id: str, code: str) -> str:
    return salted_hmac(DIGEST_SALT, f"{code_id}:{normalize(code)}", algorithm="sha256").hexdigest()


def issue(
    session: SessionBase,
    purpose: Purpose,
    *,
    account: Account | None,
    email: str,
    stamp: str = "",
    nonce: str | None = None,
) -> str:
    """Keep a new code for ``purpose`` in ``session`` (replacing the one it had) and return it,
    to mail. ``account``: whose it is; ``None`` keeps a code nobody knows in its place, so
    that the session looks the same whether or not an account uses ``email``."""
    code, code_id = new_code(), secrets.token_urlsafe(16)
    session[purpose.session_key] = {
        "id": account.id if account is not None else None,
        "email": email,
        "code_id": code_id,
        "digest": _digest(code_id, code if account is not None else new_code()),
        "expires": int(time.time()) + purpose.seconds,
        "stamp": stamp,
        "nonce": nonce,
        "confirmed": False,
    }
    return code


def pending(session: SessionBase, purpose: Purpose) -> PendingCode | None:
    """The code ``session`` waits for, for ``purpose``; ``None`` when none, or expired."""
    found = session.get(purpose.session_key)
    if not isinstance(found, dict) or found.get("expires", 0) < time.time():
        return None
    return PendingCode(
        purpose,
        found["id"],
        found["email"],
        found["code_id"],
        found["digest"],
        found["expires"],
        found.get("stamp", ""),
        found.get("nonce"),
        bool(found.get("confirmed")),
    )


def forget(session: SessionBase, purpose: Purpose) -> None:
    """The session stops waiting for a code for ``purpose``."""
    session.pop(purpose.session_key, None)


def mark_confirmed(session: SessionBase, found: PendingCode) -> None:
    """Note that ``found`` was typed right (a reset: the new password comes next), and give
    the person its whole time again to choose it, as allauth does."""
    kept = session.get(found.purpose.session_key)
    if isinstance(kept, dict) and kept.get("code_id") == found.code_id:
        expires = int(time.time()) + found.purpose.seconds
        session[found.purpose.session_key] = {**kept, "confirmed": True, "expires": expires}


def matches(found: PendingCode, code: str) -> bool:
    """Whether ``code`` is the one ``found`` was issued with (in constant time)."""
    return constant_time_compare(_digest(found.code_id, code), found.digest)


@dataclass
class Attempt:
    """A code typed: ``account`` as read with its tries' counter (``None``: gone, or
    nobody's), and the :class:`~accounts.ratelimit.Guess` that counts a wrong one and gives a
    right one's transaction its checks (:meth:`limit_actions`)."""

    found: PendingCode
    account: Account | None
    guess: ratelimit.Guess

    def limit_actions(self) -> list[transactions.Action]:
        """The ``ConditionCheck`` of each counter, still under its limit, for the right code's
        transaction (its ``also``)."""
        return [transactions.limit_action(params) for params in self.guess.conditions()]

    def tries_left(self) -> bool:
        """Whether the code may be tried again, by its counter as last counted."""
        return all(counter.fits(time.time()) for counter in self.guess.counters)


def attempt(request: Any, found: PendingCode) -> Attempt:
    """Read the account ``found`` is for with the code's tries' counter, in one
    ``BatchGetItem``, as an :class:`Attempt`; raises :class:`~accounts.ratelimit.RateLimited`
    when the code has no try left."""
    counter = ratelimit.Counter(f"{found.purpose.name}_code", TRIES_RULE, found.code_id)
    guess = ratelimit.Guess(request, f"{found.purpose.name}_code", counters=[counter])
    account_key = [dynamo.key(account_pk(found.account_id), PROFILE_SORT_KEY)] if found.account_id else []
    items = dynamo.batch_get([*guess.keys, *account_key])
    guess.take(items)
    profile = next((raw for raw in items if account_key and raw["PK"] == account_key[0]["PK"]), None)
    account = get_account_model().from_raw_data(profile) if profile is not None and not is_gone(profile) else None
    guess.check()
    return Attempt(found, account, guess)
