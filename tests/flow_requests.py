"""Requests for the flow tests: what a front end hands a flow (a session, the user), made
without a view, and accounts stored directly."""

from django.contrib.auth.hashers import make_password
from django.contrib.auth.models import AnonymousUser
from django.contrib.sessions.backends.signed_cookies import SessionStore
from django.test import RequestFactory

from accounts import store
from accounts.models import User
from tests.web import PASSWORD


def flow_request(account=None):
    """A POST with a session of its own, from ``account``'s signed-in user (or nobody)."""
    request = RequestFactory().post("/")
    request.session = SessionStore()
    request.user = User.from_account(account) if account is not None else AnonymousUser()
    return request


def stored_account(email="ada@example.com", username="ada", *, verified=True):
    """A new account, its address verified or not, with the tests' password."""
    account, _created = store.signup(email, username, make_password(PASSWORD), email_verified=verified)
    return account
