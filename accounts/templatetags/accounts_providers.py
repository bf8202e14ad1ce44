"""Template tags of identity providers: ``{% load accounts_providers %}``."""

from django import template

from ..providers import flows

register = template.Library()


@register.simple_tag
def oidc_providers():
    """The configured OpenID Connect providers (``ACCOUNTS_OIDC_PROVIDERS``), each with
    ``id`` and ``name``."""
    return flows.providers()
