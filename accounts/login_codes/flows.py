"""Login by a mailed code (texted, to a phone number): asking for one (or for a new one), and signing in with it.

A code is 8 characters of :data:`ALPHABET` (no 0/O, 1/I/L: nothing to misread), valid
:data:`CODE_SECONDS` (OWASP ASVS 5 V6.5.5: ten minutes at most). The browser's (server-side)
session keeps who asked, until when, and a random secret, the code's *seed*; the code itself
is an HMAC of the seed, the stamp of the account's password, its address and its phone
number (:func:`code_for`), made when it is mailed and again when it is typed.

A code dies, and nothing else signs in with it, because:

1. it is used once: the sign-in is ONE transaction that writes the new session and deletes
   the session holding the code, guarded ``expires >= :now`` (of concurrent uses, one
   deletes it; the others' transactions are cancelled, and sign nobody in);
2. it is tried at most :data:`MAX_TRIES` times: each wrong code is counted by a guarded
   ``UpdateItem`` on the code's own counter (and on the login's ``login_failed`` counters),
   and a right code's transaction checks that every counter is still under its limit, so
   concurrent guesses cannot outnumber it (:class:`accounts.ratelimit.Guess`);
3. it expires after :data:`CODE_SECONDS`, by the session's record of when;
4. it is of this browser: it lives in the session that asked for it;
5. it is of the password, the address and the phone number it was sent under: a password
   change, a reset, an email change or a change of the number (a texted code dies with the
   number it went to) makes the code the account yields another one, so the sent code is
   wrong from then on; and the sign-in's transaction checks the account's password, address
   and number as the code was judged against them (:func:`.store.as_issued`), so a change
   committed between that read and the sign-in cancels it whole;
6. asking for a new one (:func:`resend_code`) draws a new seed: the old code is wrong from
   then on, and the new one gets tries of its own, at most :data:`MAX_RESENDS` times.

The second factor still applies: an account with one is staged for the second step, as after
a password. Asking tells nothing about the address: the same answer, the same session and
the same work before it (one GetItem, of the lock of the name or address, whether or not an
account holds it), and the mail once the answer is sent (:mod:`accounts.after_response`),
only to an account that may log in.
"""

from __future__ import annotations

import secrets
import time
from dataclasses import dataclass

from django.http import HttpRequest
from django.utils.crypto import constant_time_compare, salted_hmac

from .. import addresses, devices, dynamo, ratelimit, sessions, store
from ..adapter import get_adapter
from ..exceptions import Busy, InvalidUniqueValue, OverLimit, StaleItem, Unavailable
from ..internal.flows import login as login_flow
from ..mfa import store as mfa_store
from ..mfa.flows import login as second_step
from ..models import User
from ..phones.codes import text_code
from ..phones.numbers import looks_like_phone, parse_phone
from ..tables import Account
from ..verification import password_stamp, send_mail
from . import store as codes_store

ALPHABET = "ABCDEFGHJKMNPQRSTUVWXYZ23456789"
LENGTH = 8
CODE_SECONDS = 600
MAX_TRIES = 3
# New codes one request may ask for (allauth's LOGIN_BY_CODE_MAX_RESEND_COUNT when resending
# is on), each counted against ``reset_password`` as the first.
MAX_RESENDS = 2
SESSION_KEY = "accounts_login_code"
TRIES_ACTION = "login_code"
# What asking counts against (a mail to an address, as a reset is), per address and per client.
REQUEST_ACTION = "reset_password"
# The tries of one code: a day's window, so that its count decays by under 1% while the
# code lives (a sliding window weighs the previous one by the part still inside it).
TRIES_RULE = ratelimit.Rule(MAX_TRIES, 24 * 3600, "key")

# How a confirmation ended.
SIGNED_IN, SECOND_STEP, WRONG_CODE, ALREADY_USED, EXPIRED = (
    "signed_in",
    "second_step",
    "wrong_code",
    "already_used",
    "expired",
)


def new_code() -> str:
    """A fresh random code of :data:`LENGTH` characters of :data:`ALPHABET` (a
    reauthentication's: :mod:`accounts.mfa.flows.reauthentication`)."""
    return "".join(secrets.choice(ALPHABET) for _ in range(LENGTH))


