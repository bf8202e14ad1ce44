"""The account pages ``ACCOUNTS_HEADLESS_ONLY`` turns off, as django-allauth's
``HEADLESS_ONLY`` does: the site then speaks to people through its single-page app, and
mail leads there (``ACCOUNTS_HEADLESS_FRONTEND_URLS``).

Each page is still routed, and answers 404 while the setting is on: the setting is read on
every request, so ``override_settings`` and a test's ``settings`` fixture turn the pages off
and on as any other setting."""

from collections.abc import Callable, Iterable, Sequence
from functools import wraps
from typing import Any

from django.http import Http404, HttpRequest, HttpResponseBase
from django.urls import URLPattern

from .app_settings import app_settings


def page(view: Callable[..., HttpResponseBase]) -> Callable[..., HttpResponseBase]:
    """``view``, answering 404 while ``ACCOUNTS_HEADLESS_ONLY`` is on."""

    @wraps(view)
    def headed(request: HttpRequest, *args: Any, **kwargs: Any) -> HttpResponseBase:
        if app_settings.HEADLESS_ONLY:
            raise Http404("The account pages are off (ACCOUNTS_HEADLESS_ONLY): use the site's app.")
        return view(request, *args, **kwargs)

    return headed


def pages(patterns: Sequence[URLPattern], *, kept: Iterable[str] = ()) -> list[URLPattern]:
    """``patterns`` with each view a :func:`page`, but those named in ``kept`` (a provider's
    callback: the app's sign-in with a provider comes back through it)."""
    kept = set(kept)
    return [
        pattern
        if pattern.name in kept
        else URLPattern(pattern.pattern, page(pattern.callback), pattern.default_args, pattern.name)
        for pattern in patterns
    ]
