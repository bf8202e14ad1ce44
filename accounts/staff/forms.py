"""Staff forms: the account pages' own forms and rules, without the current password.

Staff change another person's email or username with the very forms that person uses,
minus the password confirmation, so every field error reads exactly as on their pages.
"""

from django import forms
from django.contrib.auth import forms as auth_forms
from django.core.exceptions import ValidationError
from django.utils.translation import gettext_lazy as _

from .. import store, timeline
from ..audit import REPAIRABLE
from ..exceptions import StaleItem
from ..forms import EmailChangeForm, StoreErrorsMixin, UsernameChangeForm
from ..internal.flows.password_change import store_new_password

FLAGS = {"is_active": _("active"), "is_staff": _("staff")}
STALE_MESSAGE = _("This account changed while the page was open, so nothing was saved. Look again and retry.")


class StaffStoreErrorsMixin(StoreErrorsMixin):
    """The account pages' store errors, except that a stale account is not "your" account."""

    def add_store_error(self, error):
        if isinstance(error, StaleItem):
            self.add_error(None, ValidationError(STALE_MESSAGE, code="stale"))
        else:
            super().add_store_error(error)


class WithoutAutofocusMixin:
    """The account page shows several forms: none may take the focus for itself."""

    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        for field in self.fields.values():
            field.widget.attrs.pop("autofocus", None)


class StaffEmailForm(StaffStoreErrorsMixin, WithoutAutofocusMixin, EmailChangeForm):
    """Change an account's email: the email change page's form without the current password.

    Staff set the address at once, unverified (:func:`accounts.store.set_unverified_email`):
    it holds no lock until its mailbox confirms it, or staff mark it verified. Whoever asks
    staff for a new address must still prove it is theirs. The same mailbox spelled another
    way changes nothing to prove and keeps its state.
    """

    password = None

    def save(self, origin: timeline.Origin = timeline.NO_ORIGIN):
        """Store the address, recorded as come from ``origin`` (the staff page)."""
        account, email = self.user.account, self.cleaned_data["email"]
        if store.is_same_address(account, email):
            return store.change_email(account, email, origin=origin)
        return store.set_unverified_email(account, email, origin=origin)


class StaffUsernameForm(StaffStoreErrorsMixin, WithoutAutofocusMixin, UsernameChangeForm):
    """Change an account's username: the username change page's form without the password.
    Staff may give a reserved name (``support``)."""

    password = None
    allow_reserved_usernames = True


class StaffSetPasswordForm(StaffStoreErrorsMixin, auth_forms.SetPasswordForm):
    """Set a new password (AUTH_PASSWORD_VALIDATORS apply); it ends the person's sessions."""

    def save(self, origin: timeline.Origin = timeline.NO_ORIGIN):
        """Store the new password, recorded as come from ``origin`` (the staff page)."""
        store_new_password(self.user, self.cleaned_data["new_password1"], origin=origin)
        return self.user


class FlagForm(forms.Form):
    """Turn the ``is_active`` or ``is_staff`` flag on or off."""

    flag = forms.ChoiceField(choices=list(FLAGS.items()))
    value = forms.TypedChoiceField(choices=[("1", _("on")), ("0", _("off"))], coerce=lambda value: value == "1")

    def save(self, account, origin: timeline.Origin = timeline.NO_ORIGIN):
        """Store the flag in one transaction guarded by the account as read, recorded as
        come from ``origin`` (the staff page)."""
        changes = {self.cleaned_data["flag"]: self.cleaned_data["value"]}
        return store.update_account(account, origin=origin, **changes)


class AccountIdsField(forms.Field):
    """Account ids posted as repeated hidden inputs. Any id may be named: the repair
    re-reads each account before acting."""

    widget = forms.MultipleHiddenInput

    def to_python(self, value):
        return [str(account_id) for account_id in value or ()]


class RepairForm(forms.Form):
    """One lock finding, as the audit (or an account's page) showed it to staff; ``run``
    and ``index`` name it in the stored report it came from, if any."""

    kind = forms.ChoiceField(choices=[(kind, kind) for kind in sorted(REPAIRABLE)])
    namespace = forms.CharField(max_length=64)
    key = forms.CharField(max_length=4096)
    holder = AccountIdsField(required=False)
    run = forms.CharField(max_length=64, required=False)
    index = forms.IntegerField(min_value=0, required=False)
