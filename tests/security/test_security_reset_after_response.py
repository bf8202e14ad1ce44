"""Reset requests answer before their mail is made (issue 26, finding 5): the answer for a
registered address does the work of one for an unknown one, and the link goes out once
the answer is sent (when the server closes the response), still in the asker's language.
How long each answer takes is measured by ``tests/benchmarks/reset_timing.py``, not here."""

import pytest
from django.contrib.messages.storage.fallback import FallbackStorage
from django.contrib.sessions.backends.signed_cookies import SessionStore
from django.core import mail
from django.test import Client, RequestFactory

from accounts.email_views import PasswordResetView
from tests.mail import link_in, mails_to
from tests.web import signed_up_client

pytestmark = pytest.mark.dynamodb_local


def reset_request(email):
    request = RequestFactory().post("/accounts/password/reset/", {"email": email})
    request.session = SessionStore()
    request._messages = FallbackStorage(request)
    return request


def test_the_reset_mail_is_sent_once_the_answer_is_closed_not_before(ddb):
    signed_up_client()
    mail.outbox.clear()

    response = PasswordResetView.as_view()(reset_request("ada@example.com"))

    assert response.status_code == 302 and mail.outbox == []
    response.close()
    (reset,) = mails_to("ada@example.com")
    assert "/accounts/password/reset/" in link_in(reset)


def test_an_unknown_address_gets_the_same_answer_and_no_mail_after_it(ddb):
    response = PasswordResetView.as_view()(reset_request("nobody@example.com"))
    response.close()

    assert response.status_code == 302 and response["Location"] == "/accounts/password/reset/done/"
    assert mail.outbox == []


def test_the_mail_made_after_the_answer_is_in_the_askers_language(ddb):
    signed_up_client()
    mail.outbox.clear()

    Client(headers={"accept-language": "fr"}).post("/accounts/password/reset/", {"email": "ada@example.com"})

    (reset,) = mails_to("ada@example.com")
    assert "mot de passe" in (reset.subject + reset.body).lower()
