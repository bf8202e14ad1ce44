"""Authentication against accounts stored in DynamoDB."""

from collections.abc import Callable
from typing import Any, cast

from django.contrib.auth.backends import BaseBackend
from django.contrib.auth.models import AnonymousUser
from django.core.exceptions import PermissionDenied
from django.db.models import Model
from django.http import HttpRequest

from . import sessions, store
from .adapter import get_adapter
from .internal.flows import login as login_flow
from .models import User
from .tables import Account


class AccountBackend(BaseBackend):
    """Log in with a username or an email address, in any case or width.

    :meth:`authenticate` is Django's ``authenticate()`` over the login flow's password stage
    (:func:`accounts.internal.flows.login.check_password`: the ``login_failed`` limit, the
    dummy hash for a name nobody holds, verification): the app's own login pages and API
    call that flow directly and render its outcome. An attempt over the limit is
    ``PermissionDenied`` (Django's ``authenticate()`` then answers ``None`` and tries no
    other backend); the right password of an unverified account is ``None``.

    Loading the user of a session costs one ``GetItem``, or none when :mod:`accounts.sessions`
    read the account together with the session.
    """

    def authenticate(
        self, request: HttpRequest | None, username: str | None = None, password: str | None = None, **kwargs: Any
    ) -> User | None:
        if username is None:
            username = kwargs.get(User.USERNAME_FIELD)
        if username is None or password is None:
            return None
        outcome = login_flow.check_password(request, login=username, password=password)
        if outcome.status == login_flow.RATE_LIMITED:
            raise PermissionDenied from outcome.refusal
        return outcome.user if outcome.status == login_flow.AUTHENTICATED else None

    def user_can_authenticate(self, user: User) -> bool:
        """Inactive accounts cannot log in."""
        return user.is_active

    def get_user_permissions(self, user_obj: User | AnonymousUser, obj: Model | None = None) -> set[str]:
        """What the adapter grants an active user (``get_user_permissions``: by default
        ``ACCOUNTS_STAFF_PERMISSIONS`` for staff); no per-object permissions."""
        if not user_obj.is_active or user_obj.is_anonymous or obj is not None:
            return set()
        return set(get_adapter().get_user_permissions(user_obj))

    def has_module_perms(self, user_obj: User | AnonymousUser, app_label: str) -> bool:
        """Whether the user has any permission in ``app_label``."""
        return any(permission.partition(".")[0] == app_label for permission in self.get_all_permissions(user_obj))

    def get_user(self, user_id: str) -> User | None:
        # accounts.sessions reads the account with the session, in the same request.
        # accounts.sessions carries no annotations yet: its result, as it documents it.
        prefetched_account = cast("Callable[[str], tuple[bool, Account | None]]", sessions.prefetched_account)
        prefetched, account = prefetched_account(user_id)
        if not prefetched:
            account = store.get_account(user_id)
        if account is None:
            return None
        user = User.from_account(account)
        return user if self.user_can_authenticate(user) and login_flow.may_log_in(account) else None
