"""Settings of the demo site. Every value comes from the environment (or ``.env``)."""

from pathlib import Path
from urllib.parse import urlsplit

import django
import environ
from csp.constants import NONE, SELF
from django.core.exceptions import ImproperlyConfigured

BASE_DIR = Path(__file__).resolve().parent.parent

env = environ.Env(
    DJANGO_DEBUG=(bool, False),
    DJANGO_ALLOWED_HOSTS=(list, ["127.0.0.1", "localhost"]),
    DYNAMODB_ENDPOINT_URL=(str, ""),
    ACCOUNTS_TABLE_NAME=(str, "accounts"),
    AWS_DEFAULT_REGION=(str, "us-east-1"),
    ACCOUNTS_EMAIL_VERIFICATION=(str, "mandatory"),
    ACCOUNTS_TRUSTED_PROXY_COUNT=(int, 0),
    ACCOUNTS_SITE_URL=(str, ""),
    DEFAULT_FROM_EMAIL=(str, "accounts@localhost"),
)
environ.Env.read_env(BASE_DIR / ".env")

DEBUG = env("DJANGO_DEBUG")
SECRET_KEY = env("DJANGO_SECRET_KEY", default="")
if not SECRET_KEY:
    if not DEBUG:
        raise ImproperlyConfigured(
            "DJANGO_SECRET_KEY is not set. Set it in the environment or in .env "
            "(or set DJANGO_DEBUG=1 for local development with a throwaway key)."
        )
    SECRET_KEY = "insecure-development-key-do-not-use-in-production"
ALLOWED_HOSTS = env("DJANGO_ALLOWED_HOSTS")

INSTALLED_APPS = [
    "django.contrib.auth",
    "django.contrib.contenttypes",
    "django.contrib.messages",
    "django.contrib.staticfiles",
    "accounts",
]

MIDDLEWARE = [
    "django.middleware.security.SecurityMiddleware",
    # Static files from STATIC_ROOT (after collectstatic), with far-future caching.
    "whitenoise.middleware.WhiteNoiseMiddleware",
    "csp.middleware.CSPMiddleware",
    # django-allauth's React app (project/react_app.py), when DEMO_REACT_APP_DIR names its build.
    "project.react_app.ReactAppMiddleware",
    "django.contrib.sessions.middleware.SessionMiddleware",
    # The language comes from the switcher's cookie, else from Accept-Language.
    "django.middleware.locale.LocaleMiddleware",
    "django.middleware.common.CommonMiddleware",
    "django.middleware.csrf.CsrfViewMiddleware",
    "django.contrib.auth.middleware.AuthenticationMiddleware",
    "django.contrib.messages.middleware.MessageMiddleware",
    "django.middleware.clickjacking.XFrameOptionsMiddleware",
    "accounts.middleware.UnavailableMiddleware",
]

ROOT_URLCONF = "project.urls"
# The build of django-allauth's own React app (`make react-app`: var/react-app/frontend/build),
# served from this site's origin in place of its home page; empty: the demo's own pages.
DEMO_REACT_APP_DIR = env("DEMO_REACT_APP_DIR", default="")
WSGI_APPLICATION = "project.wsgi.application"

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

# No SQL database: accounts and server-side sessions live in DynamoDB.
DATABASES = {}
SESSION_ENGINE = "accounts.sessions"
SESSION_COOKIE_HTTPONLY = True
MESSAGE_STORAGE = "django.contrib.messages.storage.cookie.CookieStorage"

# Users are account items in DynamoDB; the model is unmanaged (no table, no migrations).
AUTH_USER_MODEL = "accounts.User"
AUTHENTICATION_BACKENDS = ["accounts.backends.AccountBackend"]
# A stale second copy of the signup/login form lands where the first one did (see the view).
CSRF_FAILURE_VIEW = "accounts.views.csrf_failure"

