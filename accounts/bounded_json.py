"""JSON from outside (a browser's answer), parsed only when its size and nesting are bounded.

Python's ``json`` recurses once per level of nesting: ``"[" * 20000 + "]" * 20000`` is a few
kilobytes yet raises ``RecursionError`` (a 500), and a large body costs memory before any
check runs. :func:`loads` measures both first, without recursing, and refuses with a
``ValueError`` as ``json.loads`` does on anything it cannot read.
"""

import json
import re

# A JSON string (its escapes included), then a bracket: strings are skipped, since a
# bracket inside one does not nest anything.
_STRING_OR_BRACKET = re.compile(r'"(?:[^"\\]|\\.)*"|[\[\]{}]', re.S)
_OPENING = frozenset("[{")


class JSONTooLarge(ValueError):
    """The text is longer, or nests deeper, than the caller allows."""


def nesting_depth(text: str, *, limit: int | None = None) -> int:
    """How deep the arrays and objects of ``text`` nest (0 for a scalar), counted without
    parsing; an unbalanced text is left for the parser to refuse. With ``limit``, counting
    stops at the first level past it (a hostile text costs no more than a deep-enough one)."""
    depth = deepest = 0
    for match in _STRING_OR_BRACKET.finditer(text):
        token = match.group()
        if token in _OPENING:
            depth += 1
            deepest = max(deepest, depth)
            if limit is not None and deepest > limit:
                break
        elif token in "]}":
            depth -= 1
    return deepest


def loads(text: str | bytes, *, max_length: int, max_depth: int) -> object:
    """``json.loads(text)`` when ``text`` is at most ``max_length`` characters and nests at
    most ``max_depth`` levels; raises :class:`JSONTooLarge` (a ``ValueError``) otherwise."""
    if len(text) > max_length:
        raise JSONTooLarge(f"longer than {max_length}")
    if isinstance(text, bytes):
        text = text.decode("utf-8")
    if nesting_depth(text, limit=max_depth) > max_depth:
        raise JSONTooLarge(f"nested deeper than {max_depth}")
    return json.loads(text)
