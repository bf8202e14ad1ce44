"""Test settings: the demo site's (Argon2 hashing included), with a throwaway key."""

import os

os.environ.setdefault("DJANGO_SECRET_KEY", "tests-only-secret-key")
os.environ.setdefault("DJANGO_DEBUG", "0")
# Tests point at a DynamoDB they start themselves (fixtures); nothing reaches AWS.
os.environ["DYNAMODB_ENDPOINT_URL"] = "http://127.0.0.1:9"

from project.settings import *  # noqa: E402,F403

ACCOUNTS_TABLE_NAME = "accounts-tests"
