"""System checks of second factors (registered by :class:`accounts.apps.AccountsConfig`).

- ``accounts.mfa.W001``: the settings name no relying party, so passkeys are unavailable
  (``ACCOUNTS_SITE_URL`` is missing, which ``accounts.E014`` reports too).
- ``accounts.mfa.W002``: the relying-party id is an IP address, which browsers refuse: passkeys
  are off on that address (the site and its other second factors work).
"""

from django.core import checks

from . import passkeys


@checks.register()
def check_relying_party_configured(app_configs, **kwargs):
    """W001: passkeys have a relying party (as :func:`~accounts.mfa.passkeys.relying_party` reads it)."""
    if passkeys.configured_relying_party() is not None:
        return []
    return [
        checks.Warning(
            "Passkeys are unavailable: no relying-party id and origin are configured.",
            hint="Set ACCOUNTS_SITE_URL to the site's address (or ACCOUNTS_WEBAUTHN_RP_ID and ACCOUNTS_WEBAUTHN_ORIGIN).",
            id="accounts.mfa.W001",
        )
    ]


@checks.register()
def check_relying_party_id(app_configs: object, **kwargs: object) -> list[checks.CheckMessage]:
    """W002: passkeys need a relying-party id that is a domain: browsers refuse an IP address.

    Only passkeys need a host name, so the site still starts: the passkey pages say passkeys
    are unavailable (:func:`~accounts.mfa.passkeys.relying_party`), and everything else works.
    """
    rp = passkeys.configured_relying_party()
    if rp is None or not passkeys.is_ip_address(rp.id):
        return []
    return [
        checks.Warning(
            f"Passkeys are off: their relying-party id {rp.id!r} is an IP address, which browsers refuse.",
            hint="Use a host name: http://localhost:8000 in development, not http://127.0.0.1:8000.",
            id="accounts.mfa.W002",
        )
    ]
