"""The forms of the email page when accounts have several addresses
(``ACCOUNTS_MAX_EMAIL_ADDRESSES`` above 1): add one, or act on one of them."""

from __future__ import annotations

from django import forms
from django.utils.translation import gettext_lazy as _

from .adapter import get_adapter
from .form_errors import StoreErrorsMixin
from .forms import CurrentPasswordMixin, current_password_field
from .rules import EmailField

# What a button of an address's row does (the form's ``action``).
RESEND, PRIMARY, REMOVE = "resend", "primary", "remove"


class AddEmailForm(StoreErrorsMixin, CurrentPasswordMixin, forms.Form):
    """Add an address; the current password confirms it, as for an email change."""

    email = EmailField(
        label=_("Email address to add"),
        max_length=254,
        widget=forms.EmailInput(attrs={"autocomplete": "email", "autofocus": True}),
    )
    password = current_password_field()

    def clean_email(self) -> str:
        return get_adapter().clean_email(self.cleaned_data["email"])


class EmailAddressActionForm(forms.Form):
    """Send an address's link again, make it primary, or remove it."""

    email = forms.CharField(max_length=254, widget=forms.HiddenInput)
    action = forms.ChoiceField(choices=[(RESEND, RESEND), (PRIMARY, PRIMARY), (REMOVE, REMOVE)])
