"""Template tags of the sign-up fields (``ACCOUNTS_SIGNUP_FIELDS``): ``{% load accounts_fields %}``."""

from django import template

from .. import signup_fields

register = template.Library()


@register.simple_tag
def site_has_usernames() -> bool:
    """Whether the site has usernames (``username`` is a sign-up field): a page or a mail
    names them only then."""
    return signup_fields.has_username()


@register.simple_tag
def site_has_phones() -> bool:
    """Whether the site has phone numbers (``phone`` is a sign-up field or a login method)."""
    return signup_fields.has_phone()
