"""Model fields for a host project's SQL models that refer to an account.

An account is an item in DynamoDB, not a row: a ``ForeignKey(settings.AUTH_USER_MODEL)``
would point at a table that does not exist. Keep the account id instead.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

from django.contrib.auth.base_user import AbstractBaseUser
from django.db import models

if TYPE_CHECKING:
    from .models import User

    # What django-stubs reads: set with an id or a user, read as the id.
    _AccountIdCharField = models.CharField[str | AbstractBaseUser | None, str]
else:
    _AccountIdCharField = models.CharField

# An account id is 32 hex characters today; room to spare for ids made otherwise.
ACCOUNT_ID_MAX_LENGTH = 64


class AccountIdField(_AccountIdCharField):
    """The id of an account (``user.pk``), stored as text; assign a user or an id.

    On a field named ``owner`` the model gets ``get_owner_user()``: the account's
    :class:`~accounts.models.User` (one consistent read), or ``None`` once it is deleted.
    Nothing cascades: delete the rows of a deleted account with an ``account_deleted``
    receiver if they must go with it.
    """

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        kwargs.setdefault("max_length", ACCOUNT_ID_MAX_LENGTH)
        kwargs.setdefault("db_index", True)
        super().__init__(*args, **kwargs)

    def deconstruct(self) -> tuple[str, str, Sequence[Any], dict[str, Any]]:
        name, path, args, kwargs = super().deconstruct()
        if kwargs.get("max_length") == ACCOUNT_ID_MAX_LENGTH:
            del kwargs["max_length"]
        if kwargs.get("db_index") is True:
            del kwargs["db_index"]
        else:
            kwargs["db_index"] = False
        return name, path, args, kwargs

    def to_python(self, value: Any) -> Any:
        if isinstance(value, AbstractBaseUser):
            return value.pk
        return super().to_python(value)

    def get_prep_value(self, value: Any) -> Any:
        return super().get_prep_value(self.to_python(value))

    def contribute_to_class(self, cls: type[models.Model], name: str, private_only: bool = False) -> None:
        super().contribute_to_class(cls, name, private_only=private_only)
        field = self

        def get_user(instance: models.Model) -> User | None:
            from .models import User

            account_id = field.to_python(getattr(instance, field.attname))
            if not account_id:
                return None
            try:
                return User.objects.get(pk=account_id)
            except User.DoesNotExist:
                return None

        get_user.__doc__ = f"The account whose id ``{name}`` holds, or ``None``."
        setattr(cls, f"get_{name}_user", get_user)
