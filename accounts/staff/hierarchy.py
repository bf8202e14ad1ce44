"""The staff hierarchy: only a superuser acts on a superuser's account.

Every staff action on an account (its address, username, password, flags, sessions,
verification, authenticators, deletion) by a staff member who is no superuser is refused,
before anything is sent, when the account is a superuser's; the store's transaction then
guards the rule again against a promotion or a demotion racing the page
(:mod:`accounts.transactions.hierarchy`). An action on a superuser's account is recorded
like any staff action (:mod:`.records`), needs the acting superuser's fresh proof like any
staff POST, and its owner is told by a security notice (:func:`tell_owner`, for the actions
that send none of their own). ``accounts_createstaff``, run by whoever holds the server,
stays the way back in: it goes through none of the staff pages.
"""

from django.http import HttpRequest
from django.utils.translation import gettext_lazy as _

from .. import notices
from ..models import User
from ..tables import Account
from ..transactions import is_superuser_as_read

REFUSED_MESSAGE = _("Only a superuser can change the account of a superuser: nothing was changed.")
# What staff did, as the notice tells a superuser (actions with no notice of their own).
ACTIONS = {
    "is_active_on": _("activated your account"),
    "is_active_off": _("deactivated your account and ended its sessions"),
    "is_staff_on": _("gave your account access to the staff pages"),
    "is_staff_off": _("took away your account's access to the staff pages"),
    "sessions_ended": _("ended your account's sessions"),
    "email_verified": _("marked your account's email address verified"),
    "deleted": _("deleted your account"),
}


class SuperuserOnly(Exception):
    """A staff member who is no superuser acted on a superuser's account: nothing was sent."""


def may_act_on(staff: User, account: Account) -> bool:
    """Whether staff member ``staff`` (as their session read them) may act on ``account``
    (as read): any account, for a superuser; for others, any account but a superuser's (a
    damaged flag counts as set)."""
    return bool(staff.is_superuser) or not is_superuser_as_read(account)


def tell_owner(request: HttpRequest, before: notices.Addressee, account: Account, action: str) -> None:
    """Tell a superuser's address (``before``: as read before the action) that staff did
    ``action`` (a key of :data:`ACTIONS`) to their account. Nothing for other accounts, whose
    staff actions send only their own notices."""
    if is_superuser_as_read(account):
        notices.notify(request, before, "staff_action", {"account": account, "action": ACTIONS[action]})
