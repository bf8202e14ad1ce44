"""Test settings: the demo site's (Argon2 hashing included), with a throwaway key."""

import os

os.environ.setdefault("DJANGO_SECRET_KEY", "tests-only-secret-key")
os.environ.setdefault("DJANGO_DEBUG", "0")
# Tests point at a DynamoDB they start themselves (fixtures); nothing reaches AWS.
os.environ["DYNAMODB_ENDPOINT_URL"] = "http://127.0.0.1:9"

from project.settings import *  # noqa: E402,F403

ACCOUNTS_TABLE_NAME = "accounts-tests"
# The tests written before email verification existed prove uniqueness for accounts that
# hold their address from sign-up: mode "none". Tests of verification choose their mode
# themselves (the `settings` fixture), "mandatory" and "optional" included.
ACCOUNTS_EMAIL_VERIFICATION = "none"
EMAIL_BACKEND = "django.core.mail.backends.locmem.EmailBackend"
