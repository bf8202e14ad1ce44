"""The audit's optional engines (DuckDB, Arrow): the ``audit`` extra, imported when used."""

import importlib

from django.core.exceptions import ImproperlyConfigured


def optional_module(name):
    """The module ``name`` of the ``audit`` extra; without it, an error saying what to install."""
    try:
        return importlib.import_module(name)
    except ImportError as error:
        raise ImproperlyConfigured(
            f"The lock audit needs {name.partition('.')[0]}: pip install 'django-dynamo-accounts[audit]'."
        ) from error
