"""What the engine refused, as form errors, in one call: for the account forms, and for a
project's own forms that save its models through :mod:`accounts.transactions`.

A ``UniqueViolation`` puts ``<field>_taken`` on each field that collided (``<field>_similar``
when only a look-alike of it did), an ``InvalidUniqueValue`` its problem on each field;
``Busy``, ``StaleItem`` and ``LastMember`` (``last_staff``) are errors of the whole form (``signup_stale`` for an
``ItemDeleted``: a sign-up form posted again after its account was deleted). Texts come from the form's own
``error_messages`` when it has the code, else from the adapter's (``value_taken`` and
``value_similar`` when it has none for the field).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any, Protocol

from django import forms
from django.core.exceptions import ValidationError
from django.utils.translation import gettext_lazy as _

from .adapter import get_adapter
from .exceptions import Busy, InvalidUniqueValue, ItemDeleted, LastMember, StaleItem, UniqueViolation

if TYPE_CHECKING:
    from django_stubs_ext import StrOrPromise

# What the store can refuse after a form was valid; each becomes a form error.
STORE_REFUSALS = (UniqueViolation, Busy, StaleItem, InvalidUniqueValue, LastMember)
# Each InvalidUniqueValue code as a field error (an empty value: Django's "required").
INVALID_VALUE_MESSAGES: dict[str, StrOrPromise] = {
    "empty": forms.Field.default_error_messages["required"],
    "too_long": _("This value is too long."),
    "invalid": _("This value contains characters that cannot be stored."),
    # A unique set (or a namespace shared by several constraints) holds a value once, and
    # at most its max_values.
    "duplicate": _("This value is already one of yours."),
    "too_many": _("There are too many values here."),
}


def field_errors(
    error: UniqueViolation | InvalidUniqueValue,
    model: type[Any] | None = None,
    messages: Mapping[str, StrOrPromise] | None = None,
) -> dict[str, ValidationError]:
    """``{field: ValidationError}`` for a ``UniqueViolation`` or an ``InvalidUniqueValue``
    raised for an item of ``model`` (default: the account model); ``messages`` by code (a
    form's own) come before the adapter's."""
    if isinstance(error, UniqueViolation):
        adapter = get_adapter()
        return {
            field: adapter.taken_error(field, error.namespaces.get(field, ()), model=model, messages=messages)
            for field in sorted(error.fields)
        }
    message = INVALID_VALUE_MESSAGES.get(error.code, INVALID_VALUE_MESSAGES["invalid"])
    return {field: ValidationError(message, code=error.code) for field in sorted(error.fields)}


class ErrorsForm(Protocol):
    """What :func:`add_store_error` needs of a form: Django's ``fields`` and ``add_error``."""

    @property
    def fields(self) -> dict[str, forms.Field]: ...

    def add_error(self, field: str | None, error: ValidationError) -> None: ...


def add_store_error(form: ErrorsForm, error: Exception, model: type[Any] | None = None) -> None:
    """Show on ``form`` what the store or the engine refused (one of :data:`STORE_REFUSALS`)
    when saving an item of ``model`` (default: the account model): every taken or unusable
    value on its own field, all at once; busy and stale as errors of the whole form.
    Anything else is raised again."""
    adapter = get_adapter()
    if isinstance(error, (UniqueViolation, InvalidUniqueValue)):
        for field, problem in field_errors(error, model, getattr(form, "error_messages", None)).items():
            form.add_error(field if field in form.fields else None, problem)
    elif isinstance(error, Busy):
        form.add_error(None, adapter.validation_error("busy"))
    elif isinstance(error, LastMember):
        form.add_error(None, adapter.validation_error("last_staff"))
    elif isinstance(error, ItemDeleted):
        form.add_error(None, adapter.validation_error("signup_stale"))
    elif isinstance(error, StaleItem):
        form.add_error(None, adapter.validation_error("stale"))
    else:
        raise error


class StoreErrorsForm(ErrorsForm, Protocol):
    """A form that :class:`StoreErrorsMixin` completes."""

    @property
    def unique_model(self) -> type[Any] | None: ...


class StoreErrorsMixin:
    """A form's ``add_store_error(error)``: :func:`add_store_error` for items of
    :attr:`unique_model`."""

    #: The model whose items this form saves; ``None``: the account model.
    unique_model: type[Any] | None = None

    def add_store_error(self: StoreErrorsForm, error: Exception) -> None:
        """Show what the store refused as errors of this form (see :func:`add_store_error`)."""
        add_store_error(self, error, self.unique_model)
