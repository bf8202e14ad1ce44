"""Every limit wired, tested by the rule it claims (issue 18): each limited flow is sent
N+1 times under a small limit, and only the attempt over it is refused. A flow that forgets
its limit, or counts by another rule than the one it claims, fails here.

To add a limit: add its action to ``DEFAULT_RATE_LIMITS`` and one row per rule to
:data:`FLOWS`: a function that prepares the flow (given ``settings``) and returns ``send(number)``, which makes
attempt ``number`` and says whether it was refused (asserting how: 429 with ``Retry-After``,
or the flow's documented answer). ``test_every_rule_has_a_row`` fails until the row exists.
"""

from collections.abc import Callable
from dataclasses import dataclass

import pytest
from django.contrib.auth.hashers import make_password
from django.core import mail
from django.test import Client

from accounts import ratelimit, store
from accounts.app_settings import DEFAULT_RATE_LIMITS
from tests.mail import mails_to
from tests.mfa import code_of, enable_totp, password_login, second_step
from tests.web import OTHER_PASSWORD, PASSWORD, login, messages_of, signed_up_client, signup
from tests.web.test_login_limits import from_address

pytestmark = pytest.mark.dynamodb_local

LIMIT = 2


def over_the_limit(response):
    """Whether ``response`` is the answer over a limit: 429, ``Retry-After``, the form again."""
    if response.status_code != 429:
        return False
    assert int(response["Retry-After"]) > 0
    assert response.context["form"].has_error("__all__", "rate_limited")
    return True


def a_verified_account(email="ada@example.com", username="ada"):
    account, _ = store.signup(email, username, make_password(PASSWORD), email_verified=True)
    return account


# The rows: each prepares its flow (given pytest-django's ``settings``) and returns
# send(number) -> refused?


def signup_per_ip(settings):
    return lambda number: over_the_limit(signup(Client(), f"user{number}@example.com", f"user{number}"))


def login_failed_per_ip(settings):
    return lambda number: over_the_limit(login(from_address(1), f"nobody{number}", OTHER_PASSWORD))


def login_failed_per_key(settings):
    a_verified_account()
    spellings = ["ada", "ADA@example.com", "ａｄａ", "ada@EXAMPLE.com"]
    return lambda number: over_the_limit(login(from_address(number), spellings[number % 4], OTHER_PASSWORD))


def reset_password_per_ip(settings):
    return lambda number: over_the_limit(
        from_address(1).post("/accounts/password/reset/", {"email": f"user{number}@example.com"})
    )


def reset_password_per_key(settings):
    a_verified_account()
    spellings = ["ada@example.com", "ADA@exam\u00adple.com", "ada@ex\u00ad\u00adample.COM", "ａｄａ@example.com"]

    def send(number):
        sent = len(mails_to("ada@example.com"))
        response = from_address(number).post("/accounts/password/reset/", {"email": spellings[number % 4]})
        if over_the_limit(response):
            assert len(mails_to("ada@example.com")) == sent
            return True
        assert response.status_code == 302 and len(mails_to("ada@example.com")) == sent + 1
        return False

    return send


def change_email_per_user(settings):
    client = signed_up_client()
    return lambda number: over_the_limit(
        client.post("/accounts/email/", {"email": f"new{number}@example.com", "password": PASSWORD})
    )


def resend_verification_per_user(settings):
    settings.ACCOUNTS_EMAIL_VERIFICATION = "mandatory"
    browser = Client()
    signup(browser, "ada@example.com", "ada")

    def send(number):
        sent = len(mails_to("ada@example.com"))
        response = browser.post("/accounts/verify/sent/", follow=True)
        if "A mail was sent less than a minute ago." in " ".join(messages_of(response)):
            assert len(mails_to("ada@example.com")) == sent
            return True
        assert len(mails_to("ada@example.com")) == sent + 1
        return False

    return send


def mail_per_key(settings):
    """Mails to one address, whatever asks for them: reset links and the notice of a sign-up
    with the address (enumeration prevention), alternately, each from another client."""
    settings.ACCOUNTS_EMAIL_VERIFICATION = "mandatory"
    a_verified_account()

    def ask(number):
        if number % 2:
            return signup(from_address(number), "ADA@example.com", f"user{number}")
        return from_address(number).post("/accounts/password/reset/", {"email": "ada@exam\u00adple.com"})

    def mails():
        # The notice goes to the address as typed: one mailbox, whatever its spelling.
        return len(mail.outbox)

    def send(number):
        sent = mails()
        response = ask(number)
        # Neither flow may tell the sender whether a mail went out (enumeration).
        assert response.status_code == 302
        return mails() == sent

    return send


def notice_per_key(settings):
    """Security notices to one address: its owner's username changes, each one told."""
    client = signed_up_client()

    def send(number):
        sent = len(mails_to("ada@example.com"))
        response = client.post("/accounts/username/", {"username": f"ada{number}", "password": PASSWORD})
        # The change is made whether or not its notice fits the budget.
        assert response.status_code == 302 and store.get_by_username(f"ada{number}") is not None
        return len(mails_to("ada@example.com")) == sent

    return send


