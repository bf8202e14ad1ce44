"""The hooks a host project overrides: input rules, messages, redirects, what a signup stores.

Subclass :class:`DefaultAccountAdapter` and name the subclass in ``ACCOUNTS_ADAPTER``;
forms and views always reach it through :func:`get_adapter`.
"""

from __future__ import annotations

import functools
import re
from collections.abc import Callable, Iterable, Mapping
from typing import TYPE_CHECKING, Any, cast

import idna
from django import forms
from django.contrib import messages
from django.contrib.auth import get_user_model
from django.contrib.auth.base_user import BaseUserManager
from django.contrib.auth.hashers import make_password
from django.core.exceptions import ValidationError
from django.http import HttpRequest
from django.shortcuts import resolve_url
from django.utils.crypto import get_random_string
from django.utils.module_loading import import_string
from django.utils.translation import get_language
from django.utils.translation import gettext_lazy as _

from . import identifiers, signup_fields, store, unicode_data
from .app_settings import app_settings
from .phones.numbers import PhoneField
from .tables import Account, get_account_model
from .uniqueness import constraints_of

if TYPE_CHECKING:
    from django_stubs_ext import StrOrPromise

    from .models import User

# Django's UnicodeUsernameValidator without "@": letters, digits and . + - _
USERNAME_CHARACTERS = re.compile(r"^[\w.+-]+\Z")
# A texted code's characters: no 0/O, 1/I/L, nothing to misread (a mailed login code's).
CODE_CHARACTERS = "ABCDEFGHJKMNPQRSTUVWXYZ23456789"
# RFC 5321, 4.5.3.1.1: a local part (before the "@") has at most 64 octets (Django's
# EmailValidator accepts only ASCII there, so characters).
MAX_LOCAL_PART_LENGTH = 64


