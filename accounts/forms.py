"""Account forms. Input rules and messages come from the adapter; saving goes to the store."""

from __future__ import annotations

import uuid
from typing import TYPE_CHECKING, Any, Protocol, cast

from django import forms
from django.contrib.auth import forms as auth_forms
from django.contrib.auth.hashers import check_password
from django.core import signing
from django.core.exceptions import ValidationError
from django.http import HttpRequest
from django.utils.translation import gettext_lazy as _
from django.views.decorators.debug import sensitive_variables

from . import ratelimit, signup_fields, store, timeline
from .adapter import get_adapter
from .app_settings import app_settings
from .exceptions import ItemAlreadyExists, TokenReused, UniqueViolation
from .form_errors import STORE_REFUSALS, StoreErrorsMixin  # noqa: F401  (STORE_REFUSALS: for the views)
from .internal.flows import login as login_flow
from .mfa.flows.reauthentication import count_password_check
from .models import User
from .rules import AccountValuesForm, EmailField, NewUsernameMixin, UsernameField, fit_username_field
from .tables import Account

if TYPE_CHECKING:
    # django-stubs makes the mixin generic in the user it validates the password for.
    _SetPasswordMixin = auth_forms.SetPasswordMixin[User]
else:
    _SetPasswordMixin = auth_forms.SetPasswordMixin

SIGNUP_TOKEN_SALT = "accounts.forms.SignupForm.token"
# DynamoDB honours a ClientRequestToken for 10 minutes after its first use. A form token
# older than this is not sent again: the signup gets a fresh one instead.
SIGNUP_TOKEN_MAX_AGE = 9 * 60


def new_signup_token() -> str:
    """A signed, timestamped one-time token for a signup form."""
    return signing.TimestampSigner(salt=SIGNUP_TOKEN_SALT).sign(uuid.uuid4().hex)


