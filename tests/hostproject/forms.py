"""The members site's signup form: the app's, plus an optional phone number."""

from django import forms
from django.core.validators import RegexValidator

from accounts.forms import SignupForm

from .phones import normalize_phone

# Digits, spaces, dots, dashes and brackets after an optional +; clean_phone counts the digits.
PHONE_FORMAT = RegexValidator(
    r"^\+?[0-9 ().-]+\Z", message="Enter a phone number: digits, spaces and . - ( ), after an optional +."
)
MIN_PHONE_DIGITS = 6


class MemberSignupForm(SignupForm):
    """Sign up with an email address, a username, a password and optionally a phone number."""

    phone = forms.CharField(
        label="Phone number",
        required=False,
        max_length=32,
        validators=[PHONE_FORMAT],
        widget=forms.TextInput(attrs={"autocomplete": "tel", "inputmode": "tel"}),
    )
    field_order = ["email", "username", "phone", "password1", "password2"]

    def clean_phone(self):
        phone = self.cleaned_data["phone"]
        if phone and len(normalize_phone(phone).lstrip("+")) < MIN_PHONE_DIGITS:
            raise forms.ValidationError("A phone number has at least 6 digits.", code="phone_short")
        return phone
