"""Forms of second factors: each page's one text input (a code, a password, a name) and the
hidden answer of the browser's passkey ceremony."""

from django import forms
from django.utils.translation import gettext_lazy as _

from ..app_settings import app_settings
from ..forms import SignupForm, current_password_field
from .passkeys import MAX_ANSWER_LENGTH

CODE_MAX_LENGTH = 32


class CodeForm(forms.Form):
    """One code: a TOTP code, or (at the second step of a login) a recovery code."""

    code = forms.CharField(
        label=_("Code"),
        max_length=CODE_MAX_LENGTH,
        widget=forms.TextInput(
            attrs={"autocomplete": "one-time-code", "autofocus": True, "autocapitalize": "none", "spellcheck": "false"}
        ),
    )


class SecondStepForm(CodeForm):
    """The second step of a login: a code from the authenticator app, or a recovery code."""

    error_messages = {
        "wrong_code": _("This code is not right. Check the time on your device, or use a recovery code."),
        "already_used": _("This code was already used. Log in again and use the next code."),
    }

    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        self.fields["code"].label = _("Authenticator code or recovery code")
        add_trust_field(self)


def add_trust_field(form: forms.Form) -> None:
    """With ``ACCOUNTS_MFA_TRUST_ENABLED``, the second step's checkbox ``trust``: trust this
    browser, so that its next logins skip the second step (:mod:`accounts.mfa.trust`)."""
    if app_settings.MFA_TRUST_ENABLED:
        days = app_settings.MFA_TRUST_COOKIE_AGE.days
        form.fields["trust"] = forms.BooleanField(
            label=_("Trust this browser: do not ask for a second factor here for %(days)s days") % {"days": days},
            required=False,
        )


class TotpActivateForm(CodeForm):
    """The set-up page's confirmation: a code from the newly scanned authenticator app."""

    error_messages = {"wrong_code": _("This code is not right. Check the time on your device and try again.")}


class ReauthenticateTotpForm(CodeForm):
    """Reauthentication with a code of the account's authenticator app (``user``, as the
    page's other forms take it, changes nothing)."""

    error_messages = {
        "wrong_code": TotpActivateForm.error_messages["wrong_code"],
        "already_used": _("This code was already used. Wait for the next one and try again."),
    }

    def __init__(self, *args, user=None, **kwargs):
        super().__init__(*args, **kwargs)
        self.fields["code"].label = _("Code from your authenticator app")


class PasskeyForm(forms.Form):
    """The browser's answer to a passkey ceremony (JSON), filled in by ``webauthn.js``."""

    credential = forms.CharField(widget=forms.HiddenInput, max_length=MAX_ANSWER_LENGTH)


class SecondStepPasskeyForm(PasskeyForm):
    """The second step of a login with a passkey (and the trust checkbox, when on)."""

    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        add_trust_field(self)


class PasskeyAddForm(PasskeyForm):
    """A new passkey, with a name that tells it apart."""

    error_messages = {
        "passkey_taken": _("This passkey is already registered."),
        "too_many": _("You have as many passkeys as an account may have. Remove one first."),
    }

    name = forms.CharField(
        label=_("Name"),
        max_length=64,
        initial=_("My passkey"),
        help_text=_("A name to tell this passkey apart, such as the device it is on."),
    )


class ReauthenticateForm(forms.Form):
    """The account's password, to confirm a sensitive change. An account without a usable
    password (signed up with a passkey) gets no field: it confirms with its passkey."""

    password = current_password_field()

    def __init__(self, *args, user=None, **kwargs):
        super().__init__(*args, **kwargs)
        if user is not None and not user.has_usable_password():
            del self.fields["password"]


class PasskeySignupForm(SignupForm):
    """The signup form without passwords: the passkey replaces them."""

    password1 = password2 = None

    def clean(self):
        return forms.Form.clean(self)
