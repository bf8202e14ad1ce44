"""Template tags of second factors: ``{% load accounts_mfa %}``."""

from django import template

from ..app_settings import app_settings
from ..mfa import passkeys

register = template.Library()


@register.simple_tag
def passkey_signup_enabled():
    """Whether signing up with a passkey is on (``ACCOUNTS_PASSKEY_SIGNUP``)."""
    return app_settings.PASSKEY_SIGNUP


@register.simple_tag
def passkeys_unavailable():
    """Why passkeys cannot be used on this site (the settings name no relying party, or an
    IP address), or ``""`` when they can."""
    return "" if passkeys.usable_relying_party() is not None else passkeys.UNAVAILABLE
