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


def path_of(link):
    return urlsplit(link).path


class DownBackend(BaseEmailBackend):
    """An email backend whose server refuses every connection."""

    def send_messages(self, messages):
        raise smtplib.SMTPConnectError(421, "Service not available")