def code_digest(code_id: str, code: str) -> str:
    """The HMAC a session keeps of a random ``code`` (:func:`new_code`), under its random
    ``code_id``."""
    return salted_hmac("accounts.login_codes", f"{code_id}:{code}", algorithm="sha256").hexdigest()


def normalize(code: str) -> str:
    """The code as typed, upper-cased, without spaces or dashes."""
    return "".join(character for character in code.upper() if character not in " -")


def code_for(seed: str, account: Account) -> str:
    """The code of ``seed`` for ``account`` as it is: :data:`LENGTH` characters of
    :data:`ALPHABET` from an HMAC (keyed by ``SECRET_KEY``) of the seed, the stamp of the
    account's password, its address and its phone number (a code may be texted to it). A new
    password (salted: even the same one set again), address or number makes another code."""
    phone = getattr(account, "phone", None) or ""
    material = f"{seed}:{password_stamp(account)}:{account.email}:{phone}"
    number = int.from_bytes(salted_hmac("accounts.login_codes.code", material, algorithm="sha256").digest(), "big")
    characters = []
    for _ in range(LENGTH):
        number, index = divmod(number, len(ALPHABET))
        characters.append(ALPHABET[index])
    return "".join(characters)


def request_limit_key(login: str) -> str:
    """What a request for a code for ``login`` counts under per address: what every spelling
    of it shares (its lock key), else the text as typed, folded."""
    return store.login_lock_key(login) or login.strip().casefold()


