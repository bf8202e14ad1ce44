"""Helpers for mail tests: the links in sent mail, and a mail server that is down."""

import re
import smtplib
from urllib.parse import urlsplit

from django.core import mail
from django.core.mail.backends.base import BaseEmailBackend


def mails_to(address):
    """The messages in Django's test outbox sent to ``address``."""
    return [message for message in mail.outbox if address in message.to]


def link_in(message):
    """The one absolute http(s) link in a mail's body."""
    (link,) = re.findall(r"https?://\S+", message.body)
    return link


def code_in(message):
    """The code a mail of :mod:`accounts.email_codes` carries (``XXXX-XXXX``, on a line of its own)."""
    from accounts.email_codes import ALPHABET, LENGTH

    half = LENGTH // 2
    (code,) = re.findall(rf"^[{ALPHABET}]{{{half}}}-[{ALPHABET}]{{{half}}}$", message.body, re.M)
    return code


def path_of(link):
    return urlsplit(link).path


class DownBackend(BaseEmailBackend):
    """An email backend whose server refuses every connection."""

    def send_messages(self, messages):
        raise smtplib.SMTPConnectError(421, "Service not available")


# The settings Django before 6.1 reads for each option of a backend (6.1: MAILERS' OPTIONS).
LEGACY_MAIL_SETTINGS = {
    "host": "EMAIL_HOST",
    "port": "EMAIL_PORT",
    "use_tls": "EMAIL_USE_TLS",
    "use_ssl": "EMAIL_USE_SSL",
    "username": "EMAIL_HOST_USER",
    "password": "EMAIL_HOST_PASSWORD",
}


def use_mail_backend(settings, backend, **options):
    """Send this test's mail through ``backend`` with ``options`` (``host``, ``port``, ...):
    Django 6.1's ``MAILERS`` (its ``EMAIL_*`` settings are deprecated), or ``EMAIL_BACKEND``
    and the ``EMAIL_*`` settings before it."""
    if hasattr(settings, "MAILERS"):
        settings.MAILERS = {"default": {"BACKEND": backend, "OPTIONS": options}}
        return
    settings.EMAIL_BACKEND = backend
    for option, value in options.items():
        setattr(settings, LEGACY_MAIL_SETTINGS[option], value)