PASSWORD_HASHERS = [
    "django.contrib.auth.hashers.Argon2PasswordHasher",
    "django.contrib.auth.hashers.PBKDF2PasswordHasher",
]
AUTH_PASSWORD_VALIDATORS = [
    {"NAME": "django.contrib.auth.password_validation.UserAttributeSimilarityValidator"},
    {"NAME": "django.contrib.auth.password_validation.MinimumLengthValidator"},
    {"NAME": "django.contrib.auth.password_validation.CommonPasswordValidator"},
    {"NAME": "django.contrib.auth.password_validation.NumericPasswordValidator"},
]

LOGIN_URL = "accounts:login"
LOGIN_REDIRECT_URL = "accounts:profile"
LOGOUT_REDIRECT_URL = "home"

ACCOUNTS_ENDPOINT_URL = env("DYNAMODB_ENDPOINT_URL") or None
ACCOUNTS_TABLE_NAME = env("ACCOUNTS_TABLE_NAME")
ACCOUNTS_REGION = env("AWS_DEFAULT_REGION")
ACCOUNTS_EMAIL_VERIFICATION = env("ACCOUNTS_EMAIL_VERIFICATION")
# Unset: the app's default (on in mode "mandatory").
if "ACCOUNTS_PREVENT_ENUMERATION" in env:
    ACCOUNTS_PREVENT_ENUMERATION = env.bool("ACCOUNTS_PREVENT_ENUMERATION")
# Every link in mail starts with it, never with a request's Host. In debug, `make run`'s
# address (a host name: browsers refuse an IP address as a passkey's relying party).
ACCOUNTS_SITE_URL = env("ACCOUNTS_SITE_URL") or ("http://localhost:8000" if DEBUG else None)
# Sessions, rate limits, deadline (issue 10). ACCOUNTS_RATE_LIMITS: unset = the app's
# defaults, "off" = no limit at all (load tests from one machine), else a JSON object.
if "ACCOUNTS_RATE_LIMITS" in env:
    ACCOUNTS_RATE_LIMITS = False if env("ACCOUNTS_RATE_LIMITS") == "off" else env.json("ACCOUNTS_RATE_LIMITS")
# The reverse proxies in front that append to X-Forwarded-For (0: the client is REMOTE_ADDR).
ACCOUNTS_TRUSTED_PROXY_COUNT = env("ACCOUNTS_TRUSTED_PROXY_COUNT")
# What a sign-up asks for and what a login is by (django-allauth's settings), each a JSON
# list: ACCOUNTS_SIGNUP_FIELDS='["email*", "password1*"]' with ACCOUNTS_LOGIN_METHODS='["email"]'
# is a site without usernames. Unset: the app's defaults (email, username, the password twice).
if "ACCOUNTS_SIGNUP_FIELDS" in env:
    ACCOUNTS_SIGNUP_FIELDS = env.json("ACCOUNTS_SIGNUP_FIELDS")
if "ACCOUNTS_LOGIN_METHODS" in env:
    ACCOUNTS_LOGIN_METHODS = env.json("ACCOUNTS_LOGIN_METHODS")
# Texts (a phone number's code, with "phone" in the two settings above) are printed in the
# terminal, as mail is.
ACCOUNTS_ADAPTER = "project.adapter.DemoAdapter"

# Several addresses per account (issue 37): the demo lets each have 5 (the app's default
# is 1); ACCOUNTS_MAX_EMAIL_ADDRESSES=1 in the environment makes it one address again.
ACCOUNTS_MAX_EMAIL_ADDRESSES = env.int("ACCOUNTS_MAX_EMAIL_ADDRESSES", default=5)

# Second factors: staff must have one (off by default); signing up with a passkey.
ACCOUNTS_MFA_REQUIRED_FOR_STAFF = env.bool("ACCOUNTS_MFA_REQUIRED_FOR_STAFF", default=False)
ACCOUNTS_PASSKEY_SIGNUP = env.bool("ACCOUNTS_PASSKEY_SIGNUP", default=False)