@dataclass(frozen=True)
class CodeMail:
    """A code to mail once the answer is sent: :meth:`send` (the work after the answer)."""

    request: HttpRequest
    account_id: str | None
    login: str
    seed: str

    def send(self) -> None:
        """Mail the code to the account the request named, if it still holds the name or
        address and may log in; else nothing. Asked by phone number (``ACCOUNTS_LOGIN_METHODS``'
        ``phone``), texted to it instead, as allauth does, and a number nobody holds is told
        so (the adapter's ``send_unknown_account_sms``). One GetItem (the account), only for a
        name, address or number somebody held when the code was asked for."""
        by_phone = store.login_field(self.login) == "phone"
        account = store.get_account(self.account_id) if self.account_id else None
        if account is None and by_phone and looks_like_phone(self.login):
            get_adapter(self.request).send_unknown_account_sms(parse_phone(self.login))
        if account is None or not still_named(account, self.login) or not second_step.can_log_in(account):
            return
        code = code_for(self.seed, account)
        if by_phone:
            text_code(self.request, user=User.from_account(account), phone=account.phone, code=code, login=True)
            return
        context = {"account": account, "code": code, "minutes": CODE_SECONDS // 60}
        # To the address typed when it is one of the account's verified ones, else its primary.
        to = addresses.held_address(account, self.login) or account.email
        send_mail(self.request, "login_code", to, context)


def still_named(account: Account, login: str) -> bool:
    """Whether ``account`` (as read after the answer) still holds ``login``: it may have
    changed its address or name since the lock was read."""
    try:
        if store.login_field(login) == "email":
            return store.is_same_address(account, login) or addresses.held_address(account, login) is not None
        return store.login_lock_key(login) in store.login_constraint(login).lock_keys(account)
    except InvalidUniqueValue:
        return False


def request_code(request: HttpRequest, login: str, *, next_url: str) -> CodeMail:
    """Remember a new code for ``login`` (a username or an address) in the browser's session;
    returns the :class:`CodeMail` to send once the answer is out.

    The same work whatever ``login`` names: one consistent GetItem of its lock (who holds it,
    see :func:`accounts.store.login_owner_id`) and the same session, whether or not an
    account holds it. The account is read, and the code made and mailed, only after the
    answer (:meth:`CodeMail.send`). The caller counts the request (``reset_password``)."""
    owner_id = store.login_owner_id(login)
    seed = secrets.token_urlsafe(32)
    request.session[SESSION_KEY] = {
        "id": owner_id,
        "login": login,
        "code_id": secrets.token_urlsafe(16),
        "seed": seed,
        "expires": int(time.time()) + CODE_SECONDS,
        "next": next_url,
        "resends": 0,
    }
    return CodeMail(request, owner_id, login, seed)


def pending(request: HttpRequest) -> dict | None:
    """The code this browser asked for, or ``None`` (none, expired, or of a session written
    before codes had seeds)."""
    found = request.session.get(SESSION_KEY)
    if not found or found["expires"] < time.time() or "seed" not in found:
        return None
    return found


def can_resend(request: HttpRequest) -> bool:
    """Whether this browser has a code pending that it may ask a new one for."""
    found = pending(request)
    return found is not None and found.get("resends", 0) < MAX_RESENDS


def resend_code(request: HttpRequest) -> CodeMail | None:
    """A new code for the pending request, in place of the old one (which is wrong from now
    on: the seed changed), with tries of its own, until the request's own expiry; returns
    its :class:`CodeMail` to send after the answer, or ``None`` when none is pending or it
    was resent :data:`MAX_RESENDS` times already. Counted as a request (``reset_password``,
    per address and per client: raises :class:`~accounts.ratelimit.RateLimited` past it).
    The same work whether or not an account holds the name or address."""
    found = pending(request)
    if found is None or not can_resend(request):
        return None
    ratelimit.consume(request, REQUEST_ACTION, key=request_limit_key(found["login"]))
    seed = secrets.token_urlsafe(32)
    request.session[SESSION_KEY] = {
        **found,
        "code_id": secrets.token_urlsafe(16),
        "seed": seed,
        "resends": found.get("resends", 0) + 1,
    }
    return CodeMail(request, found["id"], found["login"], seed)


def confirm_code(request: HttpRequest, code: str) -> tuple[str, User | None]:
    """Sign in with the code this browser asked for; returns ``(outcome, user)``:
    ``signed_in``, ``second_step`` (staged for the second factor), ``wrong_code`` (counted;
    also a code mailed before the account's password or address changed), ``already_used``
    (used meanwhile, or the password or address changed since it was judged: nothing
    written) or ``expired``. Raises :class:`~accounts.ratelimit.RateLimited` past the code's
    tries or the login's limits, for a wrong code and a right one alike."""
    found = pending(request)
    if found is None:
        return EXPIRED, None
    # The partition, not the account alone: its sessions and slots are what the sign-in's
    # write ends and takes under ACCOUNTS_MAX_SESSIONS (a slot guessed unread is refused).
    # Nobody's code reads a partition nobody has (the code's id): the same Query either way.
    account, others = store.read_partition(found["id"] or found["code_id"])
    counters = [ratelimit.Counter(TRIES_ACTION, TRIES_RULE, found["code_id"])]
    counters += devices.login_attempt(request, found["login"], account).counters
    guess = ratelimit.Guess(request, TRIES_ACTION, counters=counters)
    guess.take(dynamo.batch_get(guess.keys))
    guess.check()
    right = account is not None and constant_time_compare(code_for(found["seed"], account), normalize(code))
    if not right or not second_step.can_log_in(account):
        guess.fail()
        return WRONG_CODE, None
    if isinstance(request.session, sessions.SessionStore):
        request.session.note_account_items(others)
    user = User.from_account(account)
    # Noted before the login's one write, which then holds it.
    by_phone = store.login_field(found["login"]) == "phone"
    login_flow.record_method(
        request, {"method": "code", **({"phone": account.phone} if by_phone else {"email": account.email})}
    )
    if second_step.needs_second_step(user, request):
        del request.session[SESSION_KEY]
        second_step.stage(request, user, found["next"])
        return SECOND_STEP, user
    half_login = request.session.session_key
    checks = [codes_store.as_issued(account), *mfa_store.limit_checks(guess.conditions())]
    try:
        second_step.sign_in(request, user, checks)
    except OverLimit as error:
        request.session = type(request.session)(half_login)
        raise guess.refused(error.counters) from error
    except Busy as error:
        request.session = type(request.session)(half_login)
        raise Unavailable(f"DynamoDB is busy; the code was not judged: {error}") from error
    except StaleItem:
        return ALREADY_USED, None
    return SIGNED_IN, user
