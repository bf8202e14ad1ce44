"""Reauthentication: a fresh password or passkey before sensitive changes.

The session records when its person last proved who they are (:data:`AUTHENTICATED_AT_SESSION_KEY`):
a login does, and so does the reauthentication page. Sensitive pages
(:class:`ReauthenticationRequiredMixin`: adding or removing an authenticator, changing the
email or the password, deleting the account, logging out the other sessions) send anyone
whose proof is older than ``ACCOUNTS_REAUTHENTICATION_TIMEOUT`` to that page first.
"""

import time
from urllib.parse import urlencode

from django.http import HttpRequest
from django.shortcuts import redirect, resolve_url
from django.urls import reverse

from ... import ratelimit, sessions
from ...app_settings import app_settings
from .. import passkeys, store

AUTHENTICATED_AT_SESSION_KEY = "accounts_authenticated_at"
RATE_LIMIT_ACTION = "reauthenticate"


def record(request):
    """Note that the person of ``request`` has just proved who they are."""
    request.session[AUTHENTICATED_AT_SESSION_KEY] = int(time.time())


def record_login(sender, request, user, **kwargs):
    """``user_logged_in`` receiver: a login is a fresh authentication."""
    if hasattr(request, "session"):
        record(request)


def is_fresh(request):
    """Whether the person of ``request`` proved who they are within the timeout."""
    at = request.session.get(AUTHENTICATED_AT_SESSION_KEY)
    return at is not None and time.time() - at <= app_settings.REAUTHENTICATION_TIMEOUT


def count_password_check(request: HttpRequest | None, user) -> None:
    """Count one check of ``user``'s password against ``reauthenticate``, per account: this
    page's and every change form's current-password field share the one count, so a session
    cannot guess the password on a form the limit does not watch. Raises
    :class:`~accounts.ratelimit.RateLimited` (the password is then not checked)."""
    ratelimit.consume(request, RATE_LIMIT_ACTION, user=user.pk)


def with_password(request, password):
    """Reauthenticate with the account's password. Returns whether it was right; each try
    counts against ``reauthenticate`` (raises :class:`~accounts.ratelimit.RateLimited`)."""
    count_password_check(request, request.user)
    if not request.user.check_password(password):
        return False
    record(request)
    return True


def with_passkey(request, credential_json):
    """Reauthenticate with a passkey of the account (user verification required). Raises
    :class:`~accounts.mfa.passkeys.PasskeyRefused` or
    :class:`~accounts.exceptions.StaleItem` (the challenge or the passkey was used
    meanwhile: this request's session is then emptied).

    The challenge is used once whatever the passkey's counter (a synced passkey reports 0
    every time, so its counter's guard lets one answer through any number of times): the
    session that holds it gets a new key, and ONE transaction puts the new session, deletes
    the old one ``[expires >= :now]`` and records the passkey's use ``[sign_count as read]``
    (:func:`accounts.transactions.plan_sign_in`, as a sign-in). Of requests that read the
    same challenge, only the first deletes its session; the others are cancelled whole. With
    another session engine the use is recorded alone, and only the counter guards it.
    """
    challenge = passkeys.take_challenge(request, passkeys.REAUTHENTICATE)
    assertion = passkeys.read_assertion(credential_json)
    account, passkey = store.read_for_passkey(request.user.pk, assertion.credential_id)
    if account is None or passkey is None or passkey.credential_id not in (account.passkeys or ()):
        raise passkeys.PasskeyRefused(passkeys.UNKNOWN, "not a passkey of this account")
    changes = passkeys.verify_assertion(request, assertion, challenge, passkey, require_user_verification=True)
    spends = [store.passkey_spend(passkey, changes)]
    if not isinstance(request.session, sessions.SessionStore):
        store.spend(*spends)
        record(request)
        return
    spent_session = sessions.raw_key(request.session.session_key)
    request.session.cycle_key()
    record(request)
    write = request.session.prepare_write()
    try:
        store.sign_in(write.put, write.deletes, spent_session, spends)
    except BaseException:
        request.session.discard()
        raise
    request.session.written(write)


def reauthenticate_url(request, back_to: str | None = None) -> str:
    """The reauthentication page, coming back to ``back_to``, else to this page (a GET) or
    to the profile."""
    if back_to is None:
        back_to = request.get_full_path() if request.method == "GET" else resolve_url("accounts:profile")
    return f"{reverse('accounts:mfa:reauthenticate')}?{urlencode({'next': back_to})}"


class ReauthenticationRequiredMixin:
    """A view for signed-in people who proved who they are within
    ``ACCOUNTS_REAUTHENTICATION_TIMEOUT``; others go to the reauthentication page first
    (anonymous visitors are left to the login-required check)."""

    def dispatch(self, request, *args, **kwargs):
        if request.user.is_authenticated and not is_fresh(request):
            return redirect(reauthenticate_url(request))
        return super().dispatch(request, *args, **kwargs)
