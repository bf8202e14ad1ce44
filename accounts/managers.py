"""``User.objects``: Django's user manager API, answered by :mod:`accounts.store`.

``create_user``, ``create_superuser``, ``get_by_natural_key`` and ``get`` by ``pk``,
``username`` or ``email`` work as Django's own (so ``createsuperuser``, ``changepassword``,
``Client.force_login`` and host code keep working); querysets do not exist.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Any, NoReturn, cast

from django.contrib.auth.base_user import BaseUserManager
from django.contrib.auth.hashers import make_password
from django.core.exceptions import ValidationError
from django.db import NotSupportedError

from . import store
from .exceptions import InvalidUniqueValue, UniqueViolation
from .form_errors import field_errors
from .rules import clean_account_values
from .tables import Account

if TYPE_CHECKING:
    from .models import User

QUERYSET_REFUSED = (
    "Accounts live in DynamoDB, not in a SQL table: read them with accounts.store "
    "(get_account, get_by_login, get_by_email, get_by_username) or User.objects.get(pk=/username=/email=)."
)
# User.objects.get(<lookup>=value): the store function that answers it.
LOOKUPS: dict[str, Callable[[str], Account | None]] = {
    "pk": store.get_account,
    "id": store.get_account,
    "username": store.get_by_username,
    "email": store.get_by_email,
}


def signup_account(email: str, username: str | None, password_hash: str, **extra: Any) -> tuple[Account, bool]:
    """Sign up outside the web forms (``create_user``, ``createsuperuser``): ONE place.

    Accounts made here skip any email verification the site asks of people who sign up
    on its pages: whoever runs code or commands on the server vouches for the address.
    """
    # accounts.store.signup carries no annotations yet: its result, as it documents it.
    signup = cast("Callable[..., tuple[Account, bool]]", store.signup)
    return signup(email, username, password_hash, email_verified=True, **extra)


class UserManager(BaseUserManager["User"]):
    """Creates and finds accounts through the store; refuses ORM queries."""

    def get_queryset(self) -> NoReturn:
        raise NotSupportedError(QUERYSET_REFUSED)

    def using(self, alias: str | None) -> UserManager:  # type: ignore[override]  # no queryset exists: the manager itself
        """There is no database to choose: the same manager (``changepassword`` asks)."""
        return self

    def create_user(
        self, username: str | None = None, email: str | None = None, password: str | None = None, **extra_fields: Any
    ) -> User:
        """Create an account in one transaction, as the signup form would, and return its user.

        ``email`` and ``username`` are normalized and checked by the signup form's rules
        (``ACCOUNTS_SIGNUP_FIELDS``: on a site without usernames, ``username`` is ignored, and
        ``create_user(email=..., password=...)`` is the call); ``password=None`` stores an
        unusable password. Password validators are not run (as in Django). ``extra_fields``
        are account attributes (``is_staff``, a declared unique field such as ``phone``...).
        Raises :class:`ValidationError` keyed by field, with code
        ``email_taken``/``username_taken``/``<field>_taken`` for values in use.
        """
        email, username = clean_account_values(
            email or "", username, allow_reserved=extra_fields.get("is_staff") is True
        )
        try:
            account, _ = signup_account(email, username, make_password(password), **extra_fields)
        except (UniqueViolation, InvalidUniqueValue) as error:
            raise ValidationError(field_errors(error)) from error
        return self.model.from_account(account)

    def create_superuser(
        self, username: str | None = None, email: str | None = None, password: str | None = None, **extra_fields: Any
    ) -> User:
        """A staff account with every permission (``is_staff=True``, ``is_superuser=True``)."""
        extra_fields.setdefault("is_staff", True)
        extra_fields.setdefault("is_superuser", True)
        if extra_fields["is_staff"] is not True:
            raise ValueError("A superuser must have is_staff=True.")
        if extra_fields["is_superuser"] is not True:
            raise ValueError("A superuser must have is_superuser=True.")
        return self.create_user(username, email, password, **extra_fields)

    def get_by_natural_key(self, username: str | None) -> User:
        """The user holding ``username``, the value of ``User.USERNAME_FIELD`` (a username,
        or an email address on a site whose accounts may have none), in any case or width;
        raises ``User.DoesNotExist``."""
        return self.get(**{self.model.USERNAME_FIELD: username})

    def get(self, **lookup: Any) -> User:
        """The user for one lookup: ``pk``/``id``, ``username`` or ``email`` (consistent reads).

        Raises ``User.DoesNotExist`` when no account matches, :class:`NotSupportedError`
        for any other lookup.
        """
        if len(lookup) != 1 or next(iter(lookup)) not in LOOKUPS:
            raise NotSupportedError(f"User.objects.get() takes one of {', '.join(LOOKUPS)}. {QUERYSET_REFUSED}")
        [(name, value)] = lookup.items()
        try:
            account = LOOKUPS[name](str(value))
        except InvalidUniqueValue:
            account = None
        if account is None:
            raise self.model.DoesNotExist(f"No account with {name} {value!r}.")
        return self.model.from_account(account)
