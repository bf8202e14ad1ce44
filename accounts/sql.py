"""Whether the project has a SQL database at all. The app needs none: ``DATABASES = {}``
leaves Django's dummy backend, which refuses every query."""

from django.db import connections

DUMMY_ENGINE = "django.db.backends.dummy"


def sql_databases():
    """The aliases of ``DATABASES`` that are real SQL databases (none with ``DATABASES = {}``)."""
    return [alias for alias in connections if connections.settings[alias]["ENGINE"] != DUMMY_ENGINE]
