"""The pages of the site's single-page app (``ACCOUNTS_HEADLESS_FRONTEND_URLS``), as the API
and its redirects name them: django-allauth's ``get_frontend_url``."""

from __future__ import annotations

from django.http import HttpRequest

from .. import links


def frontend_url(request: HttpRequest, name: str, **params: str) -> str | None:
    """The absolute address of the app's page ``name`` (``account_confirm_email``,
    ``account_reset_password``, ``account_reset_password_from_key``, ``account_signup``,
    ``socialaccount_login_error``), its ``{param}`` placeholders filled with ``params``;
    ``None`` when the site has no such page. A path is made absolute on
    ``ACCOUNTS_SITE_URL``, never on the request's ``Host`` (``request`` is the signature
    django-allauth's adapter method has; nothing of it is read). Mail leads there through
    :func:`accounts.links.mail_link`, which fills the same setting."""
    return links.frontend_url(name, **params)
