from django.apps import AppConfig
from django.core.signals import setting_changed


def _reconfigure_on_setting_change(setting, **kwargs):
    if setting.startswith("ACCOUNTS_"):
        from .tables import configure

        configure()


class AccountsConfig(AppConfig):
    name = "accounts"
    verbose_name = "Accounts (DynamoDB)"

    def ready(self):
        from . import checks  # noqa: F401  (registers the system checks)
        from .tables import configure

        configure()
        setting_changed.connect(_reconfigure_on_setting_change)
