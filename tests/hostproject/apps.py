from django.apps import AppConfig


class MembersConfig(AppConfig):
    """The members site's own app: it listens to the accounts app's signals."""

    name = "tests.hostproject"
    label = "members"

    def ready(self):
        from accounts.signals import account_created

        from .receivers import record_account_created
        from .tables import MemberAccount

        account_created.connect(record_account_created, sender=MemberAccount)
