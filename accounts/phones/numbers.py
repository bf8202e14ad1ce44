"""How a phone number is read, kept and locked: E.164, by libphonenumber (``phonenumbers``)."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import phonenumbers
from django import forms
from django.core.exceptions import ValidationError
from django.utils.translation import gettext_lazy as _

from ..exceptions import InvalidUniqueValue

# Longer than any number written with spaces and brackets: anything longer is not one, and
# is refused before it is parsed.
MAX_INPUT_LENGTH = 64
# django-allauth's message and code for a number it cannot read.
INVALID_MESSAGE = _("Enter a phone number including country code (e.g. +1 for the US).")
INVALID_CODE = "invalid_phone"


def parse_phone(text: str) -> str:
    """The E.164 spelling of the number ``text`` writes, with its country code and in any
    common notation (``+81 90-1234-5678``, ``(+81) 90 1234 5678``, full-width digits, a
    national ``0`` after the country code): ``+819012345678``. Raises
    :class:`~django.core.exceptions.ValidationError` (``invalid_phone``) for anything that is
    not a valid number of its country by libphonenumber's metadata."""
    text = text.strip()
    try:
        if len(text) > MAX_INPUT_LENGTH:
            raise phonenumbers.NumberParseException(phonenumbers.NumberParseException.TOO_LONG, "too long")
        number = phonenumbers.parse(text, None)
    except phonenumbers.NumberParseException:
        raise ValidationError(INVALID_MESSAGE, code=INVALID_CODE) from None
    if not phonenumbers.is_valid_number(number):
        raise ValidationError(INVALID_MESSAGE, code=INVALID_CODE)
    return str(phonenumbers.format_number(number, phonenumbers.PhoneNumberFormat.E164))


def normalize_phone_key(value: object) -> str:
    """The text of a number's lock key (the ``phone`` constraint's normalizer): its E.164
    spelling, so every notation of one number is one lock. A stored number is E.164 already;
    a number typed at a login is read as :func:`parse_phone` reads it. Whether the number is
    valid is not asked here: a number stored once keeps its key when libphonenumber's
    metadata changes. Raises :class:`~accounts.exceptions.InvalidUniqueValue` for a value
    that is no number at all."""
    text = str(value).strip()
    try:
        if len(text) > MAX_INPUT_LENGTH:
            raise phonenumbers.NumberParseException(phonenumbers.NumberParseException.TOO_LONG, "too long")
        number = phonenumbers.parse(text, None)
    except phonenumbers.NumberParseException:
        raise InvalidUniqueValue(("phone",), "invalid", str(INVALID_MESSAGE)) from None
    return str(phonenumbers.format_number(number, phonenumbers.PhoneNumberFormat.E164))


def looks_like_phone(text: str) -> bool:
    """Whether ``text`` reads as a valid phone number (:func:`parse_phone`): how a login that
    may name an account by username, address or number tells a number."""
    try:
        parse_phone(text)
    except ValidationError:
        return False
    return True


def display(phone: str) -> str:
    """``phone`` (E.164) as people write it: ``+81 90-1234-5678``."""
    try:
        number = phonenumbers.parse(phone, None)
    except phonenumbers.NumberParseException:
        return phone
    return str(phonenumbers.format_number(number, phonenumbers.PhoneNumberFormat.INTERNATIONAL))


class PhoneField(forms.CharField):
    """A phone number with its country code, cleaned to E.164 (:func:`parse_phone`) and then by
    ``clean_phone`` (the adapter's, which :meth:`~accounts.adapter.DefaultAccountAdapter.phone_form_field`
    gives it): django-allauth's ``PhoneField``, without its regular expression, libphonenumber
    reading the notations people use."""

    def __init__(self, *, clean_phone: Callable[[str], str] | None = None, **kwargs: Any) -> None:
        self.clean_phone = clean_phone
        kwargs.setdefault("label", _("Phone"))
        kwargs.setdefault("max_length", MAX_INPUT_LENGTH)
        kwargs.setdefault(
            "widget", forms.TextInput(attrs={"placeholder": _("Phone"), "autocomplete": "tel", "type": "tel"})
        )
        super().__init__(**kwargs)

    def clean(self, value: Any) -> str:
        text: str = super().clean(value)
        if not text:
            return text
        phone = parse_phone(text)
        return self.clean_phone(phone) if self.clean_phone is not None else phone
