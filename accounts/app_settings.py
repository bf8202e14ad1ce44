"""The ``ACCOUNTS_*`` settings, read lazily so ``override_settings`` just works.

Every setting is optional; the property names below are the setting names without the
``ACCOUNTS_`` prefix, and each docstring states the default. Nothing is cached here: each
access reads ``django.conf.settings`` again.
"""

from collections.abc import Collection, Mapping, Sequence
from datetime import timedelta
from typing import Any, Literal

from django.conf import settings
from django.core.exceptions import ImproperlyConfigured
from django.forms import BaseForm

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

# The unique account fields every project has; ACCOUNTS_UNIQUE_FIELDS adds to these.
DEFAULT_UNIQUE_FIELDS = {
    "email": {"namespace": "EMAIL", "normalizer": "accounts.identifiers.normalize_email_key"},
    "username": {
        "namespace": "HANDLE",
        "normalizer": "accounts.identifiers.normalize_username_key",
        "skeleton_namespace": "HANDLE_SKEL",
    },
}

# The unique field ACCOUNTS_SIGNUP_FIELDS' "phone" (or ACCOUNTS_LOGIN_METHODS' "phone") adds: a
# number in E.164 (accounts.phones), held by its account only once its code was typed back.
PHONE_UNIQUE_FIELD = {
    "namespace": "PHONE",
    "normalizer": "accounts.phones.numbers.normalize_phone_key",
    "partial_on": "phone_verified",
    "allow_empty": True,
}

# ACCOUNTS_SIGNUP_FIELDS by default (django-allauth's notation, "*" = required): today's form.
DEFAULT_SIGNUP_FIELDS = ("email*", "username*", "password1*", "password2*")
# ACCOUNTS_LOGIN_METHODS by default: a username or an email address.
DEFAULT_LOGIN_METHODS = frozenset({"email", "username"})

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
    # Every mail the app sends, counted per address (its email lock key), whatever sent it.
    "mail": "5/m/key",
    # Security notices (a password, an address, a factor changed), per address: a budget of
    # their own, which mail anyone can make the app send does not use up.
    "notice": "10/h/key",
    # The second step of a login (a TOTP or recovery code): failures, per account.
    "mfa_attempt": "5/5m/key,20/d/key",
    # A password typed to reauthenticate, per account.
    "reauthenticate": "10/m/user",
    # Phone numbers (django-allauth's actions): asking to change the account's number, per
    # account; a verification code texted, per number and per client.
    "change_phone": "1/m/user",
    "verify_phone": "1/30s/key,3/m/ip",
    # Every text message the app sends (a verification or a login code), counted per number,
    # whatever sent it: the daily cap that keeps the site from paying for a flood of them.
    "sms": "3/m/key,10/d/key",
}


