"""Which identifiers a site asks for and logs in by (``ACCOUNTS_SIGNUP_FIELDS``,
``ACCOUNTS_LOGIN_METHODS``, django-allauth's settings), the questions every layer asks of
them, and their system checks.

A site without ``username`` in its sign-up fields has no usernames at all: the forms ask
for none, accounts hold none, no ``HANDLE`` lock is taken (see
:attr:`~accounts.app_settings.AppSettings.UNIQUE_FIELDS`), and Django's
``User.USERNAME_FIELD`` is the email address (:func:`natural_key_field`).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from django.conf import settings
from django.core import checks
from django.core.exceptions import ImproperlyConfigured
from django.utils.translation import gettext_lazy as _

from .app_settings import DEFAULT_LOGIN_METHODS, DEFAULT_SIGNUP_FIELDS, OPTIONAL, app_settings

if TYPE_CHECKING:
    from django_stubs_ext import StrOrPromise

EMAIL, USERNAME, PASSWORD1, PASSWORD2, PHONE = "email", "username", "password1", "password2", "phone"
# The sign-up fields this app knows, and the login methods (in the order config lists them).
KNOWN_FIELDS = (EMAIL, USERNAME, PASSWORD1, PASSWORD2, PHONE)
KNOWN_METHODS = (EMAIL, USERNAME, PHONE)
# What django-allauth's users often write by mistake, and what they mean (as allauth's check).
MISTAKES = {"password": "password1", "password*": "password1*"}


def _signup_fields() -> dict[str, dict[str, bool]]:
    try:
        return app_settings.SIGNUP_FIELDS
    except ImproperlyConfigured:
        # accounts.E030 says what is wrong; meanwhile every question is answered as by default.
        return {entry.rstrip("*"): {"required": entry.endswith("*")} for entry in DEFAULT_SIGNUP_FIELDS}


def _login_methods() -> frozenset[str]:
    try:
        return app_settings.LOGIN_METHODS
    except ImproperlyConfigured:
        return DEFAULT_LOGIN_METHODS  # accounts.E032 says what is wrong


def has_username() -> bool:
    """Whether the site has usernames (``username`` is a sign-up field, required or not)."""
    return USERNAME in _signup_fields()


def username_required() -> bool:
    """Whether every account has a username (``username*``)."""
    return _signup_fields().get(USERNAME, {}).get("required", False)


def has_phone() -> bool:
    """Whether the site has phone numbers (:mod:`accounts.phones`): ``phone`` is a sign-up
    field (required or not) or a login method."""
    return PHONE in _signup_fields() or PHONE in _login_methods()


def asks_for_phone() -> bool:
    """Whether the sign-up asks for a phone number (``phone`` or ``phone*``)."""
    return PHONE in _signup_fields()


def phone_required() -> bool:
    """Whether a sign-up must give a phone number (``phone*``)."""
    return _signup_fields().get(PHONE, {}).get("required", False)


def asks_password_twice() -> bool:
    """Whether the sign-up asks for the password a second time (``password2``)."""
    return PASSWORD2 in _signup_fields()


def login_methods() -> list[str]:
    """What a login may name an account by, among ``ACCOUNTS_LOGIN_METHODS``, in a stable
    order (``email``, ``username``, ``phone``), as the API's ``config`` lists them. A site
    without usernames logs in by none; were nothing left (``accounts.E033``), by the address
    every account has."""
    usable = [
        method for method in KNOWN_METHODS if method in _login_methods() and (method != USERNAME or has_username())
    ]
    return usable or [EMAIL]


def logs_in_by(method: str) -> bool:
    """Whether a login may name an account by ``method`` (``"email"``, ``"username"``, ``"phone"``)."""
    return method in login_methods()


def login_label() -> StrOrPromise:
    """The label of a field that names the account to log in, after :func:`login_methods`:
    "Username or email address", "Email address" or "Username", or with ``phone`` among them
    "Email address or phone number" and the like."""
    labels: dict[tuple[str, ...], StrOrPromise] = {
        (EMAIL,): _("Email address"),
        (USERNAME,): _("Username"),
        (EMAIL, USERNAME): _("Username or email address"),
        (PHONE,): _("Phone number"),
        (EMAIL, PHONE): _("Email address or phone number"),
        (USERNAME, PHONE): _("Username or phone number"),
        (EMAIL, USERNAME, PHONE): _("Username, email address or phone number"),
    }
    return labels[tuple(login_methods())]


def natural_key_field() -> str:
    """Django's ``User.USERNAME_FIELD``: ``"username"`` when every account has one and
    people log in with it (the default), else ``"email"``, which every account has and which
    is unique too. ``createsuperuser`` asks for it first, ``get_by_natural_key`` and
    ``changepassword`` look accounts up by it, and ``str(user)`` shows it."""
    return USERNAME if username_required() and logs_in_by(USERNAME) else EMAIL


def required_fields() -> list[str]:
    """Django's ``User.REQUIRED_FIELDS``: the other required identifier (``createsuperuser``
    asks for it after :func:`natural_key_field`)."""
    required = [EMAIL, *([USERNAME] if username_required() else [])]
    return [field for field in required if field != natural_key_field()]


# The system checks: what cannot work together, as django-allauth's settings_check says.


@checks.register(checks.Tags.compatibility)
def check_signup_fields(app_configs: Any, **kwargs: Any) -> list[checks.CheckMessage]:
    """E030, E032-E035, W030-W032: ``ACCOUNTS_SIGNUP_FIELDS`` and ``ACCOUNTS_LOGIN_METHODS``,
    each well formed, and together (with ``ACCOUNTS_UNIQUE_FIELDS`` and
    ``ACCOUNTS_EMAIL_VERIFICATION``); E031, phone numbers' adapter, is
    :func:`accounts.phones.checks.check_phone_adapter`."""
    issues = [*_signup_fields_issues(), *_login_methods_issues()]
    if issues:
        return issues
    fields, methods = app_settings.SIGNUP_FIELDS, app_settings.LOGIN_METHODS
    hints = {
        USERNAME: "Add 'username*' to ACCOUNTS_SIGNUP_FIELDS, or log in by email only: ACCOUNTS_LOGIN_METHODS = {\"email\"}.",
        PHONE: "Add 'phone*' (or 'phone') to ACCOUNTS_SIGNUP_FIELDS, or leave 'phone' out of ACCOUNTS_LOGIN_METHODS.",
    }
    missing = [method for method in (USERNAME, PHONE) if method in methods and method not in fields]
    for method in missing:
        issues.append(
            checks.Error(
                f"ACCOUNTS_LOGIN_METHODS has {method!r}, but ACCOUNTS_SIGNUP_FIELDS has no {method!r}: "
                "nobody would have one to log in with.",
                hint=hints[method],
                id="accounts.E033",
            )
        )
    if not missing and not any(fields.get(method, {}).get("required") for method in methods):
        issues.append(
            checks.Warning(
                "ACCOUNTS_LOGIN_METHODS conflicts with ACCOUNTS_SIGNUP_FIELDS: no login method is a required "
                f"sign-up field ({', '.join(sorted(methods))}), so an account made without one cannot log in "
                "with its password.",
                hint="Make the field required ('username*'), or add 'email' to ACCOUNTS_LOGIN_METHODS.",
                id="accounts.W030",
            )
        )
    if app_settings.EMAIL_VERIFICATION == OPTIONAL and not (
        fields.get(USERNAME, {}).get("required") and USERNAME in methods
    ):
        # An unverified account holds no lock for its address (only a proven mailbox does):
        # found by nothing else, it cannot log in again until it verifies.
        issues.append(
            checks.Warning(
                "ACCOUNTS_EMAIL_VERIFICATION is 'optional', but an account may have no username to log in with: "
                "until its address is verified, such an account cannot log in again once it logged out (an "
                "unverified address is not its own yet, and looks up no account).",
                hint="Use 'mandatory' (or 'none'), or make 'username*' a login method.",
                id="accounts.W032",
            )
        )
    declared = getattr(settings, "ACCOUNTS_UNIQUE_FIELDS", {})
    if USERNAME not in fields and isinstance(declared, dict) and USERNAME in declared:
        issues.append(
            checks.Warning(
                "ACCOUNTS_UNIQUE_FIELDS declares 'username', but ACCOUNTS_SIGNUP_FIELDS has no 'username': "
                "the site has no usernames, and the declaration is ignored.",
                hint="Remove 'username' from ACCOUNTS_UNIQUE_FIELDS, or add it to ACCOUNTS_SIGNUP_FIELDS.",
                id="accounts.W031",
            )
        )
    return issues


def _signup_fields_issues() -> list[checks.CheckMessage]:
    """E030, E034-E035: the entries of ``ACCOUNTS_SIGNUP_FIELDS``."""
    raw = getattr(settings, "ACCOUNTS_SIGNUP_FIELDS", DEFAULT_SIGNUP_FIELDS)
    try:
        fields = app_settings.SIGNUP_FIELDS
    except ImproperlyConfigured as error:
        return [checks.Error(str(error), id="accounts.E030")]
    issues: list[checks.CheckMessage] = []
    names = [entry.partition("*")[0] for entry in raw]
    for index, entry in enumerate(raw):
        name, _, rest = entry.partition("*")
        if entry in MISTAKES:
            problem = f"use {MISTAKES[entry]!r}"
        elif name not in KNOWN_FIELDS or rest:
            problem = f"the fields are {', '.join(repr(known) for known in KNOWN_FIELDS)}, '*' after a required one"
        elif name in names[:index]:
            problem = "it is listed more than once"
        else:
            continue
        issues.append(
            checks.Error(
                f"ACCOUNTS_SIGNUP_FIELDS has {entry!r}, which is not a sign-up field: {problem}.", id="accounts.E030"
            )
        )
    if not fields.get(EMAIL, {}).get("required"):
        issues.append(
            checks.Error(
                "ACCOUNTS_SIGNUP_FIELDS must have 'email*': every account here has an address (its verification, "
                "password reset, login by code and security notices go there).",
                hint='Add "email*" (required).',
                id="accounts.E034",
            )
        )
    if not fields.get(PASSWORD1, {}).get("required"):
        issues.append(
            checks.Error(
                "ACCOUNTS_SIGNUP_FIELDS must have 'password1*': a sign-up without a password is not available "
                "(a sign-up with a passkey is: ACCOUNTS_PASSKEY_SIGNUP).",
                hint='Add "password1*" (required), and "password2*" to ask for it twice.',
                id="accounts.E035",
            )
        )
    return issues


def _login_methods_issues() -> list[checks.CheckMessage]:
    """E032: the entries of ``ACCOUNTS_LOGIN_METHODS``."""
    try:
        methods = app_settings.LOGIN_METHODS
    except ImproperlyConfigured as error:
        return [checks.Error(str(error), id="accounts.E032")]
    issues: list[checks.CheckMessage] = []
    if not methods:
        issues.append(checks.Error("ACCOUNTS_LOGIN_METHODS is empty: nobody could log in.", id="accounts.E032"))
    for method in sorted(methods):
        if method not in KNOWN_METHODS:
            issues.append(
                checks.Error(
                    f"ACCOUNTS_LOGIN_METHODS has {method!r}, which is not a login method: use 'email', "
                    "'username' and 'phone'.",
                    id="accounts.E032",
                )
            )
    return issues
