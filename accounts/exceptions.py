"""What the uniqueness engine raises. Callers map these to form errors and pages."""

from collections.abc import Iterable, Mapping, Sequence
from typing import Any


class UniquenessError(Exception):
    """Base class of every error the uniqueness engine raises."""


class InvalidUniqueValue(UniquenessError, ValueError):
    """A protected value cannot become a lock key (empty, or over DynamoDB's key limit).

    ``fields`` names the offending fields; ``code`` is ``"empty"``, ``"too_long"`` or
    ``"invalid"`` (characters that are not text, such as a lone surrogate).
    Raised before anything is sent.
    """

    def __init__(self, fields: Iterable[str], code: str, message: str) -> None:
        self.fields = frozenset(fields)
        self.code = code
        self.message = message
        super().__init__(f"{', '.join(sorted(self.fields))}: {message}")


class InvalidTransaction(UniquenessError, ValueError):
    """The transaction breaks a DynamoDB rule (over 100 actions, two actions on one item).

    Raised before anything is sent.
    """


class TransactionCancelled(UniquenessError):
    """DynamoDB cancelled the transaction; ``reasons`` holds the raw ``CancellationReasons``."""

    def __init__(self, message: str, reasons: Sequence[Any] = ()) -> None:
        self.reasons = list(reasons)
        super().__init__(message)


class UniqueViolation(TransactionCancelled):
    """Another item already holds one or more of the values.

    ``fields`` names every field whose lock collided, e.g. ``{"email", "username"}``;
    ``owners`` maps each of those fields to the PK of the item holding the lock, where
    DynamoDB returned it; ``namespaces`` maps each field to the namespaces of the
    constraints that collided (``{"username": {"HANDLE_SKEL"}}``: only a look-alike is taken);
    ``values`` maps each field to the values whose locks collided, as the item held them
    (``{"email_addresses": {"work@x.io"}}``: which element of a set is taken).
    """

    def __init__(
        self,
        fields: Iterable[str],
        owners: Mapping[str, object] | None = None,
        reasons: Sequence[Any] = (),
        namespaces: Mapping[str, Iterable[str]] | None = None,
        values: Mapping[str, Iterable[object]] | None = None,
    ) -> None:
        self.fields = frozenset(fields)
        self.owners = dict(owners or {})
        self.namespaces = {field: frozenset(names) for field, names in (namespaces or {}).items()}
        self.values = {field: frozenset(taken) for field, taken in (values or {}).items()}
        super().__init__(f"Already in use: {', '.join(sorted(self.fields))}", reasons)


class ItemAlreadyExists(TransactionCancelled):
    """The item's own key already exists (a create of an item that is there)."""


class StaleItem(TransactionCancelled):
    """The item changed or vanished since it was read; read it again and retry."""


class OverLimit(TransactionCancelled):
    """A rate counter the transaction checked (a ``ConditionCheck`` of
    :meth:`accounts.ratelimit.Counter.under_limit`) is over its limit; nothing was written.
    ``counters`` holds those counter items as the checks found them (raw)."""

    def __init__(self, message: str, reasons: Sequence[Any] = (), counters: Iterable[object] = ()) -> None:
        self.counters = list(counters)
        super().__init__(message, reasons)


class LastMember(TransactionCancelled):
    """The change or deletion would take the last member out of a registry (the last
    active staff account would lose its access); nothing was written. ``registry`` is the
    registry's partition (``"STAFF"``).

    Said when the ``ConditionCheck`` on another member's entry, sent in the same
    transaction, failed and no other member is left to check instead, or when the registry
    lists no other member to check at all."""

    def __init__(self, message: str, reasons: Sequence[Any] = (), registry: str | None = None) -> None:
        self.registry = registry
        super().__init__(message, reasons)


class ItemDeleted(StaleItem):
    """The create's key belonged to an item deleted since (its tombstone is there): a key
    is never used again, so a form posted again long after is refused, not re-created."""


class AccountRefused(StaleItem):
    """The account a login's session was written for is no longer there, or no longer
    active, as the login read it (its ``is_active`` check failed): nothing was written, and
    nobody is logged in. Not a conflict to retry: a deactivation or deletion won."""


class ActorRefused(TransactionCancelled):
    """The staff member changing a superuser's account is no longer an active staff
    superuser (demoted or deactivated since their page read them): nothing was written."""


class Busy(TransactionCancelled):
    """Other transactions kept conflicting with this one; nothing was written. Try again."""


class OutcomeUnknown(UniquenessError):
    """A write was sent and its outcome is unknown: it may or may not have committed.

    ``token`` is the ClientRequestToken it was sent with: sending the same request with
    the same token within 10 minutes settles it without applying it twice.
    """

    def __init__(self, message: str, token: str | None = None) -> None:
        self.token = token
        super().__init__(message)


class Unavailable(UniquenessError):
    """DynamoDB could not be reached; nothing is known to have been written."""


class ReadOnlyRegion(Unavailable):
    """A write refused before sending: this process runs outside ``ACCOUNTS_WRITE_REGION``
    (a replica of a global table serves reads only, see :mod:`accounts.regions`)."""


class TokenReused(UniquenessError):
    """The ClientRequestToken was already used, within 10 minutes, for a different request."""
