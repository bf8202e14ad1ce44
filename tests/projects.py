"""Running tests under another project's settings module, in the same pytest run."""

import importlib
from contextlib import contextmanager

from django.conf import global_settings, settings
from django.core.signals import setting_changed
from django.test import override_settings

# Kept as they are: DEBUG and EMAIL_BACKEND (MAILERS on Django 6.1) are set for every test
# by Django's test environment (setup_test_environment), which also adds "testserver" to
# ALLOWED_HOSTS; DATABASES is read once per process (Django only warns when it is overridden).
KEPT = {"DEBUG", "EMAIL_BACKEND", "MAILERS", "DATABASES"}
MISSING = object()


def _targets(module_name, overrides):
    """``(changed, removed)``: the settings to set, and the names to delete, so that the
    settings read as if ``DJANGO_SETTINGS_MODULE`` were ``module_name``."""
    module = importlib.import_module(module_name)
    wanted = {name: getattr(module, name) for name in dir(module) if name.isupper()}
    wanted["SETTINGS_MODULE"] = module_name
    wanted["ALLOWED_HOSTS"] = [*wanted.get("ALLOWED_HOSTS", []), "testserver"]
    wanted.update(overrides)
    changed, removed = {}, []
    current = {name for name in dir(settings) if name.isupper()}
    for name in sorted((current | wanted.keys()) - KEPT):
        target = wanted.get(name, getattr(global_settings, name, MISSING))
        if target is MISSING:
            removed.append(name)
        elif getattr(settings, name, MISSING) != target:
            changed[name] = target
    return changed, removed


def _announce(names, enter):
    # override_settings announces what it sets; a deleted setting is a change too (the
    # accounts app reconfigures its tables on any ACCOUNTS_* change).
    for name in names:
        value = getattr(settings, name, None)
        setting_changed.send(sender=type(settings._wrapped), setting=name, value=value, enter=enter)


@contextmanager
def settings_module(module_name, **overrides):
    """Run the block with the settings of ``module_name`` (plus ``overrides``) in place of
    the test settings: every setting it sets, Django's default for every other one, and
    no setting of the test settings that Django has no default for (:data:`KEPT` stay)."""
    changed, removed = _targets(module_name, overrides)
    try:
        with override_settings():
            for name in removed:
                delattr(settings, name)
            _announce(removed, enter=True)
            with override_settings(**changed):
                yield
    finally:
        _announce(removed, enter=False)
