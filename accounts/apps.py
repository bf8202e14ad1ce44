from typing import Any

from django.apps import AppConfig
from django.core.signals import setting_changed


def _reconfigure_on_setting_change(setting: str, **kwargs: Any) -> None:
    if setting.startswith("ACCOUNTS_"):
        from .tables import configure

        configure()


class AccountsConfig(AppConfig):
    name = "accounts"
    verbose_name = "Accounts (DynamoDB)"

    def ready(self) -> None:
        from django.contrib.auth.signals import user_logged_in

        from . import (
            checks,  # noqa: F401  (registers the system checks)
            sessions,
            signup_fields,  # noqa: F401  (registers its system checks)
        )
        from .headless import checks as headless_checks  # noqa: F401  (registers the system checks)
        from .mfa import checks as mfa_checks  # noqa: F401  (registers the system checks)
        from .mfa.flows import reauthentication
        from .phones import checks as phone_checks  # noqa: F401  (registers the system check)
        from .tables import configure

        configure()
        setting_changed.connect(_reconfigure_on_setting_change)
        user_logged_in.connect(sessions.record_user_agent, dispatch_uid="accounts.sessions.user_agent")
        user_logged_in.connect(reauthentication.record_login, dispatch_uid="accounts.mfa.reauthentication")