class AppSettings:
    """The ``ACCOUNTS_*`` settings with their defaults; use the instance :data:`app_settings`."""

    prefix = "ACCOUNTS_"

    def _setting(self, name: str, default: Any) -> Any:
        return getattr(settings, self.prefix + name, default)

    def _project_setting(self, name: str, default: Any) -> Any:
        """Django's setting ``name`` when the project sets it, else ``default``.

        Django's own defaults for LOGIN_URL and LOGIN_REDIRECT_URL are hard-coded
        ``/accounts/...`` paths, wrong as soon as the URLs are included under another prefix.
        """
        # LazySettings passes is_overridden to the settings it wraps; django-stubs' plugin
        # reads it as a setting's name.
        return getattr(settings, name) if settings.is_overridden(name) else default  # type: ignore[misc]

    @property
    def TABLE_NAME(self) -> str:
        """DynamoDB table holding accounts and lock items. Default ``"accounts"``."""
        return self._setting("TABLE_NAME", "accounts")

    @property
    def ENDPOINT_URL(self) -> str | None:
        """DynamoDB endpoint (e.g. DynamoDB Local); ``None`` means AWS's endpoint for the region."""
        return self._setting("ENDPOINT_URL", None) or None

    @property
    def REGION(self) -> str:
        """AWS region. Default ``"us-east-1"``."""
        return self._setting("REGION", "us-east-1")

    @property
    def WRITE_REGION(self) -> str | None:
        """The one region that writes accounts when the table is a global table (MREC): a
        process whose :attr:`REGION` differs serves reads only. Default ``None`` (a table of
        one region). See :mod:`accounts.regions`."""
        return self._setting("WRITE_REGION", None) or None

    @property
    def CONNECT_TIMEOUT(self) -> float:
        """Seconds to wait for a connection to DynamoDB (at most a quarter of
        :attr:`REQUEST_DEADLINE`). Default 2."""
        return self._setting("CONNECT_TIMEOUT", 2)

    @property
    def READ_TIMEOUT(self) -> float:
        """Seconds to wait for DynamoDB's answer (at most half of :attr:`REQUEST_DEADLINE`).
        Default 10."""
        return self._setting("READ_TIMEOUT", 10)

    @property
    def UNIQUE_FIELDS(self) -> dict[str, Any]:
        """Unique account fields: ``{field: {"namespace": ..., "normalizer": ..., "allow_empty": ...}}``.

        ``namespace`` (required) is the lock key prefix, its own per field; ``normalizer``
        (a dotted path or a callable, default :func:`accounts.uniqueness.normalize_text`)
        turns a value into the text two values must share to collide; with
        ``allow_empty=True`` (default False) an empty value takes no lock;
        ``skeleton_namespace`` (optional) adds a second lock, keyed on the UTS #39 confusable
        skeleton of the normalized value, so look-alikes collide too.

        The setting adds to :data:`DEFAULT_UNIQUE_FIELDS`: ``email`` in namespace ``EMAIL``,
        normalized with :func:`accounts.identifiers.normalize_email_key` (IDNA domain), and
        ``username`` in namespace ``HANDLE``, normalized with
        :func:`accounts.identifiers.normalize_username_key`, with its skeleton in namespace
        ``HANDLE_SKEL``. Options given for ``email`` or ``username`` replace only those
        options; an option set to ``None`` is removed (``{"username": {"skeleton_namespace":
        None}}`` drops the look-alike lock, which ``accounts.W010`` then warns about).

        :attr:`SIGNUP_FIELDS` decides whether ``username`` is a unique field at all: without
        ``username`` there it is not (options given for it here are ignored, and
        ``accounts.W031`` says so); with ``username`` (optional) its ``allow_empty`` is True, an
        account without a username taking no lock; with ``username*`` (the default) it is as
        declared here (False unless set).

        With ``phone`` among :attr:`SIGNUP_FIELDS` or :attr:`LOGIN_METHODS`, ``phone`` is a
        unique field too (:data:`PHONE_UNIQUE_FIELD`): in namespace ``PHONE``, normalized to
        E.164 by :func:`accounts.phones.numbers.normalize_phone_key`, held only while
        ``phone_verified`` (the number's code was typed back), none for an account without one.
        """
        fields: dict[str, Any] = {field: dict(options) for field, options in DEFAULT_UNIQUE_FIELDS.items()}
        username = self._signup_username()
        if self._has_phone():
            fields["phone"] = dict(PHONE_UNIQUE_FIELD)
        for field, options in self._setting("UNIQUE_FIELDS", {}).items():
            if not isinstance(options, dict):
                fields[field] = options  # accounts.E005 says what is wrong
                continue
            merged = {**fields.get(field, {}), **options}
            fields[field] = {name: value for name, value in merged.items() if value is not None}
        if username is None:
            del fields["username"]
        elif not username["required"] and isinstance(fields["username"], dict):
            fields["username"]["allow_empty"] = True
        return fields

    def _has_phone(self) -> bool:
        """Whether the site has phone numbers: ``phone`` among :attr:`SIGNUP_FIELDS` or
        :attr:`LOGIN_METHODS` (``False`` while either is malformed: its check says so)."""
        try:
            return "phone" in self.SIGNUP_FIELDS or "phone" in self.LOGIN_METHODS
        except ImproperlyConfigured:
            return False

    def _signup_username(self) -> dict[str, bool] | None:
        """:attr:`SIGNUP_FIELDS`' ``username``; the default's while the setting is malformed
        (``accounts.E030`` says so, and the checks reading :attr:`UNIQUE_FIELDS` go on)."""
        try:
            return self.SIGNUP_FIELDS.get("username")
        except ImproperlyConfigured:
            return {"required": True}

    @property
    def SIGNUP_FIELDS(self) -> dict[str, dict[str, bool]]:
        """The fields a sign-up asks for, in django-allauth's notation: a list such as
        ``["email*", "username*", "password1*", "password2*"]`` (the default: today's form),
        where ``*`` marks a required field. Read as allauth reads it, ``{"email": {"required":
        True}, ...}`` in the order given.

        Without ``username`` the site has no usernames at all: no field asks for one (the
        sign-up, the staff pages, the API), no account holds one and no ``HANDLE`` lock is
        taken. ``username`` without ``*`` is optional: an account without one takes no lock
        (its constraint's ``allow_empty``). ``email*`` and ``password1*`` are required here (an
        account always has an address and a password or a passkey); ``password2`` asks for the
        password twice. ``phone`` comes with phone numbers (not available yet). System checks
        ``accounts.E030``-``E035`` and ``W030``-``W032`` refuse what cannot work together. A
        value that is not a list of strings raises
        :class:`~django.core.exceptions.ImproperlyConfigured`."""
        value = self._setting("SIGNUP_FIELDS", DEFAULT_SIGNUP_FIELDS)
        if isinstance(value, str) or not isinstance(value, list | tuple) or not all(isinstance(f, str) for f in value):
            raise ImproperlyConfigured(
                f"ACCOUNTS_SIGNUP_FIELDS is {value!r}, not a list of field names; use a list such as "
                '["email*", "username*", "password1*", "password2*"].'
            )
        fields: dict[str, dict[str, bool]] = {}
        for entry in value:
            name, required, _ = entry.partition("*")
            fields[name] = {"required": bool(required)}
        return fields

    @property
    def LOGIN_METHODS(self) -> frozenset[str]:
        """What a person logs in with, as django-allauth's ``ACCOUNT_LOGIN_METHODS``: a set of
        ``"email"`` and ``"username"``. Default ``{"email", "username"}`` (either, as today);
        ``{"email"}`` for a site without usernames. The login form, ``auth/login`` of the API,
        login by code and Django's ``authenticate()`` look a login up only by these (a
        username typed on an email-only site names nobody). A value that is not a collection
        of strings raises :class:`~django.core.exceptions.ImproperlyConfigured`."""
        value = self._setting("LOGIN_METHODS", DEFAULT_LOGIN_METHODS)
        if isinstance(value, str) or not isinstance(value, Collection) or not all(isinstance(m, str) for m in value):
            raise ImproperlyConfigured(
                f"ACCOUNTS_LOGIN_METHODS is {value!r}, not a set of login methods; use a set such as "
                '{"email", "username"}.'
            )
        return frozenset(value)

    @property
    def USERNAME_BLACKLIST(self) -> Collection[str]:
        """Usernames nobody may sign up with or change to, compared by confusable skeleton
        (``аdmin`` and ``ADMIN`` are ``admin``); staff may still use them
        (``accounts_createstaff``, the staff pages). Default :data:`RESERVED_USERNAMES`."""
        return self._setting("USERNAME_BLACKLIST", RESERVED_USERNAMES)

    @property
    def EMAIL_VERIFICATION(self) -> str:
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
    def UNVERIFIED_EXPIRY(self) -> timedelta:
        """How long an unverified sign-up (and the username it holds) lives, and how long a
        verification or email-change link works: a ``timedelta`` or seconds. Sending the
        verification mail again does not extend it. Default 24 hours (a name held without
        a mailbox is released soon)."""
        value = self._setting("UNVERIFIED_EXPIRY", timedelta(hours=24))
        return value if isinstance(value, timedelta) else timedelta(seconds=value)

    @property
    def CLOCK_SKEW_MARGIN(self) -> timedelta:
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
    def AUDIT_MEMORY_LIMIT(self) -> str:
        """The most memory the audit's join (DuckDB) may take, in DuckDB's notation
        (``"1GB"``, ``"512MB"``); past it, DuckDB spills to files in the audit's temporary
        directory. Default ``"1GB"``."""
        return self._setting("AUDIT_MEMORY_LIMIT", "1GB")

    @property
    def PREVENT_ENUMERATION(self) -> bool:
        """Whether the sign-up and email-change forms hide which addresses are registered.

        When True, a sign-up with an address a verified account holds answers exactly as
        one with a new address (the same "check your inbox" page, whatever else the form
        gets wrong, and one mail: the owner's notice instead of a link), and so does an
        email change to such an address. Since a sign-up logged in at once would tell, every
        sign-up then proves its mailbox before it logs in, in every mode. When False, the
        forms say "This email address is already in use."

        Default: True in mode "mandatory" (the default mode), False in "optional" and
        "none" (where a sign-up logs in at once), as django-allauth does.
        """
        value = self._setting("PREVENT_ENUMERATION", None)
        return self.EMAIL_VERIFICATION == MANDATORY if value is None else bool(value)

    @property
    def SITE_URL(self) -> str | None:
        """The site's address, scheme and host only, e.g. ``"https://accounts.example.com"``
        (``"http://localhost:8000"`` in development): every link in mail starts with it, and
        a passkey's relying party is its host. A request's ``Host`` header is never used
        for either. Default ``None`` (not set): system check ``accounts.E014``, and no mail
        with a link can be sent."""
        return self._setting("SITE_URL", None) or None

    @property
    def ACCOUNT_MODEL(self) -> str:
        """Dotted path of the PynamoDB account model: ``accounts.tables.Account`` or a subclass
        adding attributes (e.g. a unique ``phone``). Default ``"accounts.tables.Account"``."""
        return self._setting("ACCOUNT_MODEL", "accounts.tables.Account")

    @property
    def UNIQUE_MODELS(self) -> Sequence[str]:
        """Dotted paths of the other PynamoDB models in the table that declare unique
        constraints (e.g. ``["accounts.examples.Player"]``). The audit, its repairs and the
        backfill cover these as well as the account model; each declares ``key_prefix``, the
        start of its items' PK (``"PLAYER#"``). Default ``[]``."""
        return self._setting("UNIQUE_MODELS", [])

    @property
    def ADAPTER(self) -> str:
        """Dotted path of the adapter class. Default ``"accounts.adapter.DefaultAccountAdapter"``."""
        return self._setting("ADAPTER", "accounts.adapter.DefaultAccountAdapter")

    @property
    def FORMS(self) -> dict[str, str | type[BaseForm]]:
        """Form class of each account page by name (``signup``, ``login``, ``email_change``,
        ``username_change``, ``password_change``, ``delete``), as a dotted path or a class.

        A project names only the forms it replaces: ``{"signup": "myproject.forms.SignupForm"}``;
        the others keep their defaults (:data:`DEFAULT_FORMS`).
        """
        return {**DEFAULT_FORMS, **self._setting("FORMS", {})}

    @property
    def LOGIN_URL(self) -> str:
        """Where the account and staff pages send a visitor who must log in first.

        Default: ``settings.LOGIN_URL`` when the project sets it, else ``"accounts:login"``.
        """
        return self._setting("LOGIN_URL", self._project_setting("LOGIN_URL", "accounts:login"))

    @property
    def LOGIN_REDIRECT_URL(self) -> str:
        """Where a login lands without ``next``.

        Default: ``settings.LOGIN_REDIRECT_URL`` when the project sets it, else ``"accounts:profile"``.
        """
        return self._setting("LOGIN_REDIRECT_URL", self._project_setting("LOGIN_REDIRECT_URL", "accounts:profile"))

    @property
    def SIGNUP_REDIRECT_URL(self) -> str:
        """Where a new account lands after signup. Default: :attr:`LOGIN_REDIRECT_URL`."""
        return self._setting("SIGNUP_REDIRECT_URL", self.LOGIN_REDIRECT_URL)

    @property
    def LOGOUT_REDIRECT_URL(self) -> str:
        """Where logout lands without ``next``. Default: ``settings.LOGOUT_REDIRECT_URL``, else ``"/"``."""
        return self._setting("LOGOUT_REDIRECT_URL", settings.LOGOUT_REDIRECT_URL or "/")

    @property
    def DELETE_REDIRECT_URL(self) -> str:
        """Where a deleted account lands. Default: :attr:`LOGOUT_REDIRECT_URL`."""
        return self._setting("DELETE_REDIRECT_URL", self.LOGOUT_REDIRECT_URL)

    # Sessions, rate limits and the request deadline (issue 10).

    @property
    def SESSION_TOUCH_INTERVAL(self) -> float | None:
        """Seconds after which a page refreshes its session's "last seen" (one extra guarded
        ``PutItem`` on that page, the largest write cost of a busy site: see the README's
        "Costs"); ``None`` never refreshes it. Default 3600 (an hour). With
        :attr:`SESSION_IDLE_TIMEOUT` set, a session is refreshed at least every half of it
        (see :func:`accounts.sessions.touch_interval`)."""
        return self._setting("SESSION_TOUCH_INTERVAL", 3600)

    @property
    def MAX_SESSIONS(self) -> int:
        """Live sessions one account may have at once (``accounts.sessions``), a bound: each
        session takes one of this many session slots in the transaction that writes it,
        guarded by the slot's holder as read; a login beyond it ends the least recently
        seen, in the login's own session write. Default 20."""
        return self._setting("MAX_SESSIONS", 20)

    @property
    def RATE_LIMITS(self) -> Mapping[str, str | Literal[False] | None] | Literal[False]:
        """Rate limits per action in django-allauth's notation, e.g. ``{"signup": "20/m/ip"}``:
        the actions named replace their defaults (:data:`DEFAULT_RATE_LIMITS`), a false value
        turns one off, and ``False`` or ``{}`` turns every limit off. Default: the defaults."""
        return self._setting("RATE_LIMITS", DEFAULT_RATE_LIMITS)

    @property
    def REQUEST_DEADLINE(self) -> float | None:
        """Seconds a web request may spend waiting on DynamoDB in all, retries included;
        past it the request answers 503 (see :mod:`accounts.deadline`). ``None``: no
        deadline, only the timeouts. Default 5."""
        return self._setting("REQUEST_DEADLINE", 5)

    # Second factors, passkeys and reauthentication (issue 20).

    @property
    def WEBAUTHN_RP_ID(self) -> str | None:
        """The relying-party id passkeys are registered for: a domain, never an IP address
        (browsers refuse one). Default ``None``: the host of :attr:`SITE_URL`."""
        return self._setting("WEBAUTHN_RP_ID", None) or None

    @property
    def WEBAUTHN_ORIGIN(self) -> str | None:
        """The origin a passkey ceremony must come from, e.g. ``"https://example.com"``, or a
        list of origins. Default ``None``: the origin of :attr:`SITE_URL`."""
        return self._setting("WEBAUTHN_ORIGIN", None) or None

    @property
    def MFA_ISSUER(self) -> str | None:
        """The site's name in authenticator apps and passkey prompts. Default ``None``: the
        relying-party id."""
        return self._setting("MFA_ISSUER", None) or None

    @property
    def MFA_REQUIRED_FOR_STAFF(self) -> bool:
        """When True, staff without a second factor (an authenticator app or a passkey) are
        sent to set one up before any staff page. Default False."""
        return self._setting("MFA_REQUIRED_FOR_STAFF", False)

    @property
    def MFA_RECOVERY_CODES_DISPLAY_TIMEOUT(self) -> float:
        """Seconds new recovery codes stay readable, to the session that generated them
        only, through ``GET account/authenticators/recovery-codes`` and the recovery codes
        page (sealed in that session: see :mod:`accounts.mfa.shown_codes`); after that only
        how many are left is shown. A ``timedelta`` or seconds. Default 600 (10 minutes)."""
        value = self._setting("MFA_RECOVERY_CODES_DISPLAY_TIMEOUT", 600)
        return value.total_seconds() if isinstance(value, timedelta) else value

    @property
    def MFA_TRUST_ENABLED(self) -> bool:
        """When True, after the second step of a login a browser may be trusted (the
        checkbox of the second step's page; the API's ``mfa_trust`` flow and
        ``auth/2fa/trust``), and later logins of the account from it skip the second step
        for :attr:`MFA_TRUST_COOKIE_AGE` (see :mod:`accounts.mfa.trust`). django-allauth's
        ``MFA_TRUST_ENABLED``. Default False."""
        return bool(self._setting("MFA_TRUST_ENABLED", False))

    @property
    def MFA_TRUST_COOKIE_AGE(self) -> timedelta:
        """How long a trusted browser skips the second step (its trust cookie's age; a
        password change or any change of the authenticators ends it sooner): a ``timedelta``
        or seconds. django-allauth's ``MFA_TRUST_COOKIE_AGE``. Default 14 days."""
        value = self._setting("MFA_TRUST_COOKIE_AGE", timedelta(days=14))
        return value if isinstance(value, timedelta) else timedelta(seconds=value)

    @property
    def PASSKEY_SIGNUP(self) -> bool:
        """When True, the signup page offers to sign up with a passkey instead of a
        password. Default False."""
        return self._setting("PASSKEY_SIGNUP", False)

    @property
    def REAUTHENTICATION_TIMEOUT(self) -> float:
        """Seconds a password or passkey typed in (a login included) counts as fresh for
        sensitive changes: authenticators, email, password, deletion, logging out other
        sessions. Past it, those pages ask again. A ``timedelta`` or seconds. Default 300."""
        value = self._setting("REAUTHENTICATION_TIMEOUT", 300)
        return value.total_seconds() if isinstance(value, timedelta) else value

    @property
    def REAUTHENTICATION_BY_CODE_ENABLED(self) -> bool:
        """When True, a signed-in person with a verified address may reauthenticate with a
        code mailed to it ("Email me a code" on the page; the API's
        ``auth/reauthenticate/code/...`` and its ``reauthenticate_by_code`` flow, as
        django-allauth's ``ACCOUNT_REAUTHENTICATION_METHODS`` with ``code``). Default True."""
        return bool(self._setting("REAUTHENTICATION_BY_CODE_ENABLED", True))

    @property
    def SECURITY_EVENT_RETENTION(self) -> int:
        """Seconds an event of an account's security timeline (a login, a password or address
        change, a factor added or removed, a staff action) is kept: its item expires then
        (the table's TTL). A ``timedelta`` or seconds. Default one year (365 days)."""
        value = self._setting("SECURITY_EVENT_RETENTION", 365 * 24 * 3600)
        return int(value.total_seconds() if isinstance(value, timedelta) else value)

    @property
    def TRUSTED_PROXY_COUNT(self) -> int:
        """How many reverse proxies in front of the site append to ``X-Forwarded-For``; the
        client address is the one the outermost of them saw. Default 0: ``REMOTE_ADDR``."""
        return self._setting("TRUSTED_PROXY_COUNT", 0)

    @property
    def IPV6_PREFIX_LENGTH(self) -> int:
        """How many leading bits of an IPv6 client address the rate limits count it by: one
        subscriber usually holds a whole /64, and picks any address in it at will. 128
        counts each address apart. Default 64."""
        return self._setting("IPV6_PREFIX_LENGTH", 64)

    @property
    def ANONYMOUS_SESSION_LIMIT(self) -> str | None:
        """How many new sessions of nobody (data kept before a login: a half-login, a
        passkey signup's first page) one client address may start, in the notation of
        :attr:`RATE_LIMITS` per ``ip`` (``"30/m/ip"``); over it the request answers 429 and
        writes no session. Counted by :class:`accounts.middleware.UnavailableMiddleware`.
        ``None``: no limit. Default ``"30/m/ip"``."""
        return self._setting("ANONYMOUS_SESSION_LIMIT", "30/m/ip")

    # Breached passwords and session timeouts (issue 26: NIST SP 800-63B-4).

    @property
    def BREACHED_PASSWORDS(self) -> str | None:
        """Where :class:`accounts.breached_passwords.BreachedPasswordValidator` looks new
        passwords up, by the first 5 hex digits of their SHA-1: a range API's URL
        (``https://api.pwnedpasswords.com``) or a directory of range files (``ABCDE`` or
        ``ABCDE.txt``). Default ``None``: no check."""
        return self._setting("BREACHED_PASSWORDS", None) or None

    @property
    def BREACHED_PASSWORDS_FAIL_CLOSED(self) -> bool:
        """When True, a new password is refused while the breached-password source cannot
        answer; else (the default, False) it is accepted, and the failure logged."""
        return self._setting("BREACHED_PASSWORDS_FAIL_CLOSED", False)

    @property
    def SESSION_IDLE_TIMEOUT(self) -> float | None:
        """Seconds of inactivity after which a session (``accounts.sessions``) ends: no
        request for that long, and it is read as absent. Tracked by the session's "last
        seen", refreshed at most once per :func:`accounts.sessions.touch_interval`, so a
        session ends between that interval short of the timeout and the timeout after its
        last request. A ``timedelta`` or seconds; ``None``: no idle timeout. Default 43200
        (12 hours). The absolute lifetime is Django's ``SESSION_COOKIE_AGE`` from the login."""
        value = self._setting("SESSION_IDLE_TIMEOUT", 43200)
        return value.total_seconds() if isinstance(value, timedelta) else value

    @property
    def DEVICE_COOKIE_AGE(self) -> timedelta:
        """How long a browser stays trusted for an account after its last login there (its
        device cookie, see :mod:`accounts.devices`): a ``timedelta`` or seconds. Default 365 days."""
        value = self._setting("DEVICE_COOKIE_AGE", timedelta(days=365))
        return value if isinstance(value, timedelta) else timedelta(seconds=value)

    # The API's token strategy (issue 34): django-allauth's HEADLESS_TOKEN_STRATEGY and
    # HEADLESS_JWT_* settings, with the ACCOUNTS_ prefix (accounts.headless.tokens).

    @property
    def HEADLESS_TOKEN_STRATEGY(self) -> Literal["session", "jwt"]:
        """What the API's ``app`` client is handed at login: ``"session"`` (the session token
        alone, ``X-Session-Token``) or ``"jwt"`` (also a short-lived access token, accepted as
        ``Authorization: Bearer``, and a single-use refresh token for ``tokens/refresh``), as
        django-allauth's ``SessionTokenStrategy`` and ``JWTTokenStrategy``. Default ``"session"``."""
        value = self._setting("HEADLESS_TOKEN_STRATEGY", "session")
        if value not in ("session", "jwt"):
            raise ImproperlyConfigured('ACCOUNTS_HEADLESS_TOKEN_STRATEGY must be "session" or "jwt".')
        return value

    @property
    def HEADLESS_JWT_ALGORITHM(self) -> str:
        """The access and refresh tokens' signing algorithm: ``"RS256"`` (with
        :attr:`HEADLESS_JWT_PRIVATE_KEY`) or ``"HS256"`` (with ``SECRET_KEY`` unless a key is
        set). Default ``"RS256"``, as django-allauth's."""
        return self._setting("HEADLESS_JWT_ALGORITHM", "RS256")

    @property
    def HEADLESS_JWT_PRIVATE_KEY(self) -> str:
        """The PEM of the RSA private key an ``RS256`` token is signed with (its public key
        verifies it), or an ``HS256`` secret. Default ``""``."""
        return self._setting("HEADLESS_JWT_PRIVATE_KEY", "")

    @property
    def HEADLESS_JWT_ACCESS_TOKEN_EXPIRES_IN(self) -> int:
        """Seconds an access token is valid. Default 300."""
        return int(self._setting("HEADLESS_JWT_ACCESS_TOKEN_EXPIRES_IN", 300))

    @property
    def HEADLESS_JWT_REFRESH_TOKEN_EXPIRES_IN(self) -> int:
        """Seconds a refresh token is valid (it dies sooner with its session, or once used).
        Default 86400 (a day)."""
        return int(self._setting("HEADLESS_JWT_REFRESH_TOKEN_EXPIRES_IN", 86400))

    @property
    def HEADLESS_JWT_AUTHORIZATION_HEADER_SCHEME(self) -> str:
        """The scheme of the ``Authorization`` header an access token travels in. Default ``"Bearer"``."""
        return self._setting("HEADLESS_JWT_AUTHORIZATION_HEADER_SCHEME", "Bearer")

    @property
    def HEADLESS_JWT_STATEFUL_VALIDATION_ENABLED(self) -> bool:
        """When True, :func:`accounts.headless.tokens.validate_access_token` also requires the
        token's session to live (a read per call), so an access token dies with its session at
        once; else it is valid until it expires. The API itself always requires the session.
        Default False."""
        return bool(self._setting("HEADLESS_JWT_STATEFUL_VALIDATION_ENABLED", False))

    @property
    def HEADLESS_JWT_ROTATE_REFRESH_TOKEN(self) -> bool:
        """When True, a refresh token is used once (a guarded write) and ``tokens/refresh``
        hands out the next one with the access token; when False it stays valid until it
        expires or its session ends. Default True."""
        return bool(self._setting("HEADLESS_JWT_ROTATE_REFRESH_TOKEN", True))

    # Identity providers (issue 27).

    @property
    def OIDC_PROVIDERS(self) -> list[dict[str, Any]]:
        """The OpenID Connect providers people may sign in with, a list of dicts ``{"id",
        "name", "issuer", "client_id", "client_secret", "scopes"}`` (``scopes`` optional,
        default ``["openid", "email", "profile"]``), and optionally ``app_client_ids`` (the
        audiences the API's app client accepts), ``fetch_userinfo`` (default True),
        ``trust_mfa``, ``mfa_acr_values``; see ``docs/identity-providers.md``.
        Default ``[]``: none."""
        return list(self._setting("OIDC_PROVIDERS", []) or [])

    @property
    def OIDC_TRUST_PROVIDER_MFA(self) -> bool:
        """When True, a provider sign-in whose ID token reports a second factor (an ``amr``
        such as ``mfa``, ``otp`` or ``hwk``, or an ``acr`` the provider's ``mfa_acr_values``
        lists) skips this site's second step; a provider's own ``trust_mfa`` overrides it.
        Default False: an account with a second factor is always asked for it."""
        return bool(self._setting("OIDC_TRUST_PROVIDER_MFA", False))

    # A single-page app over the headless API; codes instead of links (issue 34).

    @property
    def HEADLESS_FRONTEND_URLS(self) -> dict[str, str]:
        """The pages of the site's single-page app that mail and redirects lead to instead of
        the app's HTML pages, by django-allauth's names: ``account_confirm_email``,
        ``account_reset_password``, ``account_reset_password_from_key``, ``account_signup``,
        ``socialaccount_login_error``. A URL or a path (on :attr:`SITE_URL`) with ``{key}``
        where the key goes, e.g. ``{"account_confirm_email": "/account/verify-email/{key}"}``.
        Default ``{}``: every link leads to the HTML pages."""
        return dict(self._setting("HEADLESS_FRONTEND_URLS", {}) or {})

    # Phone numbers (issue 37): django-allauth's ACCOUNT_PHONE_VERIFICATION_* settings, with the
    # ACCOUNTS_ prefix (accounts.phones).

    @property
    def PHONE_VERIFICATION_TIMEOUT(self) -> int:
        """Seconds a code texted to a phone number works (allauth's
        ``PHONE_VERIFICATION_TIMEOUT``): a ``timedelta`` or seconds. Default 900 (15 minutes)."""
        value = self._setting("PHONE_VERIFICATION_TIMEOUT", 15 * 60)
        return int(value.total_seconds() if isinstance(value, timedelta) else value)

    @property
    def PHONE_VERIFICATION_MAX_ATTEMPTS(self) -> int:
        """Wrong codes one texted code may be answered with before it dies (allauth's
        ``PHONE_VERIFICATION_MAX_ATTEMPTS``), counted in DynamoDB, so concurrent guesses cannot
        outnumber it. Default 3."""
        return int(self._setting("PHONE_VERIFICATION_MAX_ATTEMPTS", 3))

    @property
    def PHONE_VERIFICATION_MAX_RESEND_COUNT(self) -> int:
        """How many new codes a verification may ask for (``auth/phone/verify/resend``, the
        page's "Send a new code"): django-allauth's ``PHONE_VERIFICATION_SUPPORTS_RESEND``,
        ``True`` meaning 2, ``False`` (the default) none, or a number."""
        return _count(self._setting("PHONE_VERIFICATION_SUPPORTS_RESEND", False))

    @property
    def PHONE_VERIFICATION_MAX_CHANGE_COUNT(self) -> int:
        """How many times the number may be changed while a sign-up's verification waits
        (``POST account/phone`` before logging in): django-allauth's
        ``PHONE_VERIFICATION_SUPPORTS_CHANGE``, ``True`` meaning 2, ``False`` (the default)
        none, or a number."""
        return _count(self._setting("PHONE_VERIFICATION_SUPPORTS_CHANGE", False))

    @property
    def HEADLESS_ONLY(self) -> bool:
        """When True, the account pages (sign-up, login, profile, email, password, second
        factors, providers, login by code, the links' pages) answer 404, as django-allauth's
        ``HEADLESS_ONLY``: people use the site's single-page app, which mail leads to
        (:attr:`HEADLESS_FRONTEND_URLS`, required then: ``accounts.E036``). A provider's
        callback and the staff pages stay. Default False."""
        return bool(self._setting("HEADLESS_ONLY", False))

    @property
    def EMAIL_VERIFICATION_BY_CODE_ENABLED(self) -> bool:
        """When True, an address is proven by a code mailed to it (typed into the page or the
        app that asked, in the same session) instead of a link: at sign-up, at a login of an
        unverified account, and for an email change. Default False (a link)."""
        return bool(self._setting("EMAIL_VERIFICATION_BY_CODE_ENABLED", False))

    @property
    def PASSWORD_RESET_BY_CODE_ENABLED(self) -> bool:
        """When True, a password reset mails a code (typed into the page or the app that
        asked, in the same session) instead of a link. Default False (a link)."""
        return bool(self._setting("PASSWORD_RESET_BY_CODE_ENABLED", False))

    # Permissions (issue 19).

    @property
    def STAFF_PERMISSIONS(self) -> Collection[str]:
        """Permissions (``"app_label.codename"``) every active staff account has, for
        ``user.has_perm()``, ``{% if perms.app.codename %}`` and the admin; a superuser has
        every permission. The adapter's ``get_user_permissions`` may grant otherwise.
        Default ``()``."""
        return self._setting("STAFF_PERMISSIONS", ())

    # Several addresses per account (issue 37).

    @property
    def MAX_EMAIL_ADDRESSES(self) -> int:
        """How many email addresses an account may have, the primary one included (as
        django-allauth's ``ACCOUNT_MAX_EMAIL_ADDRESSES``): above 1, a person adds addresses,
        verifies each by its mailed link, makes one primary, logs in with any verified one
        and removes the others (``docs/signup-and-verification.md``). Default 1: one
        address, changed by a link to the new one, as before. An account's deletion
        releases every address in its one transaction: system check ``accounts.E015``
        says when the bound makes it too large for DynamoDB's 100 actions."""
        value = self._setting("MAX_EMAIL_ADDRESSES", 1)
        if isinstance(value, bool) or not isinstance(value, int) or value < 1:
            raise ImproperlyConfigured(f"ACCOUNTS_MAX_EMAIL_ADDRESSES is {value!r}; use a whole number of at least 1.")
        return value


def _count(value: bool | int) -> int:
    """django-allauth's reading of a ``*_SUPPORTS_*`` setting: ``True`` is 2, ``False`` 0."""
    if isinstance(value, bool):
        return 2 if value else 0
    return int(value)


app_settings = AppSettings()