# Standards (issue 26, docs/security.md). Breached passwords: a range API's URL
# (https://api.pwnedpasswords.com) or a directory of range files; unset: no check.
ACCOUNTS_BREACHED_PASSWORDS = env("ACCOUNTS_BREACHED_PASSWORDS", default="") or None
if ACCOUNTS_BREACHED_PASSWORDS:
    AUTH_PASSWORD_VALIDATORS.append({"NAME": "accounts.breached_passwords.BreachedPasswordValidator"})
# Seconds; unset: the app's defaults (5 minutes; 12 hours of inactivity ends a session).
if "ACCOUNTS_REAUTHENTICATION_TIMEOUT" in env:
    ACCOUNTS_REAUTHENTICATION_TIMEOUT = env.int("ACCOUNTS_REAUTHENTICATION_TIMEOUT")
if "ACCOUNTS_SESSION_IDLE_TIMEOUT" in env:
    ACCOUNTS_SESSION_IDLE_TIMEOUT = env.int("ACCOUNTS_SESSION_IDLE_TIMEOUT")
# Identity providers: a JSON list of {id, name, issuer, client_id, client_secret, scopes}
# (docs/identity-providers.md); the login and sign-up pages show "Sign in with <name>".
ACCOUNTS_OIDC_PROVIDERS = env.json("ACCOUNTS_OIDC_PROVIDERS", default=[])
# A single-page app over the headless API (docs/headless-api.md), each as JSON: the app's
# pages mail leads to ({"account_confirm_email": "/account/verify-email/{key}", ...}), the
# account pages off (true), addresses proven and passwords reset by a mailed code (true).
ACCOUNTS_HEADLESS_FRONTEND_URLS = env.json("ACCOUNTS_HEADLESS_FRONTEND_URLS", default={})
ACCOUNTS_HEADLESS_ONLY = env.json("ACCOUNTS_HEADLESS_ONLY", default=False)
ACCOUNTS_EMAIL_VERIFICATION_BY_CODE_ENABLED = env.json("ACCOUNTS_EMAIL_VERIFICATION_BY_CODE_ENABLED", default=False)
ACCOUNTS_PASSWORD_RESET_BY_CODE_ENABLED = env.json("ACCOUNTS_PASSWORD_RESET_BY_CODE_ENABLED", default=False)
# Reauthentication by a mailed code (true; `make run-react-app` turns it off: allauth's React
# app has no screen for its flow, reauthenticate_by_code).
ACCOUNTS_REAUTHENTICATION_BY_CODE_ENABLED = env.json("ACCOUNTS_REAUTHENTICATION_BY_CODE_ENABLED", default=True)

# Mail: EMAIL_URL is smtp://host:port, consolemail:// (the default: `make run` prints each
# mail, with its link, in the terminal) or filemail://path.
EMAIL_CONFIG = env.email_url("EMAIL_URL", default="consolemail://")
if django.VERSION >= (6, 1):
    # Django 6.1 configures mail with MAILERS (EMAIL_BACKEND and its kin are deprecated, and
    # refused beside MAILERS): the same backend, with the options the URL gave.
    MAILER_OPTIONS = {
        "EMAIL_HOST": "host",
        "EMAIL_PORT": "port",
        "EMAIL_HOST_USER": "username",
        "EMAIL_HOST_PASSWORD": "password",
        "EMAIL_USE_TLS": "use_tls",
        "EMAIL_USE_SSL": "use_ssl",
        "EMAIL_TIMEOUT": "timeout",
        "EMAIL_FILE_PATH": "file_path",
    }
    MAILERS = {
        "default": {
            "BACKEND": EMAIL_CONFIG["EMAIL_BACKEND"],
            "OPTIONS": {
                MAILER_OPTIONS[name]: value
                for name, value in EMAIL_CONFIG.items()
                if name in MAILER_OPTIONS and value not in (None, "")
            },
        }
    }
else:
    vars().update(EMAIL_CONFIG)
