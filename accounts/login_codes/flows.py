"""Login by a mailed code: asking for one, and signing in with it.

A code is 8 characters of :data:`ALPHABET` (no 0/O, 1/I/L: nothing to misread), valid
:data:`CODE_SECONDS` (OWASP ASVS 5 V6.5.5: ten minutes at most). The browser's (server-side)
session keeps who asked, until when, and the code's HMAC under a random id; never the code.

A code dies, and nothing else signs in with it, because:

1. it is used once: the sign-in is ONE transaction that writes the new session and deletes
   the session holding the code, guarded ``expires >= :now`` (of concurrent uses, one
   deletes it; the others' transactions are cancelled, and sign nobody in);
2. it is tried at most :data:`MAX_TRIES` times: each wrong code is counted by a guarded
   ``UpdateItem`` on the code's own counter (and on the login's ``login_failed`` counters),
   and a right code's transaction checks that every counter is still under its limit, so
   concurrent guesses cannot outnumber it (:class:`accounts.ratelimit.Guess`);
3. it expires after :data:`CODE_SECONDS`, by the session's record of when;
4. it is of this browser: it lives in the session that asked for it.

The second factor still applies: an account with one is staged for the second step, as after
a password. Asking tells nothing about the address: the same answer, and the same session,
whether or not an account uses it (a mail goes only to an account that may log in).
"""

import secrets
import time

from django.utils.crypto import constant_time_compare, salted_hmac

from .. import devices, dynamo, ratelimit, sessions, store
from ..adapter import get_adapter
from ..exceptions import Busy, OverLimit, StaleItem, Unavailable
from ..internal.flows import login as login_flow
from ..mfa import store as mfa_store
from ..mfa.flows import login as second_step
from ..models import User
from ..phones.codes import text_code
from ..phones.numbers import looks_like_phone, parse_phone
from ..verification import send_mail

ALPHABET = "ABCDEFGHJKMNPQRSTUVWXYZ23456789"
LENGTH = 8
CODE_SECONDS = 600
MAX_TRIES = 3
SESSION_KEY = "accounts_login_code"
TRIES_ACTION = "login_code"
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
    """A fresh code of :data:`LENGTH` characters of :data:`ALPHABET`."""
    return "".join(secrets.choice(ALPHABET) for _ in range(LENGTH))


def normalize(code: str) -> str:
    """The code as typed, upper-cased, without spaces or dashes."""
    return "".join(character for character in code.upper() if character not in " -")


def code_digest(code_id: str, code: str) -> str:
    """The HMAC a session keeps of ``code``, under its random ``code_id``."""
    return salted_hmac("accounts.login_codes", f"{code_id}:{code}", algorithm="sha256").hexdigest()


def request_code(request, login: str, *, next_url: str) -> None:
    """Remember a new code for ``login`` (a username or an address) in the browser's
    session, and mail it to the account's address when an account that may log in uses it.
    The session is the same either way (a code nobody knows stands in)."""
    account = store.get_by_login(login)
    code, code_id = new_code(), secrets.token_urlsafe(16)
    known = second_step.can_log_in(account)
    request.session[SESSION_KEY] = {
        "id": account.id if known else None,
        "login": login,
        "code_id": code_id,
        "digest": code_digest(code_id, code if known else new_code()),
        "expires": int(time.time()) + CODE_SECONDS,
        "next": next_url,
    }
    if known and store.login_field(login) == "phone":
        # Asked by phone number (ACCOUNTS_LOGIN_METHODS' "phone"): texted to it, as allauth does.
        text_code(request, user=User.from_account(account), phone=account.phone, code=code, login=True)
    elif known:
        send_mail(
            request, "login_code", account.email, {"account": account, "code": code, "minutes": CODE_SECONDS // 60}
        )
    elif account is None and store.login_field(login) == "phone" and looks_like_phone(login):
        get_adapter(request).send_unknown_account_sms(parse_phone(login))


def pending(request) -> dict | None:
    """The code this browser asked for, or ``None`` (none, or expired)."""
    found = request.session.get(SESSION_KEY)
    if not found or found["expires"] < time.time():
        return None
    return found


def confirm_code(request, code: str) -> tuple[str, User | None]:
    """Sign in with the code this browser asked for; returns ``(outcome, user)``:
    ``signed_in``, ``second_step`` (staged for the second factor), ``wrong_code`` (counted),
    ``already_used`` (used meanwhile: nothing written) or ``expired``. Raises
    :class:`~accounts.ratelimit.RateLimited` past the code's tries or the login's limits, for
    a wrong code and a right one alike."""
    found = pending(request)
    if found is None:
        return EXPIRED, None
    # The partition, not the account alone: its sessions and slots are what the sign-in's
    # write ends and takes under ACCOUNTS_MAX_SESSIONS (a slot guessed unread is refused).
    account, others = store.read_partition(found["id"]) if found["id"] else (None, [])
    counters = [ratelimit.Counter(TRIES_ACTION, TRIES_RULE, found["code_id"])]
    counters += devices.login_attempt(request, found["login"], account).counters
    guess = ratelimit.Guess(request, TRIES_ACTION, counters=counters)
    guess.take(dynamo.batch_get(guess.keys))
    guess.check()
    right = constant_time_compare(code_digest(found["code_id"], normalize(code)), found["digest"])
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
    try:
        second_step.sign_in(request, user, mfa_store.limit_checks(guess.conditions()))
    except OverLimit as error:
        request.session = type(request.session)(half_login)
        raise guess.refused(error.counters) from error
    except Busy as error:
        request.session = type(request.session)(half_login)
        raise Unavailable(f"DynamoDB is busy; the code was not judged: {error}") from error
    except StaleItem:
        return ALREADY_USED, None
    return SIGNED_IN, user
