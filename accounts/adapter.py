"""The hooks a host project overrides: input rules, messages, redirects, what a signup stores.

Subclass :class:`DefaultAccountAdapter` and name the subclass in ``ACCOUNTS_ADAPTER``;
forms and views always reach it through :func:`get_adapter`.
"""

import re
import unicodedata

from django.contrib import messages
from django.contrib.auth.base_user import BaseUserManager
from django.contrib.auth.hashers import make_password
from django.core.exceptions import ValidationError
from django.shortcuts import resolve_url
from django.utils.module_loading import import_string
from django.utils.translation import gettext_lazy as _

from . import store
from .app_settings import app_settings

# Control (Cc), format (Cf: zero-width and bidi controls such as U+200B, U+200D, U+202E,
# U+2066), surrogate, private-use and unassigned characters, and line/paragraph separators:
# none can be seen, so a name holding one could pass for another.
INVISIBLE_CATEGORIES = frozenset({"Cc", "Cf", "Cs", "Co", "Cn", "Zl", "Zp"})
# Django's UnicodeUsernameValidator without "@": letters, digits and . + - _
USERNAME_CHARACTERS = re.compile(r"^[\w.+-]+\Z")


class DefaultAccountAdapter:
    """Default behaviour of the account pages; every method is a hook to override."""

    error_messages = {
        "email_taken": _("This email address is already in use."),
        "username_taken": _("This username is taken."),
        "value_taken": _("This value is already in use."),
        "username_invisible": _("A username cannot contain control, invisible or text-direction characters."),
        "username_at": _("A username cannot contain “@”."),
        "username_invalid": _(
            "Enter a valid username. It may contain only letters, numbers and the characters . + - _"
        ),
        "busy": _("The site is busy and nothing was saved. Please try again."),
        "stale": _("Your account changed while this page was open, so nothing was saved. Please try again."),
    }

    success_messages = {
        "signed_up": _("Welcome, %(username)s! Your account is ready."),
        "logged_in": _("You are logged in as %(username)s."),
        "logged_out": _("You have logged out."),
        "email_changed": _("Your email address is now %(email)s."),
        "username_changed": _("Your username is now %(username)s."),
        "password_changed": _("Your password has been changed. Your other sessions have been logged out."),
        "account_deleted": _("Your account has been deleted."),
        "verification_sent": _("We sent a link to %(email)s. Open it to confirm your address."),
        "verification_failed": _(
            "Your account is saved, but the mail to %(email)s could not be sent. Please send it again."
        ),
        "verification_too_soon": _("A mail was sent less than a minute ago. Please wait a minute and try again."),
        "email_change_sent": _(
            "We sent a link to %(email)s. Your address changes when you open it; until then it stays as it is."
        ),
        "email_change_failed": _(
            "Your request is saved, but the mail to %(email)s could not be sent. Please try again."
        ),
    }

    def __init__(self, request=None):
        self.request = request

    def validation_error(self, code, **params):
        """A :class:`ValidationError` with the message of ``code`` from :attr:`error_messages`."""
        return ValidationError(self.error_messages[code], code=code, params=params or None)

    def normalize_email(self, email):
        """NFKC-normalize and lowercase the domain: ``Ada@EXAMPLE.ｃｏｍ`` -> ``Ada@example.com``."""
        return BaseUserManager.normalize_email(unicodedata.normalize("NFKC", email))

    def clean_email(self, email):
        """Further rules for an (already valid) email address. Returns the email to store."""
        return email

    def normalize_username(self, username):
        """NFKC-normalize: full-width ``ａｄａ`` becomes ``ada``, ligature ``ﬁ`` becomes ``fi``."""
        return unicodedata.normalize("NFKC", username)

    def clean_username(self, username):
        """Refuse invisible characters, ``@`` (a login with ``@`` is always an email) and
        anything beyond letters, digits and ``. + - _``. Returns the username to store."""
        if any(unicodedata.category(character) in INVISIBLE_CATEGORIES for character in username):
            raise self.validation_error("username_invisible")
        if "@" in username:
            raise self.validation_error("username_at")
        if not USERNAME_CHARACTERS.match(username):
            raise self.validation_error("username_invalid")
        return username

    def taken_error(self, field):
        """The error shown on ``field`` when another account already holds its value."""
        code = f"{field}_taken"
        return self.validation_error(code if code in self.error_messages else "value_taken")

    def get_form_class(self, name):
        """The form class of the account page ``name`` (``"signup"``, ``"login"``,
        ``"email_change"``, ``"username_change"``, ``"password_change"``, ``"delete"``),
        from ``ACCOUNTS_FORMS``."""
        form_class = app_settings.FORMS[name]
        return import_string(form_class) if isinstance(form_class, str) else form_class

    def get_signup_attributes(self, request, form):
        """Extra account attributes to store on signup, beyond email, username and password."""
        return {}

    def create_account(self, request, form, token):
        """Hash the password and sign up, sending ``token`` as the ClientRequestToken.

        Returns ``(account, created)`` as :func:`accounts.store.signup` does.
        """
        data = form.cleaned_data
        return store.signup(
            data["email"],
            data["username"],
            make_password(data["password1"]),
            token=token,
            **self.get_signup_attributes(request, form),
        )

    def get_login_url(self, request):
        """Where a page that needs a signed-in user sends everyone else (``ACCOUNTS_LOGIN_URL``)."""
        return resolve_url(app_settings.LOGIN_URL)

    def get_signup_redirect_url(self, request):
        """Where a new account lands (``ACCOUNTS_SIGNUP_REDIRECT_URL``)."""
        return resolve_url(app_settings.SIGNUP_REDIRECT_URL)

    def get_login_redirect_url(self, request):
        """Where a login lands without a ``next`` parameter (``ACCOUNTS_LOGIN_REDIRECT_URL``)."""
        return resolve_url(app_settings.LOGIN_REDIRECT_URL)

    def get_logout_redirect_url(self, request):
        """Where a logout lands without a ``next`` parameter (``ACCOUNTS_LOGOUT_REDIRECT_URL``)."""
        return resolve_url(app_settings.LOGOUT_REDIRECT_URL)

    def get_delete_redirect_url(self, request):
        """Where a deleted account lands (``ACCOUNTS_DELETE_REDIRECT_URL``)."""
        return resolve_url(app_settings.DELETE_REDIRECT_URL)

    def add_success_message(self, request, code, **params):
        """Queue the success message ``code`` from :attr:`success_messages`."""
        messages.success(request, self.success_messages[code] % params)

    def add_verification_message(self, request, outcome, email=""):
        """Queue what became of a (re)sent verification mail: ``sent``, ``too_soon`` or ``failed``."""
        code = {"sent": "verification_sent", "too_soon": "verification_too_soon", "failed": "verification_failed"}
        level = messages.SUCCESS if outcome == "sent" else messages.WARNING
        messages.add_message(request, level, self.success_messages[code[outcome]] % {"email": email})


def get_adapter(request=None):
    """The adapter named by ``ACCOUNTS_ADAPTER``, for ``request``."""
    return import_string(app_settings.ADAPTER)(request)
