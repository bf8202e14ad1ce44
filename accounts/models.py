"""The Django user model: an unmanaged view of an account item stored in DynamoDB.

There is no SQL table behind :class:`User`. It exists so ``AUTH_USER_MODEL``,
``login()``, ``request.user`` and ``LoginRequiredMixin`` work unchanged; it is built from
the PynamoDB item (:meth:`User.from_account`) and writes through :mod:`accounts.store`.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Iterable
from typing import Any, Generic, TypeVar

from django.contrib import auth
from django.contrib.auth import hashers, password_validation
from django.contrib.auth.base_user import AbstractBaseUser
from django.core.exceptions import PermissionDenied
from django.db import NotSupportedError, models
from django.utils.translation import gettext_lazy as _

from . import signup_fields, store
from .exceptions import Busy, StaleItem
from .managers import UserManager
from .tables import Account

logger = logging.getLogger(__name__)

# The account attributes a User mirrors, under the same names.
STORED_FIELDS = ("email", "username", "password", "is_active", "is_staff", "is_superuser")
# Moving a unique value has its own store operation (it sends its own signal).
MOVED_BY_STORE = {"email": "accounts.store.change_email()", "username": "accounts.store.change_username()"}

_Value = TypeVar("_Value")


class FromSettings(Generic[_Value]):
    """A class attribute computed from the settings each time it is read, on the class or
    on an instance: Django reads ``User.USERNAME_FIELD`` where and when it needs it."""

    def __init__(self, compute: Callable[[], _Value]) -> None:
        self.compute = compute

    def __get__(self, instance: object, owner: type | None = None) -> _Value:
        return self.compute()


class User(AbstractBaseUser):
    """A signed-in person, as Django's auth framework sees them.

    The primary key is the account id (the account item's PK without ``ACCT#``). The
    session hash is :meth:`~django.contrib.auth.base_user.AbstractBaseUser.get_session_auth_hash`,
    an HMAC of the password hash: changing the password ends every other session, and a
    deleted account can no longer be loaded, which ends its sessions too.
    """

    id = models.CharField(primary_key=True, max_length=64, editable=False)
    email = models.EmailField(_("email address"), max_length=254, unique=True)
    username = models.CharField(_("username"), max_length=150, unique=True)
    is_active = models.BooleanField(_("active"), default=True)
    is_staff = models.BooleanField(_("staff status"), default=False)
    is_superuser = models.BooleanField(_("superuser status"), default=False)
    # Dropped on purpose: with a last_login field, Django connects update_last_login to
    # user_logged_in and every login would save() the user, a write per login.
    last_login = None

    objects = UserManager()

    EMAIL_FIELD = "email"
    # "username" by default; "email" on a site whose accounts may have no username (see
    # accounts.signup_fields.natural_key_field), and REQUIRED_FIELDS the other one.
    USERNAME_FIELD = FromSettings(signup_fields.natural_key_field)
    REQUIRED_FIELDS = FromSettings(signup_fields.required_fields)

    # The PynamoDB item this user was built from; None for a user that was never stored.
    account: Account | None = None
    # A new raw password until save() (AbstractBaseUser sets it; its stubs do not say so).
    _password: str | None

    class Meta:
        managed = False
        verbose_name = _("user")
        verbose_name_plural = _("users")

    @classmethod
    def from_account(cls, account: Account) -> User:
        """The user for a PynamoDB :class:`~accounts.tables.Account` item, as read."""
        user = cls(id=account.id, **{name: getattr(account, name) for name in STORED_FIELDS})
        user._state.adding = False
        user.account = account
        return user

    def __getattr__(self, name: str) -> Any:
        # Only called for names a User lacks: an attribute of the account model (a
        # declared extra field such as ``phone``) reads from the account item, so
        # ``{{ user.phone }}`` works. Change it with accounts.store.update_account().
        account = self.__dict__.get("account")
        if account is not None and not name.startswith("_") and name in account.get_attributes():
            return getattr(account, name)
        raise AttributeError(f"{type(self).__name__!r} object has no attribute {name!r}")

    @property
    def display_name(self) -> str:
        """What the pages call this user: the username, or the email address when there is
        none (see :attr:`accounts.tables.Account.display_name`)."""
        return self.username or self.email

    def stored_account(self) -> Account:
        """The account item this user was read from (:class:`~django.db.NotSupportedError`
        for a user that was never stored)."""
        return self._stored_account("use")

    def _stored_account(self, action: str) -> Account:
        if self.account is None:
            raise NotSupportedError(
                f"Cannot {action} a User that was not read from DynamoDB: accounts are created "
                "with accounts.store.signup() and read with accounts.store.get_account()."
            )
        return self.account

    def save(self, *args: Any, update_fields: Iterable[str] | None = None, **kwargs: Any) -> None:
        """Store changed ``password``, ``is_active`` or ``is_staff`` in one transaction; a new
        password (``set_password``) also cancels a pending email change.

        The update is guarded by the values as read, so it raises
        :class:`~accounts.exceptions.StaleItem` if the account changed meanwhile. Email and
        username are refused here: change them with :func:`accounts.store.change_email` and
        :func:`accounts.store.change_username`. It knows no request: its security event names
        no address, browser or actor, and a request's own session it ends may be deleted once
        more by that request (the flows pass both: :func:`accounts.store.change_password`).
        """
        account = self._stored_account("save")
        names = STORED_FIELDS if update_fields is None else tuple(update_fields)
        unknown = set(names) - set(STORED_FIELDS)
        if unknown:
            raise ValueError(f"User has no stored field(s) {', '.join(sorted(unknown))}.")
        changes = {name: getattr(self, name) for name in names if getattr(self, name) != getattr(account, name)}
        moved = sorted(MOVED_BY_STORE.keys() & changes.keys())
        if moved:
            raise NotSupportedError(f"Change the {moved[0]} with {MOVED_BY_STORE[moved[0]]}, not User.save().")
        if "password" in changes and self._password is not None:
            # A new password (not a hash upgrade) cancels a pending email change in the same
            # transaction: whoever asked for it may be who the new password locks out.
            changes.update(store.email_change_cancellation(account))
        if changes:
            # A hash upgraded at login (_password cleared first) is the same password: no event.
            store.update_account(account, recorded=self._password is not None or "password" not in changes, **changes)
        if self._password is not None:
            # A new password (not a hash upgrade, which clears _password first) ends
            # every session; the view that changed it re-issues its own (cycle_key).
            if "password" in changes:
                store.end_sessions(account)
            password_validation.password_changed(self._password, self)
            self._password = None

    def delete(self, *args: Any, **kwargs: Any) -> tuple[int, dict[str, int]]:
        """Delete the account and release its email and username, in one transaction (a
        request's own session may then be deleted once more by its logout: the deletion flow
        passes it, :func:`accounts.store.delete_account`)."""
        store.delete_account(self._stored_account("delete"))
        return 1, {self._meta.label: 1}

    # Permissions, with the semantics of Django's PermissionsMixin (there are no groups):
    # an active superuser has every permission; anyone else, what the authentication
    # backends grant (AccountBackend: the adapter's get_user_permissions()).

    def get_user_permissions(self, obj: models.Model | None = None) -> set[str]:
        """The permissions (``"app_label.codename"``) the backends grant this user."""
        return _backend_permissions(self, "get_user_permissions", obj)

    def get_group_permissions(self, obj: models.Model | None = None) -> set[str]:
        """The permissions this user has through groups (none here: accounts have no groups)."""
        return _backend_permissions(self, "get_group_permissions", obj)

    def get_all_permissions(self, obj: models.Model | None = None) -> set[str]:
        """Every permission the backends grant this user."""
        return _backend_permissions(self, "get_all_permissions", obj)

    def has_perm(self, perm: str, obj: models.Model | None = None) -> bool:
        """Whether the user has ``perm``: always for an active superuser."""
        if self.is_active and self.is_superuser:
            return True
        return _backends_agree(self, "has_perm", perm, obj)

    def has_perms(self, perm_list: Iterable[str], obj: models.Model | None = None) -> bool:
        """Whether the user has every permission of ``perm_list``."""
        return all(self.has_perm(perm, obj) for perm in perm_list)

    def has_module_perms(self, app_label: str) -> bool:
        """Whether the user has any permission in ``app_label``: always for an active superuser."""
        if self.is_active and self.is_superuser:
            return True
        return _backends_agree(self, "has_module_perms", app_label)

    def check_password(self, raw_password: str | None) -> bool:
        """Whether ``raw_password`` is right; an outdated hash is upgraded if possible.

        Upgrading the hash (e.g. from PBKDF2 to Argon2) is a write; if it loses a race it is
        skipped, and the correct password still counts.
        """

        def upgrade(raw_password: str) -> None:
            self.set_password(raw_password)
            self._password = None
            try:
                self.save(update_fields=["password"])
            except (Busy, StaleItem):
                # Another request changed the account first (or upgraded the same hash).
                # Keep the stored hash, so this session's hash matches what is stored.
                logger.info("Password hash upgrade of account %s skipped: the account changed.", self.pk)
                self.password = self.stored_account().password

        return hashers.check_password(raw_password, self.password, upgrade)


def _backend_permissions(user: User, method: str, obj: models.Model | None) -> set[str]:
    return {
        permission
        for backend in auth.get_backends()
        if hasattr(backend, method)
        for permission in getattr(backend, method)(user, obj)
    }


def _backends_agree(user: User, method: str, *args: Any) -> bool:
    """Whether one authentication backend answers yes (a backend raising
    ``PermissionDenied`` says no for every one), as Django's ``User`` asks them."""
    for backend in auth.get_backends():
        if not hasattr(backend, method):
            continue
        try:
            if getattr(backend, method)(user, *args):
                return True
        except PermissionDenied:
            return False
    return False
