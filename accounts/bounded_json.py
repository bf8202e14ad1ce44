"""JSON from outside (a browser's answer), parsed only when its size and nesting are bounded,
and only when every string in it is text.

Python's ``json`` recurses once per level of nesting: ``"[" * 20000 + "]" * 20000`` is a few
kilobytes yet raises ``RecursionError`` (a 500), and a large body costs memory before any
check runs. :func:`loads` measures both first, without recursing, and refuses with a
``ValueError`` as ``json.loads`` does on anything it cannot read.

JSON may also escape half of a UTF-16 surrogate pair alone (``"\\ud800"``): ``json.loads``
returns a ``str`` holding it, which no UTF-8 encoder accepts, so it would fail wherever the
value is stored, hashed or mailed (a 500 far from the input). :func:`loads` refuses it
here, the one place outside JSON is read.
"""

import json
import re

# A JSON string (its escapes included), then a bracket: strings are skipped, since a
# bracket inside one does not nest anything.
_STRING_OR_BRACKET = re.compile(r'"(?:[^"\\]|\\.)*"|[\[\]{}]', re.S)
_OPENING = frozenset("[{")
# A lone surrogate: JSON's escapes combine a high and a low half into one character, so a
# half left in a parsed string had no partner.
_SURROGATE = re.compile("[\ud800-\udfff]")


class JSONTooLarge(ValueError):
    """The text is longer, or nests deeper, than the caller allows."""


class LoneSurrogate(ValueError):
    """A string of the text (a key or a value) holds a lone UTF-16 surrogate: not text."""


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
    data = json.loads(text)
    if any(_SURROGATE.search(string) for string in strings_in(data)):
        raise LoneSurrogate("a string holds a lone UTF-16 surrogate")
    return data


def strings_in(data: object) -> list[str]:
    """Every string of parsed JSON ``data``: the keys of its objects and its string values,
    at any depth (walked without recursing)."""
    found, pending = [], [data]
    while pending:
        value = pending.pop()
        if isinstance(value, str):
            found.append(value)
        elif isinstance(value, dict):
            found.extend(value)
            pending.extend(value.values())
        elif isinstance(value, list):
            pending.extend(value)
    return found
