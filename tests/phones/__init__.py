"""Helpers of the phone tests: accounts with a number, and the pages a person uses."""

from django.contrib.auth.hashers import make_password
from django.test import Client

from accounts import store
from accounts.phones.numbers import parse_phone
from accounts.tables import Lock
from accounts.uniqueness import LOCK_SORT_KEY
from tests.sms import NUMBER
from tests.web import PASSWORD, login


def with_number(email="ada@example.com", phone=NUMBER, *, verified=True):
    """A new account (address verified) whose number is ``phone``, verified or not, as an
    import or staff would store it."""
    account, _ = store.signup(
        email, "", make_password(PASSWORD), email_verified=True, phone=parse_phone(phone), phone_verified=verified
    )
    return account


def logged_in(email="ada@example.com"):
    """A client logged in (freshly: the phone page asks for a fresh proof) as ``email``."""
    client = Client()
    response = login(client, email)
    assert response.status_code == 302 and response["Location"] == "/accounts/profile/", response
    return client


def phone_lock_owner(phone):
    """The PK of the account whose ``PHONE`` lock holds ``phone`` (E.164), or ``None``."""
    for lock in Lock.query(f"UNIQ#PHONE#{phone}", consistent_read=True):
        if lock.SK == LOCK_SORT_KEY:
            return lock.owner
    return None


def ask_for(client, phone):
    """Ask on the phone page for a code to ``phone``."""
    return client.post("/accounts/phone/change/", {"phone": phone})


def type_code(client, code):
    """Type ``code`` on the verification page."""
    return client.post("/accounts/phone/verify/", {"code": code})
