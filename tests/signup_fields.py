"""The site without usernames the tests of ``ACCOUNTS_SIGNUP_FIELDS`` share: import the
fixture into a test module (``from tests.signup_fields import email_only``) to use it."""

import pytest

# django-allauth's settings of a site without usernames.
EMAIL_ONLY_FIELDS = ["email*", "password1*"]
EMAIL_ONLY_METHODS = {"email"}


@pytest.fixture
def email_only(ddb, settings):
    """An empty table on DynamoDB Local, and a site whose sign-up asks for the address and
    the password only, and whose login is by address."""
    settings.ACCOUNTS_SIGNUP_FIELDS = EMAIL_ONLY_FIELDS
    settings.ACCOUNTS_LOGIN_METHODS = EMAIL_ONLY_METHODS
    return ddb
