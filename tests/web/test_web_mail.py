"""Every mail on DynamoDB Local: links from ACCOUNTS_SITE_URL (never from the request's Host),
at most 5 mails a minute to one address whatever asks for them, and honest pages when a
mail is not sent."""

import pytest
from django.core import mail
from django.test import Client

from accounts import store, verification
from tests.engine.test_engine import table_items
from tests.mail import link_in, mails_to, path_of
from tests.web import PASSWORD, messages_of, signed_up_client, signup

pytestmark = pytest.mark.dynamodb_local

SITE = "https://accounts.example.com"
# Django checks Host against ALLOWED_HOSTS without its port: this one passes.
ATTACKER_HOST = "accounts.example.com:666"


@pytest.fixture
def site(settings):
    settings.ACCOUNTS_SITE_URL = SITE
    settings.ALLOWED_HOSTS = ["accounts.example.com", "testserver"]


def assert_on_the_site(message):
    assert link_in(message).startswith(f"{SITE}/accounts/")
    assert ":666" not in message.body and ":666" not in message.subject
    assert "accounts.example.com" in message.subject


def test_a_reset_link_comes_from_the_site_url_whatever_the_host_header(ddb, site):
    signed_up_client("ada@example.com", "ada")

    response = Client(HTTP_HOST=ATTACKER_HOST).post("/accounts/password/reset/", {"email": "ada@example.com"})

    assert response.status_code == 302
    (message,) = mails_to("ada@example.com")
    assert_on_the_site(message)
    assert path_of(link_in(message)).startswith("/accounts/password/reset/")


def test_verification_and_email_change_links_come_from_the_site_url(ddb, site, settings):
    settings.ACCOUNTS_EMAIL_VERIFICATION = "mandatory"
    signup(Client(HTTP_HOST=ATTACKER_HOST), "ada@example.com", "ada")
    (verification_mail,) = mails_to("ada@example.com")
    Client().post(path_of(link_in(verification_mail)))
    client = Client(HTTP_HOST=ATTACKER_HOST)
    client.post("/accounts/login/", {"username": "ada", "password": PASSWORD})

    client.post("/accounts/email/", {"email": "lovelace@example.com", "password": PASSWORD})

    assert_on_the_site(verification_mail)
    (change_mail,) = mails_to("lovelace@example.com")
    assert_on_the_site(change_mail)
    assert "accounts.example.com" in mails_to("ada@example.com")[-1].subject  # the notice: no link


def test_without_a_site_url_no_mail_goes_out_and_the_page_says_so(ddb, settings):
    settings.ACCOUNTS_EMAIL_VERIFICATION = "mandatory"
    settings.ACCOUNTS_SITE_URL = None
    client = Client()

    response = signup(client, "ada@example.com", "ada")

    assert response["Location"] == "/accounts/verify/sent/"
    assert "could not be sent" in client.get("/accounts/verify/sent/").content.decode()
    assert mail.outbox == []
    assert store.get_by_username("ada") is not None


def test_at_most_five_mails_a_minute_to_one_address_whatever_asks(ddb, settings):
    settings.ACCOUNTS_EMAIL_VERIFICATION = "mandatory"  # enumeration prevention on by default
    settings.ACCOUNTS_RATE_LIMITS = {"reset_password": None}  # the mail limit alone
    store.signup("ada@example.com", "ada", "!hash", email_verified=True)
    answers = []

    for attempt in range(4):
        answers.append(Client().post("/accounts/password/reset/", {"email": "ADA@example.com"}))
        # Sign-ups with the owner's address, each in another spelling: a notice to the owner.
        answers.append(signup(Client(), "Ada@EXAMPLE.com", f"probe{attempt}"))

    assert [answer.status_code for answer in answers] == [302] * 8
    assert len(mail.outbox) == 5
    assert {address.lower() for message in mail.outbox for address in message.to} == {"ada@example.com"}
    counters = [pk for pk in table_items() if pk.startswith("RATE#mail#key#")]
    assert len(counters) == 1  # one count for every spelling of the address


def test_a_verification_mail_over_the_limit_is_not_sent_and_the_page_says_to_wait(ddb, settings):
    settings.ACCOUNTS_EMAIL_VERIFICATION = "mandatory"
    settings.ACCOUNTS_RATE_LIMITS = {"mail": "1/m/key"}
    signup(Client(), "victim@example.com", "first")
    client = Client()

    response = signup(client, "victim@example.com", "second")

    assert response["Location"] == "/accounts/verify/sent/"
    assert len(mails_to("victim@example.com")) == 1
    page = client.get("/accounts/verify/sent/").content.decode()
    assert "Too many mails went to" in page and "not sent" in page
    again = client.post("/accounts/verify/sent/", follow=True)
    assert again.status_code == 200
    assert any("wait a minute" in text for text in messages_of(again))
    assert len(mails_to("victim@example.com")) == 1


def test_the_mail_limit_is_counted_for_the_addresss_lock_key(ddb):
    assert verification.mail_limit_key("Ada@Bücher.Example") == verification.mail_limit_key("ada@xn--bcher-kva.example")
    assert verification.mail_limit_key("ada@example.com") == store.constraint_for("email").key_for("ADA@example.com")


def test_an_email_change_link_over_the_limit_says_so(ddb, settings):
    settings.ACCOUNTS_RATE_LIMITS = {"mail": "1/m/key", "change_email": None}
    client = signed_up_client("ada@example.com", "ada")
    client.post("/accounts/email/", {"email": "lovelace@example.com", "password": PASSWORD})

    again = client.post("/accounts/email/", {"email": "lovelace@example.com", "password": PASSWORD}, follow=True)

    assert again.status_code == 200
    assert any("too many mails went to lovelace@example.com" in text for text in messages_of(again))
    assert len(mails_to("lovelace@example.com")) == 1
