"""New recovery codes, readable again by the session that generated them for a short while.

The account stores its recovery codes as digests only (:mod:`.recovery_codes`): once made,
nobody can read them back from the table. Yet a person who turns the authenticator app on in
allauth's React app sees them on the next screen, which asks for them
(``GET account/authenticators/recovery-codes``), as django-allauth shows them. So the session
that generated a set keeps it, for ``ACCOUNTS_MFA_RECOVERY_CODES_DISPLAY_TIMEOUT`` (default
10 minutes), sealed:

1. encrypted and authenticated (JWE, ``dir`` + ``A256GCM``, through joserfc) under a key
   derived from ``SECRET_KEY``, the session's key and the account's id: the session item in
   DynamoDB, a backup or an export of the table (the audit's files) hold ciphertext, which
   nobody reads without the site's secret;
2. bound to that session and that account: the key changes with the session's key, so a login
   or a password change (which gives the session a new key, and ends every other session)
   makes the set unreadable, and no other session can read it, even with a copy of its data;
3. until a deadline sealed inside with the codes, so it cannot be extended by editing the item;
4. narrowed to the codes still unused: a code spent since, or a set replaced since, is not
   shown; once none is left, the session forgets the set.

What a stolen session could read: within the window only, and only by passing the
reauthentication the operation asks for (``ACCOUNTS_REAUTHENTICATION_TIMEOUT``), the codes
that session itself generated and that are still unused; exactly what it could get by
generating new ones (which also mails the owner). Past the window, the answer lists no code
(``unused_codes: []``), only how many are left.
"""

from __future__ import annotations

import json
import time
from typing import Any

from django.contrib.sessions.backends.base import SessionBase
from django.utils.crypto import salted_hmac
from joserfc import jwe
from joserfc.errors import JoseError
from joserfc.jwk import OctKey

from ..app_settings import app_settings
from . import recovery_codes

SESSION_KEY = "accounts_mfa_shown_codes"
SALT = "accounts.mfa.shown_codes"
PROTECTED_HEADER = {"alg": "dir", "enc": "A256GCM"}


def _key(session: SessionBase, account_id: str) -> OctKey | None:
    """The sealing key of ``session`` for ``account_id`` (``None``: the session has no key yet)."""
    if not session.session_key:
        return None
    secret = salted_hmac(SALT, f"{session.session_key}:{account_id}", algorithm="sha256").digest()
    return OctKey.import_key(secret)


def remember(session: SessionBase, account_id: str, codes: list[str]) -> None:
    """Keep ``codes``, just generated for account ``account_id``, readable by ``session`` for
    the display timeout (sealed: see the module)."""
    key = _key(session, account_id)
    if key is None or not codes:
        return
    until = int(time.time() + app_settings.MFA_RECOVERY_CODES_DISPLAY_TIMEOUT)
    plaintext = json.dumps({"account": account_id, "codes": codes, "until": until}).encode()
    session[SESSION_KEY] = jwe.encrypt_compact(PROTECTED_HEADER, plaintext, key)


def readable(session: SessionBase, account: Any) -> list[str] | None:
    """The codes ``session`` generated for ``account`` that are still unused, in the order
    they were shown, while the display timeout lasts; ``None`` when there are none to show
    (none generated here, the window passed, another session key, a set replaced or used up).
    A set that can no longer be shown is forgotten."""
    sealed = session.get(SESSION_KEY)
    if not sealed:
        return None
    found = _unseal(session, account.id, sealed)
    unused = set(account.recovery_codes or ())
    codes = [code for code in (found or ()) if recovery_codes.digest(account.id, code) in unused]
    if not codes:
        forget(session)
        return None
    return codes


def _unseal(session: SessionBase, account_id: str, sealed: Any) -> list[str] | None:
    key = _key(session, account_id)
    if key is None or not isinstance(sealed, str):
        return None
    try:
        content = json.loads(jwe.decrypt_compact(sealed, key).plaintext or b"")
    except (JoseError, ValueError):
        # Sealed under another session key, another account, or damaged: unreadable.
        return None
    if not isinstance(content, dict) or content.get("account") != account_id:
        return None
    if not isinstance(content.get("until"), int) or content["until"] < time.time():
        return None
    codes = content.get("codes")
    return [code for code in codes if isinstance(code, str)] if isinstance(codes, list) else None


def forget(session: SessionBase) -> None:
    """Drop the set ``session`` keeps, if any."""
    if SESSION_KEY in session:
        del session[SESSION_KEY]
