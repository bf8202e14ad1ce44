"""Mails print whole in the console backend: every line as written, the link on one line
(no quoted-printable, no base64), on Django 5.2 and 6.x alike."""

import pytest
from django.test import Client
from django.utils import translation

from accounts.plain_mail import PlainTextMessage
from tests.mail import link_in, mails_to
from tests.web import signup

pytestmark = pytest.mark.dynamodb_local

LONG_LINK = "http://127.0.0.1:8000/accounts/verify/" + "eJyrVkpUslJKUSrPL8pRSAeyS_LzSpQ" * 5 + "/"


def printed(message):
    """What the console backend prints for ``message``: its bytes, as text (the backend
    itself is not built here, as Django 6.1 deprecates building one by hand)."""
    return message.message().as_bytes().decode("utf-8")


@pytest.mark.parametrize(
    "body", [f"Hello,\n\n{LONG_LINK}\n", f"こんにちは、\n\n{LONG_LINK}\n"], ids=["ascii", "japanese"]
)
def test_a_long_link_prints_on_one_line_as_written(body):
    output = printed(PlainTextMessage("Subject", body, to=["ada@example.com"]))

    assert LONG_LINK in output.splitlines()
    assert body.splitlines()[0] in output
    assert "quoted-printable" not in output and "base64" not in output


def test_the_verification_mail_prints_its_link_whole(ddb, settings):
    settings.ACCOUNTS_EMAIL_VERIFICATION = "mandatory"
    signup(Client(), "ada@example.com", "ada")
    [mail] = mails_to("ada@example.com")

    output = printed(mail)

    assert link_in(mail) in output.splitlines()
    assert len(link_in(mail)) > 78


def test_a_japanese_verification_mail_prints_as_text(ddb, settings):
    settings.ACCOUNTS_EMAIL_VERIFICATION = "mandatory"
    with translation.override("ja"):
        signup(Client(HTTP_ACCEPT_LANGUAGE="ja"), "ada@example.com", "ada")
    [mail] = mails_to("ada@example.com")

    output = printed(mail)

    assert mail.body.splitlines()[0] in output
    assert link_in(mail) in output.splitlines()
