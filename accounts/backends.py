"""Authentication against accounts stored in DynamoDB."""

from django.contrib.auth.backends import BaseBackend

from . import sessions, store
from .adapter import get_adapter
from .app_settings import MANDATORY, app_settings
from .exceptions import InvalidUniqueValue
from .models import User

# Where authenticate() leaves an account whose password was right but whose address is
# not verified yet (ACCOUNTS_EMAIL_VERIFICATION = "mandatory"), for the login form.
UNVERIFIED_ATTRIBUTE = "accounts_unverified_account"


def may_log_in(account):
    """Whether the account may log in as far as verification goes: in mode "mandatory"
    only once its address is verified."""
    return app_settings.EMAIL_VERIFICATION != MANDATORY or store.is_verified(account)


class AccountBackend(BaseBackend):
    """Log in with a username or an email address, in any case or width.

    A login costs at most two consistent GetItem calls (the lock item of the username or
    email, then the account it points to); loading the user of a session costs one, or none when
    :mod:`accounts.sessions` read the account together with the session.
    """

    def authenticate(self, request, username=None, password=None, **kwargs):
        if username is None:
            username = kwargs.get(User.USERNAME_FIELD)
        if username is None or password is None:
            return None
        account = self._find(username)
        if account is None:
            # Run the default password hasher once to reduce the timing difference between
            # an existing and a nonexistent account (Django ticket #20760).
            User().set_password(password)
            return None
        user = User.from_account(account)
        if not (user.check_password(password) and self.user_can_authenticate(user)):
            return None
        if not may_log_in(account):
            if request is not None:
                # The login form explains this, and offers to send the link again.
                setattr(request, UNVERIFIED_ATTRIBUTE, account)
            return None
        return user

    def _find(self, login):
        try:
            return store.get_by_login(login)
        except InvalidUniqueValue:
            # Empty, or longer than any lock key can be: nobody holds it.
            return None

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