class SignupForm(AccountValuesForm, StoreErrorsMixin, _SetPasswordMixin):
    """Sign up with an email address, a username and a password: the fields
    ``ACCOUNTS_SIGNUP_FIELDS`` lists, in its order (no ``username`` on a site without
    usernames, no ``password2`` when the password is asked once).

    The hidden ``token`` makes the post idempotent: sent twice, the form creates one
    account and both posts succeed (see :meth:`save`).
    """

    password1, password2 = auth_forms.SetPasswordMixin.create_password_fields()
    token = forms.CharField(widget=forms.HiddenInput, required=False, initial=new_signup_token)

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        if not signup_fields.asks_password_twice():
            self.fields.pop("password2", None)
        if signup_fields.asks_for_phone():
            # Verified by the code texted to it before the sign-up completes (accounts.phones).
            self.fields["phone"] = get_adapter().phone_form_field(required=signup_fields.phone_required())
        self.order_fields(self.field_order_of(list(app_settings.SIGNUP_FIELDS)))

    def field_order_of(self, listed: list[str]) -> list[str]:
        """``ACCOUNTS_SIGNUP_FIELDS``' order, with the fields it does not list (a host's own
        declared fields, such as a phone number) after the identifiers, before the passwords."""
        before_passwords = [name for name in listed if not name.startswith("password")]
        own = [name for name in self.fields if name not in listed and name != "token"]
        return before_passwords + own + [name for name in listed if name.startswith("password")]

    def validate_passwords(
        self, password1_field_name: str = "password1", password2_field_name: str = "password2"
    ) -> None:
        if password2_field_name in self.fields:
            super().validate_passwords(password1_field_name, password2_field_name)
        elif not self.cleaned_data.get(password1_field_name) and password1_field_name not in self.errors:
            required = self.fields[password1_field_name].error_messages["required"]
            self.add_error(password1_field_name, ValidationError(required, code="required"))

    def clean_token(self) -> str:
        """The ClientRequestToken of this post: the form's own, or a fresh one when the
        form's is missing, forged or older than :data:`SIGNUP_TOKEN_MAX_AGE`."""
        try:
            return signing.TimestampSigner(salt=SIGNUP_TOKEN_SALT).unsign(
                self.cleaned_data["token"], max_age=SIGNUP_TOKEN_MAX_AGE
            )
        except signing.BadSignature:
            return uuid.uuid4().hex

    def clean(self) -> dict[str, Any] | None:
        self.validate_passwords()
        unsaved = User(email=self.cleaned_data.get("email", ""), username=self.cleaned_data.get("username", ""))
        # AUTH_PASSWORD_VALIDATORS judge the password on its last field (the one typed once, without password2).
        self.validate_password_for_user(
            unsaved, password_field_name="password2" if "password2" in self.fields else "password1"
        )
        return super().clean()

    def full_clean(self) -> None:
        super().full_clean()
        if self.is_bound:
            # This post spends its token; if the form is shown again it needs a new one. The
            # data is a QueryDict (or a dict): its copy() is one this form may change.
            data = cast(Any, self.data).copy()
            data[self.add_prefix("token")] = new_signup_token()
            self.data = data

    @sensitive_variables("password")
    def save(self, request: HttpRequest) -> Account:
        """Create the account, or find the one an earlier post of this same form created.

        Returns the account. Raises :class:`~accounts.exceptions.UniqueViolation` (every
        field in use), :class:`~accounts.exceptions.ItemDeleted` (this form's account was
        deleted since: a stale form) or :class:`~accounts.exceptions.Busy`.
        """
        adapter = get_adapter(request)
        token = self.cleaned_data["token"]
        try:
            account, created = adapter.create_account(request, self, token)
        except (TokenReused, ItemAlreadyExists):
            # The token went out before with other values (the page was edited and sent
            # again): this is a new signup, with a token of its own.
            account, created = adapter.create_account(request, self, uuid.uuid4().hex)
        password = self.cleaned_data["password1"]
        if not created and not check_password(password, account.password):
            # Same token, email and username but not the same password: not this person's post.
            raise UniqueViolation({"email", "username"} & self.fields.keys())
        return account