DEFAULT_FROM_EMAIL = env("DEFAULT_FROM_EMAIL")

LANGUAGE_CODE = "en-us"
# The language switcher's cookie: no script reads it, and it goes cross-site only on links.
LANGUAGE_COOKIE_HTTPONLY = True
LANGUAGE_COOKIE_SAMESITE = "Lax"
TIME_ZONE = "UTC"
USE_I18N = True
LANGUAGES = [
    ("en", "English"),
    ("fr", "Français"),
    ("ja", "日本語"),
    ("tr", "Türkçe"),
]
# The demo site's own strings (its home page and layout); the app ships its own catalogues.
LOCALE_PATHS = [BASE_DIR / "project" / "locale"]
USE_TZ = True

STATIC_URL = "static/"
# The demo's own static files: the single-page client of the headless API (/spa/).
STATICFILES_DIRS = [BASE_DIR / "project" / "static"]
if DEMO_REACT_APP_DIR:
    # The React app's scripts (its index.html asks for /static/js/main.<hash>.js).
    STATICFILES_DIRS.append(Path(DEMO_REACT_APP_DIR) / "static")

# Every error with its traceback on stderr (Django's default prints nothing when DEBUG is off).
LOGGING = {
    "version": 1,
    "disable_existing_loggers": False,
    "formatters": {"plain": {"format": "%(asctime)s %(levelname)s %(name)s: %(message)s"}},
    "handlers": {"console": {"class": "logging.StreamHandler", "formatter": "plain"}},
    "loggers": {
        "django": {"handlers": ["console"], "level": "INFO", "propagate": False},
        "accounts": {"handlers": ["console"], "level": "INFO"},
    },
}

# Production: static files, HTTPS and a Content-Security-Policy (see README "Production").
STATIC_ROOT = env.path("DJANGO_STATIC_ROOT", default=BASE_DIR / "var" / "static")
STORAGES = {
    "default": {"BACKEND": "django.core.files.storage.FileSystemStorage"},
    # Hashed, compressed copies (accounts.<hash>.css), which WhiteNoise caches for a year.
    "staticfiles": {"BACKEND": "whitenoise.storage.CompressedManifestStaticFilesStorage"},
}

# Behind TLS (default when DEBUG is off); DJANGO_HTTPS=false for a plain-HTTP local run.
HTTPS = env.bool("DJANGO_HTTPS", default=not DEBUG)
if HTTPS:
    SECURE_SSL_REDIRECT = True
    # The TLS proxy in front says the request came over HTTPS; it must set (or strip) it.
    SECURE_PROXY_SSL_HEADER = ("HTTP_X_FORWARDED_PROTO", "https")
    SESSION_COOKIE_SECURE = True
    CSRF_COOKIE_SECURE = True
    LANGUAGE_COOKIE_SECURE = True
    SECURE_HSTS_SECONDS = env.int("DJANGO_HSTS_SECONDS", default=365 * 24 * 3600)
    SECURE_HSTS_INCLUDE_SUBDOMAINS = True
    SECURE_HSTS_PRELOAD = True


def _origin(url):
    parts = urlsplit(url)
    return f"{parts.scheme}://{parts.netloc}"


# No inline script or style anywhere: everything comes from the site's own files. In
# debug, only reported (Django's debug pages use inline styles).
_CSP = {
    "DIRECTIVES": {
        "default-src": [SELF],
        "img-src": [SELF, "data:"],
        "object-src": [NONE],
        "base-uri": [NONE],
        "frame-ancestors": [NONE],
        # A sign-in with a provider posts here and is redirected to the provider, which
        # the browser checks against form-action too: each issuer's origin is allowed.
        "form-action": [SELF, *sorted({_origin(provider["issuer"]) for provider in ACCOUNTS_OIDC_PROVIDERS})],
    }
}
if DEBUG:
    CONTENT_SECURITY_POLICY_REPORT_ONLY = _CSP
else:
    CONTENT_SECURITY_POLICY = _CSP
