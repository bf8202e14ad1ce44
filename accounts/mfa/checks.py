"""System checks of second factors (registered by :class:`accounts.apps.AccountsConfig`).

- ``accounts.mfa.W001``: outside debug, passkeys would take their relying-party id and origin
  from each request's Host: set ``ACCOUNTS_SITE_URL`` (or ``ACCOUNTS_WEBAUTHN_RP_ID`` and
  ``ACCOUNTS_WEBAUTHN_ORIGIN``).
- ``accounts.mfa.E001``: the relying-party id is an IP address, which browsers refuse.
"""

import ipaddress
from urllib.parse import urlsplit

from django.conf import settings
from django.core import checks

from ..app_settings import app_settings


@checks.register(checks.Tags.security, deploy=True)
def check_relying_party_configured(app_configs, **kwargs):
    """W001: the relying party comes from configuration in production."""
    configured = app_settings.SITE_URL or (app_settings.WEBAUTHN_RP_ID and app_settings.WEBAUTHN_ORIGIN)
    if configured or settings.DEBUG:
        return []
    return [
        checks.Warning(
            "Passkeys take their relying-party id and origin from each request's Host.",
            hint="Set ACCOUNTS_SITE_URL to the site's address "
            "(or ACCOUNTS_WEBAUTHN_RP_ID and ACCOUNTS_WEBAUTHN_ORIGIN).",
            id="accounts.mfa.W001",
        )
    ]


@checks.register()
def check_relying_party_id(app_configs, **kwargs):
    """E001: a relying-party id must be a domain: browsers refuse an IP address."""
    rp_id = app_settings.WEBAUTHN_RP_ID or (urlsplit(app_settings.SITE_URL).hostname if app_settings.SITE_URL else None)
    try:
        ipaddress.ip_address(rp_id or "")
    except ValueError:
        return []
    return [
        checks.Error(
            f"The passkeys' relying-party id {rp_id!r} is an IP address, which browsers refuse.",
            hint="Use a host name: http://localhost:8000 in development, not http://127.0.0.1:8000.",
            id="accounts.mfa.E001",
        )
    ]
