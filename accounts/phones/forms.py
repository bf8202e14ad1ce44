"""The forms of phone numbers: a number, and the code texted to it."""

from __future__ import annotations

from typing import Any

from django import forms
from django.utils.translation import gettext_lazy as _

from ..adapter import get_adapter


class PhoneForm(forms.Form):
    """A number to verify: django-allauth's ``ChangePhoneForm`` (the adapter's phone field,
    read as E.164). Its refusals (``same_as_current``, ``phone_taken``) come from the flow."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.fields["phone"] = get_adapter().phone_form_field(
            label=_("Phone number"),
            widget=forms.TextInput(attrs={"autocomplete": "tel", "type": "tel", "autofocus": True}),
        )


class PhoneCodeForm(forms.Form):
    """The code texted to the number (django-allauth's ``VerifyPhoneForm``)."""

    code = forms.CharField(
        label=_("Code"),
        max_length=20,
        widget=forms.TextInput(attrs={"autocomplete": "one-time-code", "autofocus": True}),
    )
