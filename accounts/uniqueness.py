"""Declared unique constraints: how a protected value becomes a lock key.

DynamoDB enforces one uniqueness rule, the primary key, so each unique value is stored as
its own lock item ``PK=UNIQ#<NAMESPACE>#<encoded value(s)>``, ``SK=LOCK``. This module is
the only place that knows how a value is normalized and encoded into that key.
"""

import numbers
from collections.abc import Callable, Iterable, Sequence
from decimal import Decimal, InvalidOperation
from typing import Any

from . import unicode_data
from .exceptions import InvalidUniqueValue

LOCK_PREFIX = "UNIQ#"
LOCK_SORT_KEY = "LOCK"
# DynamoDB rejects a partition key over 2,048 bytes (measured on DynamoDB Local: 2,049 fails).
MAX_KEY_BYTES = 2048

# What turns a field's raw value into the text its lock key is built from.
Normalizer = Callable[[Any], str]


def as_text(value: object) -> str:
    """``value`` as text; a number as DynamoDB stores and returns it.

    DynamoDB keeps a Number in canonical form: ``18.0`` comes back as ``18``, ``1.50`` as
    ``1.5``, ``1e2`` as ``100``, ``-0`` as ``0``. A key built from ``str(18.0)`` would differ
    from the key of the same item read back, so two items could hold one number and a
    change would leave the first key behind (issue 13, defect 1).
    """
    if isinstance(value, numbers.Number) and not isinstance(value, bool):
        try:
            number = Decimal(str(value))
        except InvalidOperation:
            return str(value)
        if not number.is_finite():
            return str(value)
        return "0" if number.is_zero() else format(number.normalize(), "f")
    return str(value)


def normalize_text(value: object) -> str:
    """NFKC-normalize, strip and casefold: ``" ＡＤＡ@X.io "`` and ``"ada@x.io"`` are one value.

    Both over pinned Unicode data (:mod:`accounts.unicode_data`), not the running Python's:
    every host keys a value alike.
    """
    text = as_text(value).strip()
    if text.isascii():
        return text.lower()  # NFKC leaves ASCII alone, whose case folding is lower case (kept fast)
    return unicode_data.casefold(unicode_data.normalize("NFKC", text))


def normalize_exact(value: object) -> str:
    """Keep the value as it is (numbers, case-sensitive identifiers); only turn it into text.

    Numbers are canonical (see :func:`as_text`): ``18``, ``18.0`` and ``Decimal("18.00")``
    are one value.
    """
    return as_text(value)


def encode_component(text: str) -> str:
    """Escape ``%`` and ``#`` so that joined components can never be read two ways.

    ``("a#b", "c")`` becomes ``a%23b#c`` and ``("a", "b#c")`` becomes ``a#b%23c``.
    """
    return text.replace("%", "%25").replace("#", "%23")


def join_components(*components: str) -> str:
    """One element of a set-valued constraint of ``parts`` components, as stored: the
    components escaped (:func:`encode_component`) and joined by ``#``, so that its lock key
    is ``UNIQ#<NAMESPACE>#<component>#<component>`` and no two pairs share a spelling."""
    return "#".join(encode_component(component) for component in components)


def split_components(element: str) -> tuple[str, ...]:
    """The components :func:`join_components` joined into ``element``."""
    return tuple(part.replace("%23", "#").replace("%25", "%") for part in element.split("#"))


def _is_empty(value: object) -> bool:
    return value is None or (isinstance(value, str) and not value.strip())


