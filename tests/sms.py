"""Texts in tests, as tests/mail.py is mail: an adapter that keeps each text the app sends in
:data:`outbox` instead of texting it, and the site with phone numbers the phone tests share
(``from tests.sms import phone_site``)."""

import re
from dataclasses import dataclass, field

import pytest

from accounts.adapter import DefaultAccountAdapter

# A number of each country the tests use, written as people do and in E.164.
NUMBER, NUMBER_E164 = "+81 90-1234-5678", "+819012345678"
OTHER, OTHER_E164 = "+44 7911 123456", "+447911123456"
THIRD, THIRD_E164 = "+33 6 12 34 56 78", "+33612345678"
# A site asking for a number at sign-up (required), logging in by address or number.
PHONE_FIELDS = ["email*", "phone*", "password1*"]
PHONE_METHODS = {"email", "phone"}


@dataclass(frozen=True)
class Text:
    """One text: to ``phone``, of ``kind`` (``code``: a code, ``already_exists``: the number's
    owner told, ``unknown_account``), with its ``code`` and the keyword arguments it got."""

    phone: str
    kind: str
    code: str = ""
    kwargs: dict = field(default_factory=dict)
    account_id: str = ""


outbox: list[Text] = []


class SmsAdapter(DefaultAccountAdapter):
    """The adapter of the phone tests: texts land in :data:`outbox`."""

    def send_verification_code_sms(self, user, phone, code, **kwargs):
        outbox.append(Text(phone, "code", code, kwargs, str(user.pk)))

    def send_account_already_exists_sms(self, phone, **kwargs):
        outbox.append(Text(phone, "already_exists", kwargs=kwargs))

    def send_unknown_account_sms(self, phone, **kwargs):
        outbox.append(Text(phone, "unknown_account", kwargs=kwargs))


class DownSmsAdapter(DefaultAccountAdapter):
    """An adapter whose SMS provider refuses every text."""

    def send_verification_code_sms(self, user, phone, code, **kwargs):
        raise ConnectionError("SMS provider unavailable")


def texts_to(phone):
    """The texts in :data:`outbox` sent to ``phone`` (E.164)."""
    return [text for text in outbox if text.phone == phone]


def code_to(phone):
    """The code of the last text to ``phone``."""
    codes = [text.code for text in texts_to(phone) if text.kind == "code"]
    assert codes, f"no code was texted to {phone}"
    return codes[-1]


def code_for(account_id, phone):
    """The code of the last text to ``phone`` for account ``account_id``."""
    codes = [text.code for text in texts_to(phone) if text.kind == "code" and text.account_id == account_id]
    assert codes, f"no code was texted to {phone} for {account_id}"
    return codes[-1]


def wrong_code(code):
    """A code of the same shape that is not ``code``."""
    return re.sub(r"[A-Z2-9]", lambda match: "A" if match.group() != "A" else "B", code)


@pytest.fixture
def phone_site(ddb, settings):
    """An empty table on DynamoDB Local, and a site whose sign-up asks for an address, a
    phone number and a password, logging in by address or number, whose texts land in
    :data:`outbox` (emptied)."""
    settings.ACCOUNTS_SIGNUP_FIELDS = PHONE_FIELDS
    settings.ACCOUNTS_LOGIN_METHODS = PHONE_METHODS
    settings.ACCOUNTS_ADAPTER = "tests.sms.SmsAdapter"
    outbox.clear()
    yield ddb
    outbox.clear()
