"""What the audit covers: the account model, each model of ``ACCOUNTS_UNIQUE_MODELS``, and
the constraint behind each lock namespace."""

from django.utils.module_loading import import_string

from ..app_settings import app_settings
from ..tables import get_account_model
from ..uniqueness import constraints_of


def audited_models():
    """The models whose constraints the audit covers: the account model, then each model of
    ``ACCOUNTS_UNIQUE_MODELS``. Each has ``key_prefix``, the start of its items' PK."""
    models = [get_account_model()]
    for path in app_settings.UNIQUE_MODELS:
        model = import_string(path) if isinstance(path, str) else path
        if model not in models:
            models.append(model)
    for model in models:
        if not getattr(model, "key_prefix", None):
            raise ValueError(f"{model.__name__} must declare key_prefix (the start of its items' PK) to be audited.")
    return models


def model_and_constraint(namespace, model_class=None):
    """``(model, constraint)`` of lock ``namespace`` among ``model_class`` (default: every
    audited model); raises ``KeyError`` when there is none."""
    for model in [model_class] if model_class is not None else audited_models():
        for constraint in constraints_of(model):
            if constraint.namespace == namespace:
                return model, constraint
    raise KeyError(f"No audited constraint has namespace {namespace!r}.")


def constraint_for_namespace(namespace, model_class=None):
    """The audited constraint of ``namespace``; raises ``KeyError`` when there is none."""
    return model_and_constraint(namespace, model_class)[1]
