"""Test settings: the demo site's, with a throwaway key and a fast password hasher."""

import os

os.environ.setdefault("DJANGO_SECRET_KEY", "tests-only-secret-key")
os.environ.setdefault("DJANGO_DEBUG", "0")
# Tests speak plain HTTP to the test client (tests/hostproject/test_production.py covers HTTPS).
os.environ.setdefault("DJANGO_HTTPS", "0")
# Tests point at a DynamoDB they start themselves (fixtures); nothing reaches AWS.
os.environ["DYNAMODB_ENDPOINT_URL"] = "http://127.0.0.1:9"

from project.settings import *  # noqa: E402,F403

ACCOUNTS_TABLE_NAME = "accounts-tests"
# Templates render without collectstatic's manifest (production needs it: README
# "Production"), and WhiteNoise serves the apps' static directories as in debug.
STORAGES = {**STORAGES, "staticfiles": {"BACKEND": "django.contrib.staticfiles.storage.StaticFilesStorage"}}  # noqa: F405
STATIC_ROOT = None
WHITENOISE_USE_FINDERS = True
# DynamoDB Local on a loaded test machine can take seconds to answer (its JVM warms up):
# no deadline for the other tests; tests/web/test_web_deadline.py and test_engine_outcome.py
# set their own.
ACCOUNTS_REQUEST_DEADLINE = None
# The tests written before email verification existed prove uniqueness for accounts that
# hold their address from sign-up: mode "none". Tests of verification choose their mode
# themselves (the `settings` fixture), "mandatory" and "optional" included.
ACCOUNTS_EMAIL_VERIFICATION = "none"
# The app's default of one address per account (the demo allows 5): the tests of several
# addresses choose their bound themselves (the `settings` fixture).
ACCOUNTS_MAX_EMAIL_ADDRESSES = 1
if "MAILERS" in globals():  # Django 6.1
    MAILERS = {"default": {"BACKEND": "django.core.mail.backends.locmem.EmailBackend"}}
else:
    EMAIL_BACKEND = "django.core.mail.backends.locmem.EmailBackend"
# Links in mail lead to the test client's host, and passkeys' relying party is that host
# (neither is ever taken from a request).
ACCOUNTS_SITE_URL = "http://testserver"
# Argon2 costs ~0.1 s and ~100 MB a hash, and most tests hash a password only to have an
# account: they hash with MD5 (never for a real site), and still verify the demo's Argon2
# and PBKDF2 hashes. A test that measures hashing (the login limits count Argon2 hashes,
# the hash stored, its upgrade) asks for the demo's hashers with @pytest.mark.argon2
# (tests/conftest.py); the web benchmark runs on the demo's settings.
DEMO_PASSWORD_HASHERS = PASSWORD_HASHERS  # noqa: F405
PASSWORD_HASHERS = ["django.contrib.auth.hashers.MD5PasswordHasher", *DEMO_PASSWORD_HASHERS]
