import botocore.exceptions
from django.core.management.base import BaseCommand, CommandError
from pynamodb.exceptions import PynamoDBException

from accounts.app_settings import app_settings
from accounts.tables import create_table


class Command(BaseCommand):
    help = "Create the accounts table (PK/SK strings, on-demand billing) if it is missing; enable TTL on 'expires'."
    # The checks would warn that the table is missing (accounts.W001): the very thing
    # this command is about to fix.
    requires_system_checks = []

    def handle(self, *args, **options):
        name = app_settings.TABLE_NAME
        where = app_settings.ENDPOINT_URL or f"AWS {app_settings.REGION}"
        try:
            created = create_table(wait=True)
        except (PynamoDBException, botocore.exceptions.BotoCoreError, botocore.exceptions.ClientError) as error:
            raise CommandError(f"Could not create table {name!r} at {where}: {error}") from error
        if created:
            self.stdout.write(self.style.SUCCESS(f"Created table {name!r} at {where}; it is ACTIVE."))
        else:
            self.stdout.write(f"Table {name!r} already exists at {where}; nothing to do.")
