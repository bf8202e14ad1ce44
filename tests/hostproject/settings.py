"""Settings of the members site: a host project using the accounts app, nothing else.

It sets only what a project that ``startproject`` made has, and what the README tells a
host to set (tests/hostproject/test_hostproject.py checks): the app's defaults hold, mandatory email
verification included.
"""

import os
from pathlib import Path

import django

BASE_DIR = Path(__file__).resolve().parent

SECRET_KEY = os.environ.get("MEMBERS_SECRET_KEY", "members-site-tests-only-secret-key")
DEBUG = False
ALLOWED_HOSTS = ["members.example.com"]

INSTALLED_APPS = [
    "django.contrib.auth",
    "django.contrib.contenttypes",
    "django.contrib.messages",
    "django.contrib.staticfiles",
    "accounts",
    "tests.hostproject.apps.MembersConfig",
]

MIDDLEWARE = [
    "django.middleware.security.SecurityMiddleware",
    "django.contrib.sessions.middleware.SessionMiddleware",
    "django.middleware.common.CommonMiddleware",
    "django.middleware.csrf.CsrfViewMiddleware",
    "django.contrib.auth.middleware.AuthenticationMiddleware",
    "django.contrib.messages.middleware.MessageMiddleware",
    "accounts.middleware.UnavailableMiddleware",
]

ROOT_URLCONF = "tests.hostproject.urls"

TEMPLATES = [
    {
        "BACKEND": "django.template.backends.django.DjangoTemplates",
        "DIRS": [BASE_DIR / "templates"],
        "APP_DIRS": True,
        "OPTIONS": {
            "context_processors": [
                "django.template.context_processors.request",
                "django.contrib.auth.context_processors.auth",
                "django.contrib.messages.context_processors.messages",
            ],
        },
    },
]

DATABASES = {}
SESSION_ENGINE = "django.contrib.sessions.backends.signed_cookies"
AUTH_USER_MODEL = "accounts.User"
AUTHENTICATION_BACKENDS = ["accounts.backends.AccountBackend"]
LOGIN_URL = "accounts:login"
LOGIN_REDIRECT_URL = "accounts:profile"
LOGOUT_REDIRECT_URL = "accounts:login"

PASSWORD_HASHERS = [
    "django.contrib.auth.hashers.Argon2PasswordHasher",
    "django.contrib.auth.hashers.PBKDF2PasswordHasher",
]
AUTH_PASSWORD_VALIDATORS = [
    {"NAME": "django.contrib.auth.password_validation.MinimumLengthValidator"},
    {"NAME": "django.contrib.auth.password_validation.CommonPasswordValidator"},
]

ACCOUNTS_TABLE_NAME = "members"
ACCOUNTS_ENDPOINT_URL = os.environ.get("MEMBERS_DYNAMODB_ENDPOINT_URL")
ACCOUNTS_ACCOUNT_MODEL = "tests.hostproject.tables.MemberAccount"
# Added to email and username, which keep their normalizers and look-alike lock. A phone
# number is optional; when given, one account at a time may hold it.
ACCOUNTS_UNIQUE_FIELDS = {
    "phone": {"namespace": "PHONE", "normalizer": "tests.hostproject.phones.normalize_phone", "allow_empty": True},
}
ACCOUNTS_ADAPTER = "tests.hostproject.adapter.MemberAdapter"
ACCOUNTS_FORMS = {"signup": "tests.hostproject.forms.MemberSignupForm"}
# Every link in mail starts with the members site's own address.
ACCOUNTS_SITE_URL = "https://members.example.com"

# Each mail, link included, printed in the terminal (the tests collect them instead).
if django.VERSION >= (6, 1):
    MAILERS = {"default": {"BACKEND": "django.core.mail.backends.console.EmailBackend"}}
else:
    EMAIL_BACKEND = "django.core.mail.backends.console.EmailBackend"

LANGUAGE_CODE = "en-us"
TIME_ZONE = "UTC"
USE_I18N = True
USE_TZ = True
STATIC_URL = "static/"
