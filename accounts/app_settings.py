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

# Names that speak for the site (RFC 2142 mailboxes, roles, system accounts).
RESERVED_USERNAMES = (
    "abuse",
    "admin",
    "administrator",
    "hostmaster",
    "info",
    "mailer-daemon",
    "moderator",
    "no-reply",
    "noreply",
    "postmaster",
    "root",
    "security",
    "staff",
    "superuser",
    "support",
    "system",
    "webmaster",
)

# ACCOUNTS_RATE_LIMITS by default (django-allauth's notation; see accounts.ratelimit).
DEFAULT_RATE_LIMITS = {
    "login_failed": "10/m/ip,5/5m/key",
    "signup": "20/m/ip",
    "reset_password": "20/m/ip,5/m/key",
    "change_email": "1/m/user",
    "resend_verification": "1/m/user",
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
        """Seconds to wait for a connection to DynamoDB (at most a quarter of
        :attr:`REQUEST_DEADLINE`). Default 2."""
        return self._setting("CONNECT_TIMEOUT", 2)

    @property
    def READ_TIMEOUT(self):
        """Seconds to wait for DynamoDB's answer (at most half of :attr:`REQUEST_DEADLINE`).
        Default 10."""
        return self._setting("READ_TIMEOUT", 10)

    @property
    def UNIQUE_FIELDS(self):
        """Unique account fields: ``{field: {"namespace": ..., "normalizer": ..., "allow_empty": ...}}``.

        ``namespace`` (required) is the lock key prefix, its own per field; ``normalizer``
        (a dotted path or a callable, default :func:`accounts.uniqueness.normalize_text`)
        turns a value into the text two values must share to collide; with
        ``allow_empty=True`` (default False) an empty value takes no lock;
        ``skeleton_namespace`` (optional) adds a second lock, keyed on the UTS #39 confusable
        skeleton of the normalized value, so look-alikes collide too.

        Default: ``email`` in namespace ``EMAIL``, normalized with
        :func:`accounts.identifiers.normalize_email_key` (IDNA domain); ``username`` in
        namespace ``HANDLE``, normalized with :func:`accounts.identifiers.normalize_username_key`,
        and its skeleton in namespace ``HANDLE_SKEL``.
        """
        return self._setting(
            "UNIQUE_FIELDS",
            {
                "email": {"namespace": "EMAIL", "normalizer": "accounts.identifiers.normalize_email_key"},
                "username": {
                    "namespace": "HANDLE",
                    "normalizer": "accounts.identifiers.normalize_username_key",
                    "skeleton_namespace": "HANDLE_SKEL",
                },
            },
        )

    @property
    def USERNAME_BLACKLIST(self):
        """Usernames nobody may sign up with or change to, compared by confusable skeleton
        (``аdmin`` and ``ADMIN`` are ``admin``); staff may still use them
        (``accounts_createstaff``, the staff pages). Default :data:`RESERVED_USERNAMES`."""
        return self._setting("USERNAME_BLACKLIST", RESERVED_USERNAMES)

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
    def CLOCK_SKEW_MARGIN(self):
        """How far apart two servers' clocks may be, plus the seconds a request may take from
        its planning to its last resend: a ``timedelta`` or seconds. A value held by an
        expired claim (an unverified sign-up) is taken only once ``expires`` is older than
        this by the taking server's clock, so a holder whose clock is behind can never act
        on a value already given to someone else. Default 5 minutes."""
        value = self._setting("CLOCK_SKEW_MARGIN", timedelta(minutes=5))
        value = value if isinstance(value, timedelta) else timedelta(seconds=value)
        if value < timedelta(0):
            raise ImproperlyConfigured(f"ACCOUNTS_CLOCK_SKEW_MARGIN is {value}; it cannot be negative.")
        return value

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
    def UNIQUE_MODELS(self):
        """Dotted paths of the other PynamoDB models in the table that declare unique
        constraints (e.g. ``["accounts.examples.Player"]``). The audit, its repairs and the
        backfill cover these as well as the account model; each declares ``key_prefix``, the
        start of its items' PK (``"PLAYER#"``). Default ``[]``."""
        return self._setting("UNIQUE_MODELS", [])

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

    # Sessions, rate limits and the request deadline (issue 10).

    @property
    def SESSION_TOUCH_INTERVAL(self):
        """Seconds after which a page refreshes its session's "last seen" (one extra guarded
        ``PutItem`` on that page); ``None`` never refreshes it. Default 900 (15 minutes)."""
        return self._setting("SESSION_TOUCH_INTERVAL", 900)

    @property
    def RATE_LIMITS(self):
        """Rate limits per action in django-allauth's notation, e.g. ``{"signup": "20/m/ip"}``:
        the actions named replace their defaults (:data:`DEFAULT_RATE_LIMITS`), a false value
        turns one off, and ``False`` or ``{}`` turns every limit off. Default: the defaults."""
        return self._setting("RATE_LIMITS", DEFAULT_RATE_LIMITS)

    @property
    def REQUEST_DEADLINE(self):
        """Seconds a web request may spend waiting on DynamoDB in all, retries included;
        past it the request answers 503 (see :mod:`accounts.deadline`). ``None``: no
        deadline, only the timeouts. Default 5."""
        return self._setting("REQUEST_DEADLINE", 5)

    @property
    def TRUSTED_PROXY_COUNT(self):
        """How many reverse proxies in front of the site append to ``X-Forwarded-For``; the
        client address is the one the outermost of them saw. Default 0: ``REMOTE_ADDR``."""
        return self._setting("TRUSTED_PROXY_COUNT", 0)


app_settings = AppSettings()