class DefaultAccountAdapter:
    """Default behaviour of the account pages; every method is a hook to override."""

    error_messages: dict[str, StrOrPromise] = {
        "email_taken": _("This email address is already in use."),
        "username_taken": _("This username is taken."),
        "value_taken": _("This value is already in use."),
        "username_invisible": _("A username cannot contain control, invisible or text-direction characters."),
        "username_at": _("A username cannot contain “@”."),
        "username_invalid": _(
            "Enter a valid username. It may contain only letters, numbers and the characters . + - _"
        ),
        "username_character": _("A username cannot contain %(character)s."),
        "username_mixed_scripts": _("A username cannot mix these writing systems: %(scripts)s."),
        "username_no_letter_or_digit": _("A username must contain at least one letter or digit."),
        "username_digits_only": _("A username cannot be made of digits only. Add at least one letter."),
        "username_reserved": _("This username is reserved."),
        "username_similar": _("This username is too similar to an existing one."),
        "value_similar": _("This value is too similar to one already in use."),
        "email_domain_invalid": _("The domain of this email address is not valid."),
        "email_mixed_scripts": _("The domain of this email address mixes writing systems: %(scripts)s."),
        "email_quoted": _("Enter the address without quotation marks."),
        "email_local_too_long": _("The part of this address before “@” is too long: at most 64 characters."),
        # Phone numbers (accounts.phones), in django-allauth's words.
        "phone_taken": _("A user is already registered with this phone number."),
        "same_as_current": _("The new value must be different from the current one."),
        "incorrect_code": _("Incorrect code."),
        "too_many_attempts": _("Too many wrong codes: this code no longer works. Ask for a new one."),
        "phone_code_stale": _("This code no longer works: the number or the password changed since it was sent."),
        "phone_required": _("A phone number is required on this site, so it cannot be removed."),
        "email_address_taken": _("%(email)s is already in use by another account."),
        "duplicate_email": _("%(email)s is already an address of your account."),
        "max_email_addresses": _("You cannot add more than %(max)d email addresses."),
        "unknown_email": _("%(email)s is not an address of your account."),
        "cannot_remove_primary_email": _("You cannot remove your primary email address."),
        "unverified_primary_email": _("Only a confirmed address can become your primary address."),
        "last_verified_email": _(
            "%(email)s is the only confirmed address of your account: confirm another one before removing it."
        ),
        "account_unverified": _("Confirm your email address before adding another one."),
        "busy": _("The site is busy and nothing was saved. Please try again."),
        "stale": _("Your account changed while this page was open, so nothing was saved. Please try again."),
        "last_staff": _(
            "This is the last active staff account, so nothing was changed: make another staff account first."
        ),
        "signup_stale": _(
            "This sign-up form was already used for an account that has been deleted since. "
            "Nothing was saved: please send this new form."
        ),
        "outcome_unknown": _(
            "We cannot tell whether this was saved: our account storage did not answer in time. "
            "Check the form, enter any password again and send it: sending it again is safe, "
            "it will not be applied twice."
        ),
    }

    success_messages: dict[str, StrOrPromise] = {
        "signed_up": _("Welcome, %(username)s! Your account is ready."),
        "logged_in": _("You are logged in as %(username)s."),
        "logged_out": _("You have logged out."),
        "email_changed": _("Your email address is now %(email)s."),
        "username_changed": _("Your username is now %(username)s."),
        "username_removed": _("Your account has no username now."),
        "password_changed": _("Your password has been changed. Your other sessions have been logged out."),
        "account_deleted": _("Your account has been deleted."),
        "other_sessions_ended": _("Your other sessions have been logged out."),
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
        "email_change_too_soon": _(
            "Your request is saved, but too many mails went to %(email)s in the last minute, so the "
            "link was not sent. Please ask again in a minute."
        ),
        "email_change_cancelled": _("The change of your address to %(email)s is cancelled: its link no longer works."),
        "already_verified": _("%(email)s is already confirmed: there is no link to send."),
        "phone_code_sent": _("We texted a code to %(phone)s. Type it here to verify the number."),
        "phone_code_too_soon": _(
            "Too many texts went to %(phone)s lately, so no code was sent. Please try again later."
        ),
        "phone_code_failed": _("The text to %(phone)s could not be sent. Please try again."),
        "phone_verified": _("Your phone number is now %(phone)s."),
        "phone_removed": _("Your account has no phone number now."),
        "email_added": _("We sent a link to %(email)s. Open it to confirm the address; until then you cannot use it."),
        "email_add_failed": _(
            "%(email)s is added, but the mail with its link could not be sent. Please send it again."
        ),
        "email_removed": _("%(email)s is no longer an address of your account."),
        "email_primary": _("%(email)s is now your primary email address."),
        "signup_gone": _(
            "The sign-up with %(email)s no longer exists: it expired, or was discarded from its link. "
            "Please sign up again."
        ),
    }

    def __init__(self, request: HttpRequest | None = None) -> None:
        self.request = request

    def validation_error(self, code: str, **params: Any) -> ValidationError:
        """A :class:`ValidationError` with the message of ``code`` from :attr:`error_messages`."""
        return ValidationError(self.error_messages[code], code=code, params=params or None)

    def normalize_email(self, email: str) -> str:
        """NFKC-normalize and lowercase the domain: ``Ada@EXAMPLE.ｃｏｍ`` -> ``Ada@example.com``."""
        return BaseUserManager.normalize_email(unicode_data.normalize("NFKC", email))

    def clean_email(self, email: str) -> str:
        """Further rules for an (already valid) email address: no quoted local part
        (``"ada"@example.com`` is another spelling of ``ada@example.com``), a local part of at
        most 64 characters (RFC 5321), a domain valid in IDNA (UTS #46), and no domain label
        mixing scripts (``exοmple.com`` with a Greek ``ο``). Returns the email to store, as
        typed: its lock key spells the domain in ASCII."""
        local, domain = email.rsplit("@", 1)
        if local.startswith('"'):
            raise self.validation_error("email_quoted")
        if len(local) > MAX_LOCAL_PART_LENGTH:
            raise self.validation_error("email_local_too_long")
        try:
            labels = identifiers.unicode_domain(domain).split(".")
        except (idna.IDNAError, UnicodeError):
            raise self.validation_error("email_domain_invalid") from None
        for label in labels:
            scripts = identifiers.mixed_scripts(label, get_language() or "en")
            if scripts:
                raise self.validation_error("email_mixed_scripts", scripts=", ".join(scripts))
        return email

    def normalize_username(self, username: str) -> str:
        """NFKC-normalize: full-width ``ａｄａ`` becomes ``ada``, ligature ``ﬁ`` becomes ``fi``."""
        return unicode_data.normalize("NFKC", username)

    def clean_username(self, username: str) -> str:
        """Refuse what lets one name pass for another, or for no name at all: invisible
        characters (default-ignorable, controls, formats), ``@`` (a login with ``@`` is always
        an email), characters outside UTS #39's identifier profile and anything beyond
        letters, digits and ``. + - _``, scripts mixed beyond UTS #39's "highly restrictive"
        level, and names without a letter. Returns the username to store."""
        if identifiers.invisible_characters(username):
            raise self.validation_error("username_invisible")
        if "@" in username:
            raise self.validation_error("username_at")
        unusual = identifiers.unusual_characters(username)
        if unusual:
            raise self.validation_error("username_character", character=identifiers.describe_character(unusual[0]))
        if not USERNAME_CHARACTERS.match(username):
            raise self.validation_error("username_invalid")
        scripts = identifiers.mixed_scripts(username, get_language() or "en")
        if scripts:
            raise self.validation_error("username_mixed_scripts", scripts=", ".join(scripts))
        if not identifiers.has_letter_or_digit(username):
            raise self.validation_error("username_no_letter_or_digit")
        if not identifiers.has_letter(username):
            # A number reads as an id, a phone number or a count, not as somebody's name.
            raise self.validation_error("username_digits_only")
        return username

    def is_reserved_username(self, username: str) -> bool:
        """Whether ``username`` looks like a name of ``ACCOUNTS_USERNAME_BLACKLIST`` (same
        skeleton: ``Admin``, ``аdmin`` and ``adrnin`` are all ``admin``)."""
        return identifiers.username_skeleton_key(username) in _reserved_keys(tuple(app_settings.USERNAME_BLACKLIST))

    def taken_error(
        self,
        field: str,
        namespaces: Iterable[str] = (),
        model: type[Any] | None = None,
        messages: Mapping[str, StrOrPromise] | None = None,
    ) -> ValidationError:
        """The error shown on ``field`` when another item already holds its value.

        ``namespaces`` are those of the constraints that collided: when none of the field's
        own constraints is among them, only a look-alike is taken (``username_similar``).
        ``model`` is the model of the item refused (default: the account model);
        ``messages`` (a form's own, by code) come before :attr:`error_messages`.
        """
        similar = bool(namespaces) and not _own_namespaces(field, model) & set(namespaces)
        texts = {**self.error_messages, **(messages or {})}
        code = f"{field}_{'similar' if similar else 'taken'}"
        if code not in texts or self._is_phone_feature_message(code, texts):
            code = "value_similar" if similar else "value_taken"
        return ValidationError(texts[code], code=code)

    @staticmethod
    def _is_phone_feature_message(code: str, texts: Mapping[str, StrOrPromise]) -> bool:
        """Whether ``texts[code]`` is this app's own message of its phone numbers
        (``phone_taken``) on a site without them: a host's own ``phone`` field then gets the
        generic message, unless its adapter or form brings one of its own."""
        default = DefaultAccountAdapter.error_messages.get(code)
        return code == "phone_taken" and not signup_fields.has_phone() and texts.get(code) is default

    def get_form_class(self, name: str) -> type[forms.BaseForm]:
        """The form class of the account page ``name`` (``"signup"``, ``"login"``,
        ``"email_change"``, ``"username_change"``, ``"password_change"``, ``"delete"``),
        from ``ACCOUNTS_FORMS``."""
        form_class = app_settings.FORMS[name]
        return cast("type[forms.BaseForm]", import_string(form_class) if isinstance(form_class, str) else form_class)

    def get_signup_attributes(self, request: HttpRequest, form: forms.BaseForm) -> dict[str, Any]:
        """Extra account attributes to store on signup, beyond email, username and password."""
        return {}

    def create_account(self, request: HttpRequest, form: forms.BaseForm, token: str | None) -> tuple[Account, bool]:
        """Hash the password and sign up, sending ``token`` as the ClientRequestToken; a phone
        number (``ACCOUNTS_SIGNUP_FIELDS``' ``phone``) is stored unverified.

        Returns ``(account, created)`` as :func:`accounts.store.signup` does.
        """
        data = form.cleaned_data
        # accounts.store.signup carries no annotations yet: its result, as it documents it.
        signup = cast("Callable[..., tuple[Account, bool]]", store.signup)
        # A number given at sign-up is the account's, unverified until its code is typed.
        phone = data.get("phone") if signup_fields.asks_for_phone() else None
        return signup(
            data["email"],
            data["username"],
            make_password(data["password1"]),
            token=token,
            **({"phone": phone, "phone_verified": False} if phone else {}),
            **self.get_signup_attributes(request, form),
        )

    def get_login_stages(self) -> list[str]:
        """The stages of a login after the password, as dotted paths of classes (see
        :mod:`accounts.internal.flows.login`): on a site with phone numbers the number's
        verification first (django-allauth's ``PhoneVerificationStage``), then the second
        factor's. A host project lists its own stages here, or none."""
        phone = ["accounts.phones.stages.PhoneVerificationStage"] if signup_fields.has_phone() else []
        return [*phone, "accounts.mfa.stages.SecondFactorStage"]

    # Phone numbers (accounts.phones), with django-allauth's adapter methods. The host project
    # implements send_verification_code_sms (system check accounts.E031); the app stores the
    # number itself, so get_phone, set_phone, set_phone_verified and get_user_by_phone work as
    # they are.

    def phone_form_field(self, **kwargs: Any) -> forms.Field:
        """The form field a phone number is typed in (:class:`accounts.phones.numbers.PhoneField`,
        cleaned by :meth:`clean_phone`)."""
        return PhoneField(clean_phone=self.clean_phone, **kwargs)

    def clean_phone(self, phone: str) -> str:
        """Further rules for a phone number, already valid and in E.164 (``+819012345678``):
        e.g. refuse some countries. Returns the number to store."""
        return phone

    def generate_phone_verification_code(self, *, user: User, phone: str) -> str:
        """A new code to text to ``phone`` (verification, or login by code): 8 characters
        nothing can be misread in, as a mailed login code."""
        return get_random_string(8, allowed_chars=CODE_CHARACTERS)

    def send_verification_code_sms(self, user: User, phone: str, code: str, **kwargs: Any) -> None:
        """Text ``code`` to ``phone`` (E.164) for ``user``: implement it with your SMS provider
        (django-allauth's signature). ``kwargs`` may say why (``login=True``: a login code).
        Raising makes the page say the text could not be sent."""
        raise NotImplementedError("Implement send_verification_code_sms in your ACCOUNTS_ADAPTER.")

    def send_account_already_exists_sms(self, phone: str, **kwargs: Any) -> None:
        """Tell ``phone``'s owner that somebody tried to use their number for another account
        (sent instead of a code, so the page does not show whose number it is). Default: nothing."""

    def send_unknown_account_sms(self, phone: str, **kwargs: Any) -> None:
        """Tell ``phone`` that a login code was asked for it, though no account has it
        (sent instead of a code). Default: nothing."""

    def get_phone(self, user: User) -> tuple[str, bool] | None:
        """``(number, verified)`` of ``user``'s account, or ``None`` when it has none."""
        account = user.account
        if account is None or not account.phone:
            return None
        from .phones.store import is_verified

        return account.phone, is_verified(account)

    def set_phone(self, user: User, phone: str, verified: bool) -> None:
        """Store ``phone`` as ``user``'s number, verified or not, in one transaction that moves
        its lock (:func:`accounts.phones.store.set_phone`). The app's own flows verify a
        number with its code instead, whose guards ride in the same transaction."""
        from .phones import store as phone_store

        phone_store.set_phone(user.stored_account(), phone, verified)

    def set_phone_verified(self, user: User, phone: str) -> None:
        """Mark ``phone``, ``user``'s number, verified: its lock is taken in the same transaction."""
        self.set_phone(user, phone, True)

    def get_user_by_phone(self, phone: str) -> User | None:
        """The user whose verified number is ``phone`` (any notation), or ``None``."""
        from .phones.store import get_by_phone

        account = get_by_phone(phone)
        # The user model by name: the adapter is read while the model loads (its manager).
        user_model: type[User] = get_user_model()
        return None if account is None else user_model.from_account(account)

    def get_user_permissions(self, user: User) -> set[str]:
        """The permissions (``"app_label.codename"``) of an active, non-superuser ``user``
        (a superuser has them all): ``ACCOUNTS_STAFF_PERMISSIONS`` for staff, none for others."""
        return set(app_settings.STAFF_PERMISSIONS) if user.is_staff else set()

    def get_login_url(self, request: HttpRequest) -> str:
        """Where a page that needs a signed-in user sends everyone else (``ACCOUNTS_LOGIN_URL``)."""
        return resolve_url(app_settings.LOGIN_URL)

    def get_signup_redirect_url(self, request: HttpRequest) -> str:
        """Where a new account lands (``ACCOUNTS_SIGNUP_REDIRECT_URL``)."""
        return resolve_url(app_settings.SIGNUP_REDIRECT_URL)

    def get_login_redirect_url(self, request: HttpRequest) -> str:
        """Where a login lands without a ``next`` parameter (``ACCOUNTS_LOGIN_REDIRECT_URL``)."""
        return resolve_url(app_settings.LOGIN_REDIRECT_URL)

    def get_logout_redirect_url(self, request: HttpRequest) -> str:
        """Where a logout lands without a ``next`` parameter (``ACCOUNTS_LOGOUT_REDIRECT_URL``)."""
        return resolve_url(app_settings.LOGOUT_REDIRECT_URL)

    def get_delete_redirect_url(self, request: HttpRequest) -> str:
        """Where a deleted account lands (``ACCOUNTS_DELETE_REDIRECT_URL``)."""
        return resolve_url(app_settings.DELETE_REDIRECT_URL)

    def add_success_message(self, request: HttpRequest, code: str, **params: Any) -> None:
        """Queue the success message ``code`` from :attr:`success_messages`."""
        messages.success(request, self.success_messages[code] % params)

    def add_verification_message(self, request: HttpRequest, outcome: str, email: str = "") -> None:
        """Queue what became of a (re)sent verification mail: ``sent``, ``too_soon`` or ``failed``."""
        code = {"sent": "verification_sent", "too_soon": "verification_too_soon", "failed": "verification_failed"}
        level = messages.SUCCESS if outcome == "sent" else messages.WARNING
        messages.add_message(request, level, self.success_messages[code[outcome]] % {"email": email})


@functools.lru_cache(maxsize=8)
def _reserved_keys(names: tuple[str, ...]) -> frozenset[str]:
    """The skeleton keys of the reserved ``names``, computed once per list (an import checks
    every user's name against them)."""
    return frozenset(identifiers.username_skeleton_key(name) for name in names)


def _own_namespaces(field: str, model: type[Any] | None = None) -> set[str]:
    """The namespaces of ``model``'s constraints on ``field`` that are not look-alike locks."""
    constraints = constraints_of(model or get_account_model())
    return {
        constraint.namespace for constraint in constraints if field in constraint.fields and not constraint.lookalike
    }


def get_adapter(request: HttpRequest | None = None) -> DefaultAccountAdapter:
    """The adapter named by ``ACCOUNTS_ADAPTER``, for ``request``."""
    return cast(DefaultAccountAdapter, import_string(app_settings.ADAPTER)(request))
