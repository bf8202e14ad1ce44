"""Benchmarks (``make bench``): speed goals live here, never in timed tests."""

import os


def configure_django(endpoint_url, table_name):
    """Set Django up with the test settings, point the app at ``endpoint_url`` and create
    the table ``table_name``."""
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "tests.settings")
    import django
    from django.conf import settings

    django.setup()
    # The demo site's hashers, not the tests' fast one: a benchmark measures the hasher the
    # site runs, and the hashes it seeds are verified by gunicorn under project.settings.
    settings.PASSWORD_HASHERS = getattr(settings, "DEMO_PASSWORD_HASHERS", settings.PASSWORD_HASHERS)
    settings.ACCOUNTS_ENDPOINT_URL = endpoint_url
    settings.ACCOUNTS_TABLE_NAME = table_name
    # DynamoDB Local, on a machine the benchmark keeps busy, may take long to answer.
    settings.ACCOUNTS_READ_TIMEOUT = 120
    from accounts import tables

    tables.configure()
    tables.create_table(wait=True)


class Running:
    """A DynamoDB Local started elsewhere (the tests' own), used as it is: ``--endpoint``."""

    process = None

    def __init__(self, endpoint_url):
        self.endpoint_url = endpoint_url

    def __enter__(self):
        return self

    def __exit__(self, *exc_info):
        return None
