"""The ``ACCOUNTS_*`` settings, read lazily so ``override_settings`` just works.

Every setting is optional; the property names below are the setting names without the
``ACCOUNTS_`` prefix, and each docstring states the default. Nothing is cached here: each
access reads ``django.conf.settings`` again.
"""

from datetime import timedelta

from django.conf import settings
from django.core.exceptions import ImproperlyConfigured

# ACCOUNTS_EMAIL_VERIFICATION values.
MANDATORY, OPTIONAL, NONE = "mandatory", "optional", "none"

# The form class of each account page, by the name ACCOUNTS_FORMS and
# DefaultAccountAdapter.get_form_class() use.
DEFAULT_FORMS = {
    "signup": "accounts.forms.SignupForm",
    "login": "accounts.forms.LoginForm",
    "email_change": "accounts.forms.EmailChangeForm",
    "username_change": "accounts.forms.UsernameChangeForm",
    "password_change": "accounts.forms.PasswordChangeForm",
    "delete": "accounts.forms.AccountDeleteForm",
}


class AppSettings:
    """The ``ACCOUNTS_*`` settings with their defaults; use the instance :data:`app_settings`."""

    prefix = "ACCOUNTS_"

    def _setting(self, name, default):
        return getattr(settings, self.prefix + name, default)

    def _project_setting(self, name, default):
        """Django's setting ``name`` when the project sets it, else ``default``.

        Django's own defaults for LOGIN_URL and LOGIN_REDIRECT_URL are hard-coded
        ``/accounts/...`` paths, wrong as soon as the URLs are included under another prefix.
        """
        return getattr(settings, name) if settings.is_overridden(name) else default

    @property
    def TABLE_NAME(self):
        """DynamoDB table holding accounts and lock items. Default ``"accounts"``."""
        return self._setting("TABLE_NAME", "accounts")

    @property
    def ENDPOINT_URL(self):
        """DynamoDB endpoint (e.g. DynamoDB Local); ``None`` means AWS's endpoint for the region."""
        return self._setting("ENDPOINT_URL", None) or None

    @property
    def REGION(self):
        """AWS region. Default ``"us-east-1"``."""
        return self._setting("REGION", "us-east-1")

    @property
    def CONNECT_TIMEOUT(self):
        """Seconds to wait for a connection to DynamoDB. Default 2."""
        return self._setting("CONNECT_TIMEOUT", 2)

    @property
    def READ_TIMEOUT(self):
        """Seconds to wait for DynamoDB's answer. Default 10."""
        return self._setting("READ_TIMEOUT", 10)

    @property
    def UNIQUE_FIELDS(self):
        """Unique account fields: ``{field: {"namespace": ..., "normalizer": ..., "allow_empty": ...}}``.

        ``namespace`` (required) is the lock key prefix, its own per field; ``normalizer``
        (a dotted path or a callable, default :func:`accounts.uniqueness.normalize_text`)
        turns a value into the text two values must share to collide; with
        ``allow_empty=True`` (default False) an empty value takes no lock.

        Default: ``email`` in namespace ``EMAIL`` and ``username`` in namespace ``HANDLE``,
        both normalized with :func:`accounts.uniqueness.normalize_text`.
        """
        return self._setting(
            "UNIQUE_FIELDS",
            {
                "email": {"namespace": "EMAIL"},
                "username": {"namespace": "HANDLE"},
            },
        )

    @property
    def EMAIL_VERIFICATION(self):
        """``"mandatory"`` (default: an unverified account cannot log in), ``"optional"``
        (it can; the profile asks for the link to be opened) or ``"none"`` (the address
        counts as verified at sign-up and takes its lock at once)."""
        value = self._setting("EMAIL_VERIFICATION", MANDATORY)
        if value not in (MANDATORY, OPTIONAL, NONE):
            raise ImproperlyConfigured(
                f"ACCOUNTS_EMAIL_VERIFICATION is {value!r}; use 'mandatory', 'optional' or 'none'."
            )
        return value

    @property
    def UNVERIFIED_EXPIRY(self):
        """How long an unverified sign-up (and its username) lives, and how long a
        verification or email-change link works: a ``timedelta`` or seconds. Default 7 days."""
        value = self._setting("UNVERIFIED_EXPIRY", timedelta(days=7))
        return value if isinstance(value, timedelta) else timedelta(seconds=value)

    @property
    def PREVENT_ENUMERATION(self):
        """When True, a sign-up with an address a verified account holds looks like a
        successful sign-up, and the owner gets a mail about it. Default False (the sign-up
        form says "This email address is already in use.")."""
        return self._setting("PREVENT_ENUMERATION", False)

    @property
    def ACCOUNT_MODEL(self):
        """Dotted path of the PynamoDB account model: ``accounts.tables.Account`` or a subclass
        adding attributes (e.g. a unique ``phone``). Default ``"accounts.tables.Account"``."""
        return self._setting("ACCOUNT_MODEL", "accounts.tables.Account")

    @property
    def ADAPTER(self):
        """Dotted path of the adapter class. Default ``"accounts.adapter.DefaultAccountAdapter"``."""
        return self._setting("ADAPTER", "accounts.adapter.DefaultAccountAdapter")

    @property
    def FORMS(self):
        """Form class of each account page by name (``signup``, ``login``, ``email_change``,
        ``username_change``, ``password_change``, ``delete``), as a dotted path or a class.

        A project names only the forms it replaces: ``{"signup": "myproject.forms.SignupForm"}``;
        the others keep their defaults (:data:`DEFAULT_FORMS`).
        """
        return {**DEFAULT_FORMS, **self._setting("FORMS", {})}

    @property
    def LOGIN_URL(self):
        """Where the account and staff pages send a visitor who must log in first.

        Default: ``settings.LOGIN_URL`` when the project sets it, else ``"accounts:login"``.
        """
        return self._setting("LOGIN_URL", self._project_setting("LOGIN_URL", "accounts:login"))

    @property
    def LOGIN_REDIRECT_URL(self):
        """Where a login lands without ``next``.

        Default: ``settings.LOGIN_REDIRECT_URL`` when the project sets it, else ``"accounts:profile"``.
        """
        return self._setting("LOGIN_REDIRECT_URL", self._project_setting("LOGIN_REDIRECT_URL", "accounts:profile"))

    @property
    def SIGNUP_REDIRECT_URL(self):
        """Where a new account lands after signup. Default: :attr:`LOGIN_REDIRECT_URL`."""
        return self._setting("SIGNUP_REDIRECT_URL", self.LOGIN_REDIRECT_URL)

    @property
    def LOGOUT_REDIRECT_URL(self):
        """Where logout lands without ``next``. Default: ``settings.LOGOUT_REDIRECT_URL``, else ``"/"``."""
        return self._setting("LOGOUT_REDIRECT_URL", settings.LOGOUT_REDIRECT_URL or "/")

    @property
    def DELETE_REDIRECT_URL(self):
        """Where a deleted account lands. Default: :attr:`LOGOUT_REDIRECT_URL`."""
        return self._setting("DELETE_REDIRECT_URL", self.LOGOUT_REDIRECT_URL)


app_settings = AppSettings()
