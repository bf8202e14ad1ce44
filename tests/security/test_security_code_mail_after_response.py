"""Asking for a login code answers before any mail is made (issue 35, finding 3): the code
went out inside the request for an account only, so the answer took as long as a mail
relay's round trip for a name somebody holds, and not for one nobody does. Now the answer
does the same work either way (the lock's GetItem, the rate counters, the session) and the
code is made and mailed once the answer is sent, as the password reset's link is.

The requests go through Django's WSGI handler as a server runs it: the answer's bytes are
read whole, then the response is closed, which is when a server runs the work after it. The
mail goes through a backend that takes 0.3 s, and the tests assert the order of events (the
whole answer, then the mail), never a duration: ``tests/benchmarks/code_timing.py`` measures
the answers' times."""

import json
import re
import time

import pytest
from django.core import mail
from django.core.handlers.wsgi import WSGIHandler
from django.core.mail.backends.base import BaseEmailBackend
from django.test import RequestFactory

from tests.mail import mails_to, use_mail_backend
from tests.support import RequestCounter
from tests.web import signed_up_client

pytestmark = pytest.mark.dynamodb_local

SLOW_BACKEND = f"{__name__}.SlowBackend"
CSRF_SECRET = "c" * 32
# What happened, in order: "answered" when the whole answer was read, "mailed <to>" as
# the slow backend finishes a mail.
EVENTS: list[str] = []


class SlowBackend(BaseEmailBackend):
    """A mail relay a hop away: 0.3 s per mail. Keeps each mail in Django's test outbox."""

    def send_messages(self, messages):
        for message in messages:
            time.sleep(0.3)
            mail.outbox.append(message)
            EVENTS.append(f"mailed {message.to[0]}")
        return len(messages)


@pytest.fixture
def slow_mail(settings):
    use_mail_backend(settings, SLOW_BACKEND)
    EVENTS.clear()
    mail.outbox.clear()
    return EVENTS


def served(request):
    """Serve ``request`` (a RequestFactory request) as a WSGI server does: the status and
    the whole body are read, then ``EVENTS`` records "answered"; returns ``(status, body,
    response)``, the response not closed yet (its ``close()`` is the server's next step)."""
    started = []
    response = WSGIHandler()(request.environ, lambda status, headers, exc_info=None: started.append(status))
    body = b"".join(response)
    EVENTS.append("answered")
    return started[0], body, response


def api_request(email):
    return RequestFactory().post(
        "/_allauth/app/v1/auth/code/request", json.dumps({"email": email}), content_type="application/json"
    )


def page_request(login):
    request = RequestFactory().post("/accounts/code/", {"login": login, "csrfmiddlewaretoken": CSRF_SECRET})
    request.environ["HTTP_COOKIE"] = f"csrftoken={CSRF_SECRET}"
    return request


def code_in(message):
    return re.search(r"log in: (\w{8})", message.body).group(1)


@pytest.mark.parametrize("asking", [api_request, page_request], ids=["api", "page"])
def test_the_code_is_mailed_once_the_whole_answer_was_sent(ddb, slow_mail, asking):
    signed_up_client()
    mail.outbox.clear()
    EVENTS.clear()

    status, _, response = served(asking("ada@example.com"))

    assert EVENTS == ["answered"] and mail.outbox == []
    response.close()
    assert EVENTS == ["answered", "mailed ada@example.com"]
    assert status.startswith(("401", "302"))
    (code_mail,) = mails_to("ada@example.com")
    assert len(code_in(code_mail)) == 8


@pytest.mark.parametrize("asking", [api_request, page_request], ids=["api", "page"])
def test_an_unknown_address_gets_the_same_answer_and_no_mail_after_it(ddb, slow_mail, asking):
    signed_up_client()
    mail.outbox.clear()
    EVENTS.clear()

    known_status, known_body, known = served(asking("ada@example.com"))
    known.close()
    unknown_status, unknown_body, unknown = served(asking("nobody@example.com"))
    unknown.close()

    assert EVENTS == ["answered", "mailed ada@example.com", "answered"]
    assert unknown_status == known_status
    if asking is api_request:
        assert json.loads(unknown_body)["data"] == json.loads(known_body)["data"]


@pytest.mark.parametrize("asking", [api_request, page_request], ids=["api", "page"])
def test_the_answer_costs_the_same_requests_for_a_known_and_an_unknown_address(ddb, slow_mail, asking):
    signed_up_client()

    with RequestCounter() as known:
        _, _, response = served(asking("ada@example.com"))
    response.close()
    with RequestCounter() as unknown:
        _, _, response = served(asking("nobody@example.com"))
    response.close()

    assert known.counts == unknown.counts
    assert known.counts["GetItem"] == 1  # the lock of the address, whoever holds it


def test_a_resent_code_is_mailed_once_the_whole_answer_was_sent(ddb, slow_mail, settings):
    settings.ACCOUNTS_RATE_LIMITS = {"reset_password": "100/m/ip,100/m/key"}
    signed_up_client()
    _, body, response = served(api_request("ada@example.com"))
    response.close()
    token = json.loads(body)["meta"]["session_token"]
    EVENTS.clear()
    resend = RequestFactory().post("/_allauth/app/v1/auth/code/resend", headers={"X-Session-Token": token})

    status, _, response = served(resend)

    assert status.startswith("200") and EVENTS == ["answered"]
    response.close()
    assert EVENTS == ["answered", "mailed ada@example.com"]


def test_the_mail_made_after_the_answer_is_in_the_askers_language(ddb, slow_mail):
    signed_up_client()
    request = api_request("ada@example.com")
    request.environ["HTTP_ACCEPT_LANGUAGE"] = "fr"

    served(request)[2].close()

    (code_mail,) = mails_to("ada@example.com")
    assert "Votre code pour vous connecter" in code_mail.body
