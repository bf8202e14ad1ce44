"""The rules a new email address and username meet, wherever an account is made.

The sign-up and change forms (:mod:`accounts.forms`), ``User.objects.create_user``
(:mod:`accounts.managers`) and the staff tools all read them from here: the fields that
normalize a value through the adapter, and the adapter's ``clean_*`` and reserved-name rules.
"""

from typing import Any

from django import forms
from django.core.exceptions import ValidationError
from django.utils.translation import gettext_lazy as _

from . import signup_fields
from .adapter import get_adapter


class EmailField(forms.EmailField):
    """An email field normalized by the adapter before it is validated."""

    def to_python(self, value: Any) -> str | None:
        text: str | None = super().to_python(value)
        if not text or (self.max_length is not None and len(text) > self.max_length):
            # Refused as typed: normalizing huge input is slow, and it is refused anyway.
            return text
        return get_adapter().normalize_email(text)


class UsernameField(forms.CharField):
    """A username field normalized by the adapter (NFKC by default) before it is validated.

    Django's own ``UsernameField`` is not the base: its module reads the user model when
    imported, and this one is imported while the user model loads (by its manager).
    """

    def to_python(self, value: Any) -> str | None:
        text: str | None = super().to_python(value)
        if text is None or (self.max_length is not None and len(text) > self.max_length):
            return text
        return get_adapter().normalize_username(text)

    def widget_attrs(self, widget: forms.Widget) -> dict[str, Any]:
        return {**super().widget_attrs(widget), "autocapitalize": "none", "autocomplete": "username"}


class NewUsernameMixin:
    """Cleans a new username by the adapter's rules; reserved names only for staff."""

    #: Staff tools set this: they may give an account a reserved name such as ``support``.
    allow_reserved_usernames = False
    # Django's form, which this mixin completes, holds it.
    cleaned_data: dict[str, Any]

    def clean_username(self) -> str:
        adapter = get_adapter()
        if not self.cleaned_data["username"]:
            return ""  # an optional username left out (the field is required otherwise)
        username = adapter.clean_username(self.cleaned_data["username"])
        if not self.allow_reserved_usernames and adapter.is_reserved_username(username):
            raise adapter.validation_error("username_reserved")
        return username


def fit_username_field(fields: dict[str, forms.Field], optional_label: Any = None) -> None:
    """Shape a form's ``username`` field to ``ACCOUNTS_SIGNUP_FIELDS``: removed on a site
    without usernames, optional (and labelled so, or ``optional_label``) when ``username``
    is not required there."""
    if not signup_fields.has_username():
        fields.pop("username", None)
    elif not signup_fields.username_required() and "username" in fields:
        fields["username"].required = False
        fields["username"].label = optional_label or _("Username (optional)")


class AccountValuesForm(NewUsernameMixin, forms.Form):
    """The email address and username of a new account, as the sign-up form takes them.

    The username follows ``ACCOUNTS_SIGNUP_FIELDS`` (:func:`fit_username_field`); its
    ``cleaned_data["username"]`` is ``""`` when the account gets none (no such field on
    the site, or an optional one left empty), so every caller reads it the same way."""

    email = EmailField(
        label=_("Email address"),
        max_length=254,
        widget=forms.EmailInput(attrs={"autocomplete": "email", "autofocus": True}),
    )
    username = UsernameField(label=_("Username"), max_length=150)

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        fit_username_field(self.fields)

    def clean_email(self) -> str:
        return get_adapter().clean_email(self.cleaned_data["email"])

    def full_clean(self) -> None:
        super().full_clean()
        # After every clean(), a subclass's too (the passkey sign-up's skips this one's).
        if self.is_bound and "username" not in self.fields:
            self.cleaned_data.setdefault("username", "")


def clean_account_values(email: str, username: str | None, *, allow_reserved: bool = False) -> tuple[str, str]:
    """``(email, username)`` normalized and checked by the sign-up form's rules; raises
    :class:`ValidationError` keyed by field, as the form shows it. ``allow_reserved``: a
    reserved username is allowed (staff accounts, as staff may give). The username is
    ``""`` when the account gets none (see :class:`AccountValuesForm`)."""
    form = AccountValuesForm(data={"email": email, "username": username or ""})
    form.allow_reserved_usernames = allow_reserved
    if not form.is_valid():
        raise ValidationError(form.errors.as_data())
    return form.cleaned_data["email"], form.cleaned_data["username"]
