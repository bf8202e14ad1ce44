"""The forms of login by code."""

from django import forms
from django.utils.translation import gettext_lazy as _

from .. import signup_fields


class CodeRequestForm(forms.Form):
    """Ask for a code: the username or address of the account."""

    login = forms.CharField(
        label=_("Username or email address"), max_length=254, widget=forms.TextInput(attrs={"autofocus": True})
    )

    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        # What the site logs in by (ACCOUNTS_LOGIN_METHODS): no "username" where there is none.
        self.fields["login"].label = signup_fields.login_label()


class CodeConfirmForm(forms.Form):
    """Type the code the mail gave."""

    error_messages = {
        "wrong_code": _("This code is not right. Check the mail and try again, or ask for a new code."),
    }

    code = forms.CharField(
        label=_("Code"),
        max_length=20,
        widget=forms.TextInput(attrs={"autocomplete": "one-time-code", "autofocus": True}),
    )
