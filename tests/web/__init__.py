"""Helpers for the web tests: filling in and posting the account forms like a browser does."""

import re

from django.test import Client

PASSWORD = "Tangerine-Sky-Runner-7"
OTHER_PASSWORD = "Marble-Harbor-Lantern-3"


SIGNUP_URL = "/accounts/signup/"


def signup_data(client, email="ada@example.com", username="ada", password=PASSWORD, *, url=SIGNUP_URL, **overrides):
    """The signup form at ``url`` as a browser would send it, with the token the page handed out."""
    page = client.get(url)
    assert page.status_code == 200
    data = {
        "email": email,
        "username": username,
        "password1": password,
        "password2": password,
        "token": page.context["form"]["token"].value(),
    }
    if client.handler.enforce_csrf_checks:
        data["csrfmiddlewaretoken"] = csrf_token_in(page)
    data.update(overrides)
    return data


def signup(client, email="ada@example.com", username="ada", password=PASSWORD, *, url=SIGNUP_URL, **overrides):
    """Sign up through the page at ``url``; returns the response to the POST."""
    return client.post(url, signup_data(client, email, username, password, url=url, **overrides))


def signed_up_client(email="ada@example.com", username="ada", password=PASSWORD):
    """A client logged in to a new account, that has seen the welcome page."""
    client = Client()
    response = signup(client, email, username, password)
    assert response.status_code == 302, response.content.decode()
    client.get(response["Location"])
    return client


def login(client, login_name, password=PASSWORD):
    return client.post("/accounts/login/", {"username": login_name, "password": password})


def csrf_token_in(response):
    """The CSRF token of the form in ``response``."""
    return re.search(r'name="csrfmiddlewaretoken" value="([^"]+)"', response.content.decode()).group(1)


def messages_of(response):
    """The texts of the messages shown on a (followed) response."""
    return [str(message) for message in response.context["messages"]]


def stored_accounts():
    """Every account in the table, not the tombstones of deleted ones (a test-only scan)."""
    from pynamodb.expressions.operand import Path

    from accounts.tables import PROFILE_SORT_KEY, TOMBSTONE_ATTRIBUTE, Account

    accounts = (Account.SK == PROFILE_SORT_KEY) & Path(TOMBSTONE_ATTRIBUTE).does_not_exist()
    return list(Account.scan(accounts, consistent_read=True))


def email_of_length(length):
    """A valid email address exactly ``length`` characters long (DNS labels of at most 63)."""
    local = "a" * 64
    remaining = length - len(local) - len("@") - len(".io")
    labels = []
    while remaining > 63:
        labels.append("b" * 62)
        remaining -= 63
    labels.append("c" * remaining)
    email = f"{local}@{'.'.join(labels)}.io"
    assert len(email) == length
    return email
