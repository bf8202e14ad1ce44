"""The site's own address, from ``ACCOUNTS_SITE_URL``: every absolute link in mail starts with
it, or with the single-page app's page (``ACCOUNTS_HEADLESS_FRONTEND_URLS``) when the site has one.

A request's ``Host`` header is never used for a link: Django checks it against
``ALLOWED_HOSTS`` but ignores the port, so ``Host: accounts.example.com:666`` passes and
would put an attacker's port (or, with a permissive ``ALLOWED_HOSTS``, an attacker's host)
into a password reset mail.
"""

from urllib.parse import quote, urlencode, urlsplit

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


# The pages of a single-page app a link may lead to (ACCOUNTS_HEADLESS_FRONTEND_URLS), by
# django-allauth's names, and the placeholder each needs filled.
FRONTEND_PAGES = {
    "account_confirm_email": ("key",),
    "account_reset_password": (),
    "account_reset_password_from_key": ("key",),
    "account_signup": (),
    "socialaccount_login_error": (),
}


def frontend_url(name: str, **params: str) -> str | None:
    """The address of the single-page app's page ``name`` (``ACCOUNTS_HEADLESS_FRONTEND_URLS``),
    each ``{param}`` placeholder filled with its value (quoted; form-encoded in the query
    string), absolute on ``ACCOUNTS_SITE_URL`` when the setting gives a path; ``None`` when the
    site has no such page. Filled as django-allauth fills them; a placeholder the URL lacks
    raises ``ImproperlyConfigured`` (system check ``accounts.E036`` says so at start-up)."""
    url = app_settings.HEADLESS_FRONTEND_URLS.get(name)
    if not url:
        return None
    template = url
    for param, value in params.items():
        placeholder = "{" + param + "}"
        at = url.find(placeholder)
        if at < 0:
            raise ImproperlyConfigured(f"ACCOUNTS_HEADLESS_FRONTEND_URLS[{name!r}] has no {placeholder}: {template!r}")
        query_at = url.find("?")
        filled = urlencode({"v": value})[2:] if 0 <= query_at < at else quote(value)
        url = url.replace(placeholder, filled)
    return url if urlsplit(url).netloc else absolute_url(url)


def mail_link(path: str | None, frontend: str | None = None, **params: str) -> str | None:
    """The absolute link a mail carries: the single-page app's page ``frontend`` filled with
    ``params`` when the site has one (:func:`frontend_url`), else the site's own ``path``
    (``None``: no link). With ``ACCOUNTS_HEADLESS_ONLY`` the site's pages are off: a link
    to one raises ``ImproperlyConfigured``, as django-allauth's does."""
    if frontend is not None:
        url = frontend_url(frontend, **params)
        if url is not None:
            return url
        if app_settings.HEADLESS_ONLY:
            raise ImproperlyConfigured(f"ACCOUNTS_HEADLESS_ONLY needs ACCOUNTS_HEADLESS_FRONTEND_URLS[{frontend!r}].")
    return absolute_url(path) if path is not None else None


def frontend_url_problems() -> list[str]:
    """What is wrong with ``ACCOUNTS_HEADLESS_FRONTEND_URLS`` (sentences; none when nothing):
    a name that is none of :data:`FRONTEND_PAGES`, a URL that is not text or lacks the
    placeholder its page fills; and with ``ACCOUNTS_HEADLESS_ONLY``, a page mail leads to
    that the app does not have (the site's own pages are off): the reset form's, and the
    links' unless codes replace them."""
    urls = app_settings.HEADLESS_FRONTEND_URLS
    problems = []
    for name, url in urls.items():
        if name not in FRONTEND_PAGES:
            problems.append(f"ACCOUNTS_HEADLESS_FRONTEND_URLS names {name!r}, none of {', '.join(FRONTEND_PAGES)}.")
        elif not isinstance(url, str) or not url:
            problems.append(f"ACCOUNTS_HEADLESS_FRONTEND_URLS[{name!r}] is not a URL: {url!r}.")
        else:
            problems.extend(
                f"ACCOUNTS_HEADLESS_FRONTEND_URLS[{name!r}] has no {{{param}}}: {url!r}."
                for param in FRONTEND_PAGES[name]
                if "{" + param + "}" not in url
            )
    if app_settings.HEADLESS_ONLY:
        needed = ["account_reset_password"]
        if not app_settings.EMAIL_VERIFICATION_BY_CODE_ENABLED:
            needed.append("account_confirm_email")
        if not app_settings.PASSWORD_RESET_BY_CODE_ENABLED:
            needed.append("account_reset_password_from_key")
        problems.extend(
            f"ACCOUNTS_HEADLESS_ONLY turns the account pages off, so mail needs "
            f"ACCOUNTS_HEADLESS_FRONTEND_URLS[{name!r}]."
            for name in needed
            if not urls.get(name)
        )
    return problems
