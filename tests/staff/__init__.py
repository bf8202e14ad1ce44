"""Helpers for the staff tests: accounts, logged-in clients, fixtures, running commands,
reading errors back."""

import re
from io import StringIO

import pytest
from django.core.management import call_command
from django.test import Client

from accounts import store
from accounts.models import User

BACKEND = "accounts.backends.AccountBackend"
# Stored as is where no test logs in with a password: force_login needs none.
UNUSABLE_HASH = "!staff-tests"


def make_account(email, username, *, staff=False, password=UNUSABLE_HASH, **values):
    """An account created through the store (with its locks); ``password`` is a hash."""
    account, _ = store.signup(email, username, password, is_staff=staff, **values)
    return account


def client_as(account, **client_options):
    """A test client logged in as ``account`` (no password hashing)."""
    client = Client(**client_options)
    client.force_login(User.from_account(account), backend=BACKEND)
    return client


def errorlist(response, field):
    """The HTML of ``field``'s error list on the page, as Django renders it."""
    match = re.search(rf'<ul class="errorlist" id="id_{field}_error">.*?</ul>', response.content.decode(), re.S)
    return match.group(0) if match else None


def messages_of(response):
    """The texts of the messages shown on a (followed) response."""
    return [str(message) for message in response.context["messages"]]


@pytest.fixture
def boss(ddb):
    """A staff account (import this fixture into a test module to use it)."""
    return make_account("boss@example.com", "boss", staff=True)


@pytest.fixture
def staff_client(boss):
    """A client logged in as :func:`boss`."""
    return client_as(boss)


def run_command(name, *args, **options):
    """``(exit status, stdout, stderr)`` of a management command."""
    out, err = StringIO(), StringIO()
    try:
        call_command(name, *args, stdout=out, stderr=err, **options)
    except SystemExit as exit:
        return exit.code, out.getvalue(), err.getvalue()
    return 0, out.getvalue(), err.getvalue()