def mfa_attempt_per_key(settings):
    """Wrong codes at the second step of one account's login, each from another browser at
    another address (the rule counts per account, not per browser)."""
    secret, _ = enable_totp(signed_up_client())
    wrong = f"{(int(code_of(secret)) + 500_000) % 10**6:06d}"

    def send(number):
        browser = from_address(number)
        assert password_login(browser)["Location"] == "/accounts/mfa/authenticate/"
        response = second_step(browser, wrong)
        return over_the_limit(response) or not response.context["form"].has_error("code", "wrong_code")

    return send


def reauthenticate_per_user(settings):
    """Passwords typed to reauthenticate, right or wrong: each counts."""
    client = signed_up_client()
    passwords = [OTHER_PASSWORD, PASSWORD]
    return lambda number: over_the_limit(
        client.post("/accounts/mfa/reauthenticate/", {"password": passwords[number % 2]})
    )


def phone_client(settings):
    """A logged-in client of an account with a verified number, on a site with phone numbers
    whose texts land in tests.sms.outbox (issue 37)."""
    from tests.phones import logged_in, with_number
    from tests.sms import PHONE_FIELDS, PHONE_METHODS, outbox

    outbox.clear()
    settings.ACCOUNTS_SIGNUP_FIELDS = PHONE_FIELDS
    settings.ACCOUNTS_LOGIN_METHODS = PHONE_METHODS
    settings.ACCOUNTS_ADAPTER = "tests.sms.SmsAdapter"
    with_number()
    return logged_in()


# A number of each attempt's own (the account's is +81 90-1234-5678).
NUMBERS = ["+44 7911 123456", "+33 6 12 34 56 78", "+49 1511 2345678"]


def change_phone_per_user(settings):
    client = phone_client(settings)
    return lambda number: over_the_limit(client.post("/accounts/phone/change/", {"phone": NUMBERS[number]}))


def verify_phone_per_key(settings):
    """Codes asked for one number, by accounts of their own."""
    from tests.phones import logged_in, with_number

    phone_client(settings)
    clients = [logged_in()] + [
        (with_number(f"user{index}@example.com", NUMBERS[index + 1]), logged_in(f"user{index}@example.com"))[1]
        for index in range(2)
    ]
    return lambda number: over_the_limit(clients[number].post("/accounts/phone/change/", {"phone": NUMBERS[0]}))


def verify_phone_per_ip(settings):
    client = phone_client(settings)
    return lambda number: over_the_limit(client.post("/accounts/phone/change/", {"phone": NUMBERS[number]}))


def sms_per_key(settings):
    """Every text to one number: over the limit nothing is texted, and the page says so."""
    from tests.sms import texts_to

    client = phone_client(settings)

    def send(number):
        response = client.post("/accounts/phone/change/", {"phone": NUMBERS[0]}, follow=True)
        too_soon = any("Too many texts went to" in message for message in messages_of(response))
        assert too_soon == (len(texts_to("+447911123456")) == number)
        return too_soon

    return send


@dataclass(frozen=True)
class Flow:
    action: str
    per: str
    start: Callable

    def __str__(self):
        return f"{self.action}-per-{self.per}"


FLOWS = [
    Flow("signup", "ip", signup_per_ip),
    Flow("login_failed", "ip", login_failed_per_ip),
    Flow("login_failed", "key", login_failed_per_key),
    Flow("reset_password", "ip", reset_password_per_ip),
    Flow("reset_password", "key", reset_password_per_key),
    Flow("change_email", "user", change_email_per_user),
    Flow("resend_verification", "user", resend_verification_per_user),
    Flow("mail", "key", mail_per_key),
    Flow("notice", "key", notice_per_key),
    Flow("mfa_attempt", "key", mfa_attempt_per_key),
    Flow("reauthenticate", "user", reauthenticate_per_user),
    Flow("change_phone", "user", change_phone_per_user),
    Flow("verify_phone", "key", verify_phone_per_key),
    Flow("verify_phone", "ip", verify_phone_per_ip),
    Flow("sms", "key", sms_per_key),
]


def test_every_rule_has_a_row():
    claimed = {
        (action, rule.per) for action, text in DEFAULT_RATE_LIMITS.items() for rule in ratelimit.parse_rules(text)
    }

    assert claimed <= {(flow.action, flow.per) for flow in FLOWS}


@pytest.mark.parametrize("flow", FLOWS, ids=str)
def test_each_flow_refuses_exactly_the_attempt_over_its_limit(ddb, settings, flow):
    # Only the rule under test; an hour's window, so a test never straddles one that matters.
    settings.ACCOUNTS_RATE_LIMITS = {**dict.fromkeys(DEFAULT_RATE_LIMITS), flow.action: f"{LIMIT}/h/{flow.per}"}
    send = flow.start(settings)

    refused = [send(number) for number in range(LIMIT + 1)]

    assert refused == [False] * LIMIT + [True]
