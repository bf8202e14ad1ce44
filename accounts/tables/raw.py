"""Readers of raw DynamoDB attribute values (``{"N": "12"}``, ``{"S": "x"}``), as the audit,
the guards and the session store meet them: each reads a value it is given, never trusts its
type, and answers ``None`` for one it cannot read."""

import math
from collections.abc import Mapping
from datetime import timedelta
from typing import Any

from .clocks import TTL_ATTRIBUTE, has_expired

# A deleted account leaves a tombstone at its key: PK, SK, this attribute (when it was
# deleted) and an `expires` far off. Its id is never used again: a sign-up form posted again
# (its token derives the id) is refused by the create's attribute_not_exists(PK), whatever
# the form's age, while every read treats the tombstone as absent. A form's token is
# accepted for 9 minutes by a server's clock and DynamoDB remembers a token for 10: 30 days
# outlive both by far.
TOMBSTONE_ATTRIBUTE = "deleted"
TOMBSTONE_LIFETIME = timedelta(days=30)


def raw_number(value: object) -> float | None:
    """The number a raw DynamoDB attribute value (``{"N": "12.5"}``) holds, or ``None`` when
    it is absent or of another type (an operator's ``{"S": "soon"}``): read, never trusted."""
    if not isinstance(value, dict) or not isinstance(value.get("N"), str):
        return None
    try:
        number = float(value["N"])
    except ValueError:
        return None
    return number if math.isfinite(number) else None


def raw_text(value: object) -> str | None:
    """The string a raw DynamoDB attribute value (``{"S": "..."}``) holds, or ``None``."""
    text = value.get("S") if isinstance(value, dict) else None
    return text if isinstance(text, str) else None


def raw_expires(raw: Mapping[str, Any]) -> float | None:
    """The ``expires`` of a raw item as a number, or ``None`` when it has none or one of
    another type (DynamoDB's TTL ignores such a value too: the item does not expire)."""
    return raw_number(raw.get(TTL_ATTRIBUTE))


def is_tombstone(raw: Mapping[str, Any]) -> bool:
    """Whether raw item ``raw`` is the tombstone a deleted item left at its key."""
    return TOMBSTONE_ATTRIBUTE in raw


def is_gone(raw: Mapping[str, Any], now: float | None = None) -> bool:
    """Whether raw item ``raw`` counts as absent to every read: it expired, or it is a
    tombstone."""
    return is_tombstone(raw) or has_expired(raw_expires(raw), now)


def read_text(value: object) -> str | None:
    """The text a raw DynamoDB attribute value spells: a string's own, a number's digits
    (``{"N": "18"}`` -> ``"18"``), else ``None``."""
    if not isinstance(value, dict):
        return None
    text, number = value.get("S"), value.get("N")
    if isinstance(text, str):
        return text
    return number if isinstance(number, str) and raw_number(value) is not None else None