class LoginForm(auth_forms.AuthenticationForm):
    """Log in with a username or an email address (the ``username`` field, as Django's
    ``AuthenticationForm`` names it) and a password. With ``ACCOUNTS_LOGIN_METHODS`` of one
    method the field asks for that one: ``{"email"}`` makes it an email field labelled
    "Email address".

    The form reads the two fields; the login flow judges them
    (:func:`accounts.internal.flows.login.log_in_with_password`, called by the view), and
    the form shows a refusal (:meth:`refuse`): over ``login_failed`` (see
    :mod:`accounts.devices`), even the right password is refused without being checked
    (guessing must not go on), and the form says how long to wait; the right password of an
    account whose address is not verified yet (mode "mandatory") is the error
    ``unverified``, not a failure."""

    error_messages = {
        **auth_forms.AuthenticationForm.error_messages,
        "invalid_login": _(
            "Please enter a correct username or email address and password. Note that the password is case-sensitive."
        ),
        # With one login method (ACCOUNTS_LOGIN_METHODS), the message names that one.
        "invalid_email_login": _(
            "Please enter a correct email address and password. Note that the password is case-sensitive."
        ),
        "invalid_username_login": _(
            "Please enter a correct username and password. Note that the password is case-sensitive."
        ),
        "invalid_phone_login": _(
            "Please enter a correct phone number and password. Note that the password is case-sensitive."
        ),
        # Several login methods, one of them a phone number.
        "invalid_any_login": _(
            "Please enter a correct login (%(methods)s) and password. Note that the password is case-sensitive."
        ),
        "unverified": _("Your email address is not verified yet. Open the link we mailed you, or send it again below."),
    }

    # The refused outcome of the login flow this form shows (see refuse), or None.
    outcome: login_flow.LoginOutcome | None = None

    def __init__(self, request: HttpRequest | None = None, *args: Any, **kwargs: Any) -> None:
        super().__init__(request, *args, **kwargs)
        if signup_fields.logs_in_by("phone"):
            # A number alone is read as a number (E.164); with other methods, the text as typed.
            only = signup_fields.login_methods() == ["phone"]
            self.fields["username"] = (
                get_adapter().phone_form_field(
                    label=signup_fields.login_label(),
                    widget=forms.TextInput(attrs={"autofocus": True, "autocomplete": "tel", "type": "tel"}),
                )
                if only
                else forms.CharField(
                    label=signup_fields.login_label(),
                    max_length=254,
                    widget=forms.TextInput(attrs={"autofocus": True, "autocomplete": "username"}),
                )
            )
            return
        if not signup_fields.logs_in_by("username"):
            self.fields["username"] = forms.EmailField(
                label=signup_fields.login_label(),
                max_length=254,
                widget=forms.EmailInput(attrs={"autofocus": True, "autocomplete": "email"}),
            )
            return
        username = cast(forms.CharField, self.fields["username"])
        username.label = signup_fields.login_label()
        if signup_fields.logs_in_by("email"):
            # Room for an email address, longer than any username.
            username.max_length = 254
            username.widget.attrs["maxlength"] = 254

    def clean(self) -> dict[str, Any]:
        # Django's AuthenticationForm authenticates here; the login flow does, in the view.
        return self.cleaned_data

    def refuse(self, outcome: login_flow.LoginOutcome) -> None:
        """Show ``outcome``, a refusal of the login flow, as the form's non-field error."""
        self.outcome = outcome
        if outcome.status == login_flow.RATE_LIMITED:
            # A rate_limited outcome always carries its refusal.
            ratelimit.refuse(self, cast(ratelimit.RateLimited, outcome.refusal))
        elif outcome.status == login_flow.UNVERIFIED:
            self.add_error(None, ValidationError(self.error_messages["unverified"], code="unverified"))
        else:
            self.add_error(None, self.get_invalid_login_error())

    def get_invalid_login_error(self) -> ValidationError:
        """The wrong-credentials error, naming what this site logs in by."""
        if signup_fields.logs_in_by("phone"):
            methods = signup_fields.login_methods()
            if methods == ["phone"]:
                return ValidationError(self.error_messages["invalid_phone_login"], code="invalid_login")
            label = str(signup_fields.login_label()).lower()
            return ValidationError(
                self.error_messages["invalid_any_login"], code="invalid_login", params={"methods": label}
            )
        by_email, by_username = signup_fields.logs_in_by("email"), signup_fields.logs_in_by("username")
        code = "invalid_login" if by_email == by_username else f"invalid_{'email' if by_email else 'username'}_login"
        return ValidationError(self.error_messages[code], code="invalid_login")

    @property
    def unverified_account(self) -> Any:
        """The account whose password was right but whose address is not verified, or ``None``."""
        if self.outcome is not None and self.outcome.status == login_flow.UNVERIFIED:
            return self.outcome.account
        return None


class PasswordCheckingForm(Protocol):
    """A form that checks the current password of its ``user``, for ``request``."""

    @property
    def request(self) -> HttpRequest | None: ...

    @property
    def user(self) -> User: ...

    rate_limited: ratelimit.RateLimited | None


def count_current_password(form: PasswordCheckingForm) -> None:
    """Count the check of ``form.user``'s current password against ``reauthenticate`` (per
    account, the reauthentication page's count): past the limit, the password is not
    checked, ``form.rate_limited`` holds the refusal (its view answers 429) and the field
    says how long to wait."""
    try:
        count_password_check(form.request, form.user)
    except ratelimit.RateLimited as error:
        form.rate_limited = error
        raise error.validation_error() from error


