"""The ``ACCOUNTS_*`` settings, read lazily so ``override_settings`` just works.

Every setting is optional; the property names below are the setting names without the
``ACCOUNTS_`` prefix, and each docstring states the default.
"""

from django.conf import settings


class AppSettings:
    prefix = "ACCOUNTS_"

    def _setting(self, name, default):
        return getattr(settings, self.prefix + name, default)

    @property
    def TABLE_NAME(self):
        """DynamoDB table holding accounts and lock items. Default ``"accounts"``."""
        return self._setting("TABLE_NAME", "accounts")

    @property
    def ENDPOINT_URL(self):
        """DynamoDB endpoint (e.g. DynamoDB Local); ``None`` means AWS's endpoint for the region."""
        return self._setting("ENDPOINT_URL", None) or None

    @property
    def REGION(self):
        """AWS region. Default ``"us-east-1"``."""
        return self._setting("REGION", "us-east-1")

    @property
    def CONNECT_TIMEOUT(self):
        """Seconds to wait for a connection to DynamoDB. Default 2."""
        return self._setting("CONNECT_TIMEOUT", 2)

    @property
    def READ_TIMEOUT(self):
        """Seconds to wait for DynamoDB's answer. Default 10."""
        return self._setting("READ_TIMEOUT", 10)

    @property
    def UNIQUE_FIELDS(self):
        """Unique account fields: ``{field: {"namespace": ..., "normalizer": dotted path or callable}}``.

        Default: ``email`` in namespace ``EMAIL`` and ``username`` in namespace ``HANDLE``,
        both normalized with :func:`accounts.uniqueness.normalize_text`.
        """
        return self._setting(
            "UNIQUE_FIELDS",
            {
                "email": {"namespace": "EMAIL"},
                "username": {"namespace": "HANDLE"},
            },
        )

    @property
    def ACCOUNT_MODEL(self):
        """Dotted path of the PynamoDB account model: ``accounts.tables.Account`` or a subclass
        adding attributes (e.g. a unique ``phone``). Default ``"accounts.tables.Account"``."""
        return self._setting("ACCOUNT_MODEL", "accounts.tables.Account")

    @property
    def ADAPTER(self):
        """Dotted path of the adapter class. Default ``"accounts.adapter.DefaultAccountAdapter"``."""
        return self._setting("ADAPTER", "accounts.adapter.DefaultAccountAdapter")

    @property
    def SIGNUP_REDIRECT_URL(self):
        """Where a new account lands after signup. Default: ``settings.LOGIN_REDIRECT_URL``."""
        return self._setting("SIGNUP_REDIRECT_URL", settings.LOGIN_REDIRECT_URL)

    @property
    def LOGIN_REDIRECT_URL(self):
        """Where a login lands without ``next``. Default: ``settings.LOGIN_REDIRECT_URL``."""
        return self._setting("LOGIN_REDIRECT_URL", settings.LOGIN_REDIRECT_URL)

    @property
    def LOGOUT_REDIRECT_URL(self):
        """Where logout lands without ``next``. Default: ``settings.LOGOUT_REDIRECT_URL``, else ``"/"``."""
        return self._setting("LOGOUT_REDIRECT_URL", settings.LOGOUT_REDIRECT_URL or "/")

    @property
    def DELETE_REDIRECT_URL(self):
        """Where a deleted account lands. Default: :attr:`LOGOUT_REDIRECT_URL`."""
        return self._setting("DELETE_REDIRECT_URL", self.LOGOUT_REDIRECT_URL)


app_settings = AppSettings()