class UniqueConstraint:
    """Values of ``fields`` (within ``scope``) may be held by one item at a time.

    - single attribute: ``UniqueConstraint("email", namespace="EMAIL")``
    - composite: ``UniqueConstraint("first_name", "last_name", namespace="FULLNAME")``
    - scoped: ``UniqueConstraint("number", scope=("team",), namespace="UNIFORM",
      normalizer=normalize_exact)``: one number per team.

    - partial: ``UniqueConstraint("email", namespace="EMAIL", partial_on="email_verified")``:
      like SQL's ``UNIQUE (email) WHERE email_verified``, an item holds the lock only while
      that attribute is not ``False`` (absent counts as true, so items written before the
      attribute existed keep their locks).
    - set-valued: ``UniqueConstraint("passkeys", namespace="WEBAUTHN",
      normalizer=normalize_exact, many=True, max_values=20)``: each element of the set
      attribute is a value of its own, with its own lock (an account's passkey credential
      ids), normalized as a single value is; two elements of one key (two spellings of one
      value) are one value held twice, refused (``duplicate``). Use :meth:`lock_keys` or
      :meth:`member_keys`; :meth:`lock_key` is for single values. A normalizer that depends
      on Unicode data (``key_version``, or :func:`normalize_text`) makes the constraint
      :attr:`recorded`: an item records each element's key (in its ``lock_keys``, under
      :attr:`record_slot`) and releases the key it recorded, never one computed again; a
      normalizer that depends on none (:func:`normalize_exact`) computes them again.
      ``max_values`` is the most elements an item may hold: a create or change past it is
      refused before anything is sent (``too_many``), and a deletion releases them all in
      one transaction, which system check ``accounts.E015`` counts. With ``parts=2`` each
      element joins two components (:func:`join_components`), each a value of the key: an
      OpenID Connect identity, the pair ``(issuer, subject)``, is
      ``UNIQ#OIDC#<issuer>#<subject>``. Set-valued constraints of one ``limit_group`` hold
      at most ``max_values`` elements together (an account's passkeys and identities: its
      ways to sign in without a password).
    - one namespace, several constraints of one model: ``UniqueConstraint("email",
      namespace="EMAIL")`` and ``UniqueConstraint("email_addresses", namespace="EMAIL",
      many=True, max_values=4)``: a value is one value wherever the item holds it (an
      account's primary address and its other addresses); one item holds it once
      (``duplicate``), and a change moving it from one to the other moves no lock.

    ``normalizer`` applies to the constrained fields (scope values are kept exact). With
    ``allow_empty=True`` an empty value takes no lock, like SQL's NULL in a UNIQUE column;
    otherwise an empty value is an error. ``lookalike=True`` marks a constraint keyed on a
    confusable skeleton: values sharing its key look alike rather than being equal.
    ``key_version`` names the data the normalizer depends on (Unicode's, see
    :data:`accounts.identifiers.KEY_VERSION`), which each of its locks records; ``None``
    for a normalizer that depends on none.
    """

    def __init__(
        self,
        *fields: str,
        namespace: str,
        normalizer: Normalizer = normalize_text,
        scope: Sequence[str] = (),
        allow_empty: bool = False,
        lookalike: bool = False,
        partial_on: str | None = None,
        many: bool = False,
        max_values: int | None = None,
        key_version: str | None = None,
        parts: int = 1,
        limit_group: str | None = None,
    ) -> None:
        if not fields:
            raise ValueError("A unique constraint needs at least one field.")
        if not namespace or "#" in namespace:
            raise ValueError(f"Namespace {namespace!r} must be non-empty and contain no '#'.")
        self.fields = tuple(fields)
        self.scope = tuple(scope)
        self.namespace = namespace
        self.normalizer = normalizer
        self.allow_empty = allow_empty
        self.lookalike = lookalike
        self.partial_on = partial_on
        if many and (len(fields) != 1 or scope or partial_on):
            raise ValueError("A set-valued (many) constraint has one field, no scope and no partial condition.")
        if many and not max_values:
            raise ValueError("A set-valued (many) constraint needs max_values: its locks share one transaction.")
        if parts != 1 and not many:
            raise ValueError("Only a set-valued (many) constraint joins several parts in one element.")
        self.many = many
        # A key computed again after a Unicode upgrade may be another: an item records each
        # key it holds (a single value's always; a set's when its normalizer reads Unicode data).
        self.recorded = not many or key_version is not None or normalizer is normalize_text
        self.parts = parts
        self.max_values = max_values
        self.limit_group = limit_group
        self.key_version = key_version

    def __repr__(self) -> str:
        scope = f" scope={self.scope}" if self.scope else ""
        return f"<UniqueConstraint {self.namespace} {self.fields}{scope}>"

    @property
    def record_slot(self) -> str:
        """Where an item records in its ``lock_keys`` the keys it holds under this constraint:
        the namespace (one key) for a single value; ``<NAMESPACE>#<field>`` (a map of each
        element to its key) for a set-valued one. No namespace holds ``#``, so two slots
        never meet."""
        return f"{self.namespace}#{self.fields[0]}" if self.many else self.namespace

    @property
    def attributes(self) -> tuple[str, ...]:
        """Every attribute the lock key is built from: scope first, then the fields."""
        return self.scope + self.fields

    @property
    def guarded_attributes(self) -> tuple[str, ...]:
        """Every attribute that decides whether and which lock an item holds."""
        return self.attributes + ((self.partial_on,) if self.partial_on else ())

    def applies_to(self, item: object) -> bool:
        """False when the partial condition leaves ``item`` out: it then holds no lock."""
        return self.partial_on is None or getattr(item, self.partial_on, None) is not False

    def _normalize(self, values: Sequence[object]) -> tuple[str, ...]:
        """Normalize raw values given in ``attributes`` order; empty values become ``""``."""
        scope_count = len(self.scope)
        return tuple(
            "" if _is_empty(value) else (normalize_exact if index < scope_count else self.normalizer)(value)
            for index, value in enumerate(values)
        )

    def normalized_values(self, item: object) -> tuple[str, ...] | None:
        """The normalized values this item holds, or ``None`` when it takes no lock."""
        normalized = self._normalize([getattr(item, name, None) for name in self.attributes])
        empty = [name for name, value in zip(self.attributes, normalized, strict=True) if not value]
        if not empty:
            return normalized
        if self.allow_empty:
            return None
        raise InvalidUniqueValue(empty, "empty", "This field is required.")

    def key_for_values(self, values: Iterable[str]) -> str:
        """The lock item's partition key for already normalized values."""
        encoded = "#".join(encode_component(value) for value in values)
        key = f"{LOCK_PREFIX}{self.namespace}#{encoded}"
        try:
            size = len(key.encode("utf-8"))
        except UnicodeEncodeError as error:
            # A lone surrogate (e.g. undecodable bytes from a command line) is no text at all.
            raise InvalidUniqueValue(self.fields, "invalid", "This value contains invalid characters.") from error
        if size > MAX_KEY_BYTES:
            raise InvalidUniqueValue(self.fields, "too_long", "This value is too long.")
        return key

    def owns_key(self, key: str) -> bool:
        """True when ``key`` is a lock key of this constraint (its namespace)."""
        return key.startswith(f"{LOCK_PREFIX}{self.namespace}#")

    def lock_key(self, item: object) -> str | None:
        """The lock key this item must hold, or ``None`` when it takes no lock."""
        self._single()
        if not self.applies_to(item):
            return None
        return self.claimed_key(item)

    def claimed_key(self, item: object) -> str | None:
        """The lock key of the item's value, whether or not the partial condition holds:
        the key an item left out by the condition would take once it applies."""
        self._single()
        values = self.normalized_values(item)
        return None if values is None else self.key_for_values(values)

    def lock_keys(self, item: object) -> tuple[str, ...]:
        """Every lock key this item must hold, sorted: one per element of a set-valued
        constraint's set, else the one :meth:`lock_key` names (none when it takes no lock)."""
        if not self.many:
            key = self.lock_key(item)
            return () if key is None else (key,)
        return tuple(sorted(self.member_keys(item).values()))

    def member_keys(self, item: object) -> dict[str, str]:
        """``{element: its lock key}`` of a set-valued constraint's set in ``item``. Two
        elements of one key (``Ada@X.io`` and ``ada@x.io``) are one value held twice:
        :class:`~accounts.exceptions.InvalidUniqueValue` (``duplicate``)."""
        if not self.many:
            raise TypeError(f"{self!r} holds a single value: use lock_key(item).")
        keys: dict[str, str] = {}
        for element in sorted(as_text(value) for value in getattr(item, self.fields[0], None) or ()):
            key = self.key_for(element)
            if key in keys.values():
                raise InvalidUniqueValue(self.fields, "duplicate", "This value is already in the set.")
            keys[element] = key
        return keys

    def claimed_keys(self, item: object) -> tuple[str, ...]:
        """:meth:`lock_keys`, or for a partial constraint the key :meth:`claimed_key` names."""
        if self.many:
            return self.lock_keys(item)
        key = self.claimed_key(item)
        return () if key is None else (key,)

    def _single(self) -> None:
        if self.many:
            raise TypeError(f"{self!r} is set-valued: an item holds lock_keys(item), not one lock_key.")

    def key_for(self, *raw_values: object) -> str:
        """The lock key for raw values given in ``attributes`` order (scope first)."""
        if len(raw_values) != len(self.attributes):
            raise ValueError(f"{self!r} takes {len(self.attributes)} values.")
        if self.parts > 1:
            return self._element_key(raw_values[0])
        return self.key_for_values(self._normalize(raw_values))

    def _element_key(self, element: object) -> str:
        """The key of one element of a constraint of several ``parts``: each component is a
        value of the key; an element of another shape (damage) is no value at all."""
        components = split_components(as_text(element))
        if len(components) != self.parts or not all(components):
            raise InvalidUniqueValue(self.fields, "invalid", "This value is not one of this field's values.")
        return self.key_for_values(tuple(self.normalizer(component) for component in components))