class CurrentPasswordMixin:
    """A ``password`` field that must hold the user's current password; each check counts
    against ``reauthenticate`` (:func:`count_current_password`). An account without a
    usable password (signed up with a passkey) has none: the views that use these forms ask
    for a fresh reauthentication (a passkey) instead. ``request`` is the view's, for the
    count (the client's address, when a rule counts by it)."""

    error_messages = {
        "password_incorrect": _("Your password was entered incorrectly. Please enter it again."),
    }
    rate_limited: ratelimit.RateLimited | None = None
    # Django's form, which this mixin completes, holds them.
    fields: dict[str, forms.Field]
    cleaned_data: dict[str, Any]

    def __init__(self, user: User, *args: Any, request: HttpRequest | None = None, **kwargs: Any) -> None:
        self.user = user
        self.request = request
        super().__init__(*args, **kwargs)
        if not user.has_usable_password():
            self.fields.pop("password", None)

    @sensitive_variables("password")
    def clean_password(self) -> str:
        password: str = self.cleaned_data["password"]
        count_current_password(self)
        if not self.user.check_password(password):
            raise ValidationError(self.error_messages["password_incorrect"], code="password_incorrect")
        return password


def current_password_field() -> forms.CharField:
    return forms.CharField(
        label=_("Current password"),
        strip=False,
        widget=forms.PasswordInput(attrs={"autocomplete": "current-password"}),
    )


class UniqueValueChangeForm(StoreErrorsMixin, CurrentPasswordMixin, forms.Form):
    """Change one unique value of the account, ``field``; it starts with the current value."""

    field = ""  # the name of the field changed, set by each subclass

    def __init__(self, user: User, *args: Any, **kwargs: Any) -> None:
        super().__init__(user, *args, **kwargs)
        self.fields[self.field].initial = getattr(user, self.field)


class EmailChangeForm(UniqueValueChangeForm):
    """Change the email address; the current password confirms it."""

    field = "email"
    email = EmailField(
        label=_("New email address"),
        max_length=254,
        widget=forms.EmailInput(attrs={"autocomplete": "email", "autofocus": True}),
    )
    password = current_password_field()

    def clean_email(self) -> str:
        return get_adapter().clean_email(self.cleaned_data["email"])


class UsernameChangeForm(NewUsernameMixin, UniqueValueChangeForm):
    """Change the username; the current password confirms it."""

    field = "username"
    username = UsernameField(label=_("New username"), max_length=150, widget=forms.TextInput(attrs={"autofocus": True}))
    password = current_password_field()

    def __init__(self, user: User, *args: Any, **kwargs: Any) -> None:
        super().__init__(user, *args, **kwargs)
        # An optional username (ACCOUNTS_SIGNUP_FIELDS) may be removed: left empty.
        fit_username_field(self.fields, optional_label=_("New username (optional)"))

    def save(self, origin: timeline.Origin = timeline.NO_ORIGIN) -> Account:
        """Move the account to the new username, in one transaction, recorded as come from
        ``origin`` (see :func:`accounts.store.update_account`). Returns the account."""
        return store.change_username(self.user.stored_account(), self.cleaned_data["username"], origin=origin)


class PasswordChangeForm(StoreErrorsMixin, auth_forms.PasswordChangeForm):
    """Django's password change form; saving stores the new hash through the store. An
    account without a usable password (signed up with a passkey) sets one without the old.
    The old password's check counts against ``reauthenticate`` (:func:`count_current_password`)."""

    rate_limited: ratelimit.RateLimited | None = None

    def __init__(self, user: User, *args: Any, request: HttpRequest | None = None, **kwargs: Any) -> None:
        self.request = request
        super().__init__(user, *args, **kwargs)
        if not user.has_usable_password():
            del self.fields["old_password"]

    @sensitive_variables("old_password")
    def clean_old_password(self) -> str:
        count_current_password(self)
        return super().clean_old_password()


class AccountDeleteForm(StoreErrorsMixin, CurrentPasswordMixin, forms.Form):
    """Delete the account; the current password confirms it."""

    password = current_password_field()
