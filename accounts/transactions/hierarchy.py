"""The staff hierarchy's guards: only a superuser changes a superuser's account.

A staff member acts on an account through the store (:func:`accounts.store.update_account`,
:func:`accounts.store.delete_account`) with an origin naming them (``origin.actor``). Their
change is then ONE transaction that also carries:

- the account's ``is_superuser`` as read (a conjunct of the account's own action): an
  account made a superuser after the staff member's page read it refuses a change planned
  for an ordinary account;
- when the account was read a superuser (or its flag is damaged: fail closed), a
  ``ConditionCheck`` of the staff member's own account ``[is_superuser = :true AND
  is_staff = :true AND is_active = :true]`` (:func:`acting_superuser`).

Why that is enough, whatever the timing:

1. the staff pages refuse, before anything is sent, a staff member who is no superuser
   acting on an account read as one (their own account read with their session);
2. a promotion of the account committed between that read and the change fails 1's guard,
   and the whole change is cancelled (:class:`~accounts.exceptions.StaleItem`);
3. a demotion (or deactivation) of the staff member committed between their session's read
   and the change fails 2's check: cancelled whole, :class:`~accounts.exceptions.ActorRefused`.

A staff member acting on their own account sends no check of their own item (one action per
item): the account's own action guards ``is_superuser`` as read, which a demotion fails.
"""

from collections.abc import Collection
from typing import Any

from pynamodb.models import Model

from ..tables import PROFILE_SORT_KEY, account_pk, malformed_attributes
from .actions import Action, Role

# What a staff member's change guards as read of the account it changes.
TARGET_AS_READ = ("is_superuser",)
# A staff member's own flags that let them act on a superuser's account.
ACTING_SUPERUSER = {"is_superuser": True, "is_staff": True, "is_active": True}


def is_superuser_as_read(account: Any) -> bool:
    """Whether ``account`` (as read) is a superuser's: its flag set, or stored with the wrong
    type (damage reads as absent, and a damaged flag must not open the account to anyone)."""
    return bool(account.is_superuser) or "is_superuser" in malformed_attributes(account)


def acting_superuser(model: type[Model], actor_id: str) -> Action:
    """``ConditionCheck`` of staff member ``actor_id``'s own account: still an active staff
    superuser when the change commits."""
    attributes = model.get_attributes()
    condition = None
    for name, value in ACTING_SUPERUSER.items():
        conjunct = attributes[name] == value
        condition = conjunct if condition is None else condition & conjunct
    body = model.get_operation_kwargs_from_class(account_pk(actor_id), PROFILE_SORT_KEY, condition=condition)
    return Action("ConditionCheck", body, Role.ACTOR, (model.Meta.table_name, account_pk(actor_id), PROFILE_SORT_KEY))


def staff_guards(account: Any, actor_id: str | None) -> tuple[Collection[str], list[Action]]:
    """``(attributes guarded as read, actions)`` a change of ``account`` (as read) by staff
    member ``actor_id`` carries (see the module); nothing without an actor (the account's
    owner, or a command)."""
    if actor_id is None:
        return (), []
    own = account_pk(actor_id) == account.PK
    checks = [acting_superuser(type(account), actor_id)] if is_superuser_as_read(account) and not own else []
    return TARGET_AS_READ, checks
