"""Django's ``migrate``, with one line instead of a traceback when there is no SQL database.

The accounts app keeps nothing in SQL, so a project may set ``DATABASES = {}``; Django's
own command would then fail on its dummy backend.
"""

from django.core.management.commands import migrate
from django.db import connections

from accounts.sql import DUMMY_ENGINE

NO_SQL_DATABASE = (
    "No SQL database to migrate (DATABASES has no {database!r} database), and the accounts "
    "app needs none: its accounts live in DynamoDB. Create their table once with: "
    "python manage.py accounts_createtable"
)


class Command(migrate.Command):
    def handle(self, *args, **options):
        database = options["database"]
        if database in connections and connections.settings[database]["ENGINE"] == DUMMY_ENGINE:
            self.stdout.write(NO_SQL_DATABASE.format(database=database))
            return
        return super().handle(*args, **options)
