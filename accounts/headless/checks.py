"""System checks of the API (registered by :class:`accounts.apps.AccountsConfig`).

- ``accounts.headless.E001``: under the JWT token strategy, the tokens' signing key cannot be
  made from ``ACCOUNTS_HEADLESS_JWT_ALGORITHM`` and ``ACCOUNTS_HEADLESS_JWT_PRIVATE_KEY`` (an
  ``RS256`` site without its private key): every login of the app client would fail.
"""

from django.core import checks
from django.core.exceptions import ImproperlyConfigured

from . import tokens


@checks.register()
def check_jwt_signing_key(app_configs: object, **kwargs: object) -> list[checks.CheckMessage]:
    """E001: the JWT strategy has a key to sign its tokens with."""
    try:
        if tokens.jwt_enabled():
            tokens.signing_keys()
    except ImproperlyConfigured as error:
        return [
            checks.Error(
                str(error),
                hint='Set ACCOUNTS_HEADLESS_JWT_PRIVATE_KEY to an RSA private key (PEM), or use "HS256".',
                id="accounts.headless.E001",
            )
        ]
    return []
