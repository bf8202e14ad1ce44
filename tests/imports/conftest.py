import pytest


@pytest.fixture(autouse=True)
def _source_databases_readable(django_db_blocker):
    """The import reads its source through Django's database backends (a connection of its
    own: the tests' settings have no SQL database), which pytest-django blocks by default."""
    with django_db_blocker.unblock():
        yield
