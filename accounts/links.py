"""The site's own address, from ``ACCOUNTS_SITE_URL``: every absolute link in mail starts with it.

A request's ``Host`` header is never used for a link: Django checks it against
``ALLOWED_HOSTS`` but ignores the port, so ``Host: accounts.example.com:666`` passes and
would put an attacker's port (or, with a permissive ``ALLOWED_HOSTS``, an attacker's host)
into a password reset mail.
"""

from urllib.parse import urlsplit

from django.core.exceptions import ImproperlyConfigured

from .app_settings import app_settings


def site_url_problem(value):
    """Why ``value`` cannot be ``ACCOUNTS_SITE_URL`` (a sentence), or ``None`` when it can:
    an ``http`` or ``https`` URL with a host, and no path, query or fragment."""
    if not value:
        return "is not set"
    try:
        parts = urlsplit(value)
        parts.port  # raises ValueError when the port is not a number from 0 to 65535
    except (ValueError, TypeError, AttributeError):
        return f"is not a URL: {value!r}"
    if parts.scheme not in ("http", "https") or not parts.hostname:
        return f"must start with http:// or https:// and name a host: {value!r}"
    if parts.path not in ("", "/") or parts.query or parts.fragment:
        return f"must be the scheme and host only (the URLs add their own paths): {value!r}"
    return None


def site_url():
    """``ACCOUNTS_SITE_URL`` without a trailing ``/``. Raises ``ImproperlyConfigured`` when it
    is not set or not usable (system check ``accounts.E014`` says so at start-up)."""
    value = app_settings.SITE_URL
    problem = site_url_problem(value)
    if problem:
        raise ImproperlyConfigured(f"ACCOUNTS_SITE_URL {problem}: links in mail need the site's address.")
    return value.rstrip("/")


def site_name():
    """The host (and port) of the site, as mail subjects name it: ``accounts.example.com``."""
    return urlsplit(site_url()).netloc


def absolute_url(path):
    """``path`` (from ``reverse()``) as an absolute link on the site."""
    return f"{site_url()}{path}"