def namespace_constraints(model_class: type[Any], namespace: str) -> tuple[UniqueConstraint, ...]:
    """The constraints ``model_class`` declares in ``namespace`` (two for an account with
    several addresses: its primary ``email`` and its other ``email_addresses``)."""
    return tuple(constraint for constraint in constraints_of(model_class) if constraint.namespace == namespace)


def keys_in_namespace(item: object, namespace: str) -> frozenset[str]:
    """Every lock key ``item``'s values map to in ``namespace``, under each constraint of its
    model declared there (an account's primary address and its other addresses share
    ``EMAIL``); a value that cannot be keyed (legacy data) maps to none."""
    keys: set[str] = set()
    for constraint in namespace_constraints(type(item), namespace):
        try:
            keys.update(constraint.lock_keys(item))
        except InvalidUniqueValue:
            continue
    return frozenset(keys)


def constraints_of(model_class: type[Any]) -> tuple[UniqueConstraint, ...]:
    """The unique constraints a PynamoDB model declares.

    A model declares them as a ``unique_constraints`` sequence, or as a
    ``get_unique_constraints()`` classmethod when they depend on settings.
    """
    getter = getattr(model_class, "get_unique_constraints", None)
    if getter is not None:
        return tuple(getter())
    return tuple(getattr(model_class, "unique_constraints", ()))
