"""The forms of provider sign-ins."""

from django.utils.translation import gettext_lazy as _

from ..form_errors import StoreErrorsMixin
from ..rules import AccountValuesForm


class ProviderSignupForm(AccountValuesForm, StoreErrorsMixin):
    """The one form a first sign-in with a provider asks: the new account's address
    (the provider's, when it gave one) and username. No password: the account signs in with
    the provider (a password can be set later by resetting it)."""

    error_messages = {
        "identity_taken": _("This sign-in is already linked to an account. Sign in with the provider again."),
    }
