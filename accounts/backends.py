"""Authentication against accounts stored in DynamoDB."""

from django.contrib.auth.backends import BaseBackend
from django.core.exceptions import PermissionDenied

from . import devices, ratelimit, sessions, store
from .adapter import get_adapter
from .exceptions import InvalidUniqueValue
from .models import User
from .pending import pending_account_id

# Where authenticate() leaves an account whose password was right but whose address is
# not verified yet (ACCOUNTS_EMAIL_VERIFICATION = "mandatory"), for the login form.
UNVERIFIED_ATTRIBUTE = "accounts_unverified_account"
# Where authenticate() leaves the RateLimited of an attempt refused before its password
# was checked, for the login form (authenticate() itself answers None).
RATE_LIMITED_ATTRIBUTE = "accounts_rate_limited"


def may_log_in(account):
    """Whether the account may log in as far as verification goes: in mode "mandatory" (or
    with ``ACCOUNTS_PREVENT_ENUMERATION``) only once its address is verified."""
    return not store.verification_required() or store.is_verified(account)


class AccountBackend(BaseBackend):
    """Log in with a username or an email address, in any case or width.

    With a request, the ``login_failed`` limit applies (:func:`accounts.devices.login_attempt`):
    the attempt is counted before the password is checked, and one over the limit is
    refused (``PermissionDenied``, the :class:`~accounts.ratelimit.RateLimited` left on the
    request) without hashing anything; an attempt that does not fail is taken back.

    A login reads the lock item of the username or email, then the account it points to
    (one ``BatchGetItem`` for both from a browser that logged in to that account before);
    loading the user of a session costs one ``GetItem``, or none when :mod:`accounts.sessions`
    read the account together with the session.
    """

    def authenticate(self, request, username=None, password=None, **kwargs):
        if username is None:
            username = kwargs.get(User.USERNAME_FIELD)
        if username is None or password is None:
            return None
        account = self._find(request, username)
        attempt = devices.login_attempt(request, username, account) if request is not None else None
        if attempt is not None:
            try:
                attempt.check()
            except ratelimit.RateLimited as error:
                setattr(request, RATE_LIMITED_ATTRIBUTE, error)
                raise PermissionDenied from error
        if account is None:
            # Run the default password hasher once to reduce the timing difference between
            # an existing and a nonexistent account (Django ticket #20760).
            User().set_password(password)
            return None
        user = User.from_account(account)
        if not (user.check_password(password) and self.user_can_authenticate(user)):
            return None
        if attempt is not None:
            attempt.succeed()
        if not may_log_in(account):
            if request is not None:
                # The login form explains this, and offers to send the link again.
                setattr(request, UNVERIFIED_ATTRIBUTE, account)
            return None
        return user

    def _find(self, request, login):
        likely = devices.trusted_accounts(request) if request is not None else ()
        try:
            account = store.get_by_login(login, likely=likely)
        except InvalidUniqueValue:
            # Empty, or longer than any lock key can be: nobody holds it.
            return None
        if account is None and request is not None:
            account = self._pending_sign_up(request, login)
        return account

    def _pending_sign_up(self, request, email):
        """The unverified account this browser signed up with ``email`` (it holds no email
        lock until verified), so that logging in by email right after the sign-up says
        "confirm your address". Only this browser's session knows it: to anyone else, an
        unverified sign-up looks like no account at all."""
        account_id = pending_account_id(request)
        if account_id is None or store.login_field(email) != "email":
            return None
        account = store.get_account(account_id)
        if account is None or store.is_verified(account) or not store.is_same_address(account, email):
            return None
        return account

    def user_can_authenticate(self, user):
        """Inactive accounts cannot log in."""
        return user.is_active

    def get_user_permissions(self, user_obj, obj=None):
        """What the adapter grants an active user (``get_user_permissions``: by default
        ``ACCOUNTS_STAFF_PERMISSIONS`` for staff); no per-object permissions."""
        if not user_obj.is_active or user_obj.is_anonymous or obj is not None:
            return set()
        return set(get_adapter().get_user_permissions(user_obj))

    def has_module_perms(self, user_obj, app_label):
        """Whether the user has any permission in ``app_label``."""
        return any(permission.partition(".")[0] == app_label for permission in self.get_all_permissions(user_obj))

    def get_user(self, user_id):
        # accounts.sessions reads the account with the session, in the same request.
        prefetched, account = sessions.prefetched_account(user_id)
        if not prefetched:
            account = store.get_account(user_id)
        if account is None:
            return None
        user = User.from_account(account)
        return user if self.user_can_authenticate(user) and may_log_in(account) else None
