"""The single-page app's own URLs (``ACCOUNTS_HEADLESS_FRONTEND_URLS``, django-allauth's
``HEADLESS_FRONTEND_URLS``): where mails and redirects send a person when the site's front
end is an app, by allauth's names (``socialaccount_login_error``...)."""

from urllib.parse import quote, urlencode, urlsplit

from django.core.exceptions import ImproperlyConfigured
from django.http import HttpRequest

from ..app_settings import app_settings


def frontend_url(request: HttpRequest, name: str, **params: str) -> str | None:
    """The app's URL ``name`` with each ``{key}`` placeholder filled from ``params`` (quoted
    for the path, or encoded as a query value after ``?``), absolute on this request's host
    when configured as a path; ``None`` when the site has no front-end URL for ``name``.
    Raises ``ImproperlyConfigured`` when the URL lacks a placeholder ``params`` fills."""
    url = app_settings.HEADLESS_FRONTEND_URLS.get(name)
    if not url:
        return None
    template = url
    for key, value in params.items():
        at = url.find(f"{{{key}}}")
        if at < 0:
            raise ImproperlyConfigured(f"ACCOUNTS_HEADLESS_FRONTEND_URLS[{name!r}] has no {{{key}}}: {template}")
        query = url.find("?")
        filled = urlencode({"k": value}).partition("k=")[2] if 0 <= query < at else quote(value)
        url = url.replace(f"{{{key}}}", filled)
    return url if urlsplit(url).netloc else request.build_absolute_uri(url)
