"""Template tags of second factors: ``{% load accounts_mfa %}``."""

from django import template

from ..app_settings import app_settings

register = template.Library()


@register.simple_tag
def passkey_signup_enabled():
    """Whether signing up with a passkey is on (``ACCOUNTS_PASSKEY_SIGNUP``)."""
    return app_settings.PASSKEY_SIGNUP
