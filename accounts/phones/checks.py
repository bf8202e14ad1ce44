"""The system check of phone numbers: ``accounts.E031``, an adapter that texts their codes."""

from __future__ import annotations

from typing import Any

from django.core import checks

from .. import signup_fields
from ..adapter import DefaultAccountAdapter, get_adapter


@checks.register(checks.Tags.compatibility)
def check_phone_adapter(app_configs: Any, **kwargs: Any) -> list[checks.CheckMessage]:
    """E031: a site with phone numbers (``phone`` among ``ACCOUNTS_SIGNUP_FIELDS`` or
    ``ACCOUNTS_LOGIN_METHODS``) needs an adapter that texts their codes, as django-allauth's
    check asks the adapter for its phone methods."""
    if not signup_fields.has_phone():
        return []
    try:
        adapter_class = type(get_adapter())
    except ImportError:
        return []  # ACCOUNTS_ADAPTER names no class: every page says so soon enough
    if adapter_class.send_verification_code_sms is not DefaultAccountAdapter.send_verification_code_sms:
        return []
    return [
        checks.Error(
            "ACCOUNTS_SIGNUP_FIELDS or ACCOUNTS_LOGIN_METHODS has 'phone', but the adapter "
            f"({adapter_class.__module__}.{adapter_class.__qualname__}) does not implement "
            "send_verification_code_sms(user, phone, code, **kwargs): no code could be texted, and no "
            "number verified.",
            hint="Subclass accounts.adapter.DefaultAccountAdapter, implement send_verification_code_sms with "
            "your SMS provider, and name the subclass in ACCOUNTS_ADAPTER.",
            id="accounts.E031",
        )
    ]
