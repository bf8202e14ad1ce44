"""Unicode rules for the identifiers people type: usernames and email domains.

Every table is Unicode's, none is written here, and every one is pinned so that each host
computes the same keys whatever its Python, OS or ICU (:mod:`accounts.unicode_data`): UTS
#39 (confusable skeletons, restriction levels, the identifier profile), scripts and
character properties from tables generated from a named Unicode version, normalization and
categories from ``unicodedata2``, and UTS #46 (domains) from the ``idna`` package.

- :func:`skeleton` is the UTS #39 confusable skeleton: ``аdmin`` (Cyrillic а) and
  ``admin`` share the skeleton ``adrnin``; :func:`fold_skeleton` then folds what the
  skeleton keeps apart but eyes do not (``sc0tt`` and ``scott``, ``paypaĺ`` and ``paypal``).
  A lock keyed on :func:`lookalike_key` (both steps) makes look-alikes collide.
- :func:`normalize_username_key` and :func:`normalize_email_key` turn a username or an email
  address into the text its lock key is built from.
- :func:`invisible_characters`, :func:`unusual_characters` and :func:`mixed_scripts` say
  what a username or a domain label may not hold.
- :data:`KEY_VERSION` names everything those keys are computed from: a lock records it,
  and the table records the version its locks are keyed with (``accounts_backfill``).
"""

import importlib.util
from types import ModuleType
from typing import Any

import idna
import idna.idnadata

from . import unicode_data
from .unicode_data import casefold, category, normalize
from .uniqueness import Normalizer, normalize_text

#: The Unicode version of the character database (``unicodedata2``): NFKC, NFD, categories.
UNICODE_VERSION = unicode_data.UNICODE_VERSION
#: The Unicode version of the generated tables: UTS #39's data, scripts, case folding.
TABLES_VERSION = unicode_data.TABLES_VERSION
#: The version of our own folding rules (:func:`normalize_username_key`, the skeleton of a
#: key, :func:`normalize_email_key`): bump it whenever they change what a key is.
#: 2: computed in Python over pinned data (skeletons drop default-ignorable code points, as
#: UTS #39 does since Unicode 15.1); 1 was ICU's through PyICU.
FOLDING_RULES_VERSION = 2
#: What every Unicode-dependent lock key is computed from: our rules and the pinned Unicode
#: data, the same on every host. ``idna``'s UTS #46 tables are named apart only when they are
#: of another Unicode version than ``unicodedata2``'s (never with the versions
#: pyproject.toml pins). Each lock records the version that wrote it, and the system check
#: ``accounts.E016`` refuses to start a server whose version is not the one the table's
#: locks are keyed with.
KEY_VERSION = f"rules-{FOLDING_RULES_VERSION}+unicode-{UNICODE_VERSION}+uts39-{TABLES_VERSION}" + (
    "" if idna.idnadata.__version__ == UNICODE_VERSION else f"+idna-unicode-{idna.idnadata.__version__}"
)

COMBINING_DOT_ABOVE = "\u0307"


def _idna_over_pinned_data() -> ModuleType:
    """A private copy of ``idna.core`` reading ``unicodedata2`` for what its tables leave to
    Python's ``unicodedata`` (NFC, bidi and combining classes), so that UTS #46 follows one
    Unicode version on every host, its tables' (on Python 3.11 a domain with a character of
    Unicode 15 would otherwise be "unknown"). ``idna`` itself, as other code uses it, is
    left alone; the copy raises ``idna``'s own exceptions."""
    spec = importlib.util.find_spec("idna.core")
    if spec is None or spec.loader is None:
        raise ImportError("idna.core")
    core = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(core)
    core.unicodedata = unicode_data.unicodedata2  # type: ignore[attr-defined]
    for error in ("IDNAError", "IDNABidiError", "InvalidCodepoint", "InvalidCodepointContext"):
        setattr(core, error, getattr(idna, error))
    return core


_IDNA = _idna_over_pinned_data()

# Characters nobody sees, or that steer the text without being seen: default-ignorable code
# points (Hangul fillers, variation selectors, zero-width joiners, ...), controls, formats,
# surrogates, private-use and unassigned code points, line and paragraph separators.
INVISIBLE_CATEGORIES = frozenset({"Cc", "Cf", "Cs", "Co", "Cn", "Zl", "Zp"})
# Scripts a character shares with every script (digits, punctuation, combining marks).
NEUTRAL_SCRIPTS = frozenset({"Zyyy", "Zinh"})
# Scripts whose letters carry accents that are easy to miss (paypaĺ, paypaḷ, Greek ά,
# Cyrillic й): a look-alike key drops a mark on one of their letters. Elsewhere a mark can
# make another letter (Japanese voicing: が is not か), so it is kept.
MARK_FOLDED_SCRIPTS = frozenset({"Latn", "Grek", "Cyrl"})
# UTS #39 section 5.1's augmented script sets: Han is also written in Japanese (Jpan),
# Korean (Kore) and Chinese with Bopomofo (Hanb); kana only in Japanese; Hangul in Korean.
AUGMENTED_SCRIPTS = {"Hani": ("Hanb", "Jpan", "Kore"), "Hira": ("Jpan",), "Kana": ("Jpan",), "Hang": ("Kore",)}
AUGMENTED_SCRIPTS["Bopo"] = ("Hanb",)
# Section 5.2's "highly restrictive": Latin with one of these (Japanese, Korean, Chinese).
CJK_SCRIPT_SETS = frozenset({"Hanb", "Jpan", "Kore"})


def _augmented_scripts(character: str) -> frozenset[str] | None:
    """UTS #39's augmented script set of ``character``; ``None`` for every script (Common,
    Inherited: a digit or a mark fits any script)."""
    scripts = unicode_data.script_extensions(ord(character))
    if NEUTRAL_SCRIPTS.intersection(scripts):
        return None
    return frozenset(scripts).union(*(AUGMENTED_SCRIPTS.get(script, ()) for script in scripts))


def _resolved_scripts(text: str, without: str | None = None) -> frozenset[str] | None:
    """The scripts every character of ``text`` may be written in (UTS #39 section 5.1), the
    characters of script ``without`` left out; ``None`` for every script."""
    resolved: frozenset[str] | None = None
    for character in text:
        scripts = _augmented_scripts(character)
        if scripts is None or without in scripts:
            continue
        resolved = scripts if resolved is None else resolved & scripts
    return resolved


def _beyond_highly_restrictive(text: str) -> bool:
    """Whether ``text`` is less restrictive than UTS #39's "highly restrictive" (5.2): not
    ASCII, not one script, and not Latin with Japanese, Korean or Chinese (Han + Bopomofo)."""
    if text.isascii():
        return False
    resolved = _resolved_scripts(text)
    if resolved is None or resolved:
        return False
    without_latin = _resolved_scripts(text, without="Latn")
    return without_latin is not None and not without_latin & CJK_SCRIPT_SETS


def _mixes_digit_systems(text: str) -> bool:
    """Whether ``text`` holds decimal digits of two systems (``1`` and Arabic-Indic ``١``)."""
    zeros = {ord(character) - unicode_data.decimal(character) for character in text if category(character) == "Nd"}
    return len(zeros) > 1


def skeleton(text: str) -> str:
    """The UTS #39 confusable skeleton of ``text``: two strings that look alike share it.

    NFD, each character replaced by its prototype (a default-ignorable one by nothing), NFD.
    """
    if text.isascii():
        # NFD leaves ASCII alone (the common case, kept fast): only the prototypes may not.
        mapped = text.translate(unicode_data.CONFUSABLES)
        return mapped if mapped.isascii() else normalize("NFD", mapped)
    return normalize("NFD", normalize("NFD", text).translate(unicode_data.CONFUSABLES))


def fold_skeleton(text: str) -> str:
    """Fold what a UTS #39 skeleton keeps apart though people read it alike: case (the
    skeleton of ``0`` is ``O``, of ``o`` is ``o``, so ``sc0tt`` and ``scott`` differ) and
    nonspacing marks on Latin, Greek and Cyrillic letters (``paypaĺ``, ``paypaḷ``: ``paypal``).
    Marks on letters of other scripts stay (``が`` and ``か`` are two names).

    A separate step after :func:`skeleton`, so that a change to it is a new version of the
    look-alike key (existing locks are re-keyed by ``accounts_backfill``).
    """
    if text.isascii():
        return text.lower()  # no mark to drop, and ASCII folds to lower case (kept fast)
    kept: list[str] = []
    base_script = None
    for character in normalize("NFD", casefold(text)):
        if category(character) == "Mn":
            if base_script in MARK_FOLDED_SCRIPTS:
                continue
        else:
            base_script = unicode_data.script(ord(character))
        kept.append(character)
    return "".join(kept)


def lookalike_key(text: str) -> str:
    """The look-alike key of ``text``: its :func:`skeleton`, folded by :func:`fold_skeleton`."""
    return fold_skeleton(skeleton(text))


def describe_character(character: str) -> str:
    """``"U+3164 HANGUL FILLER"``: a character named so that a person can see which one."""
    return f"U+{ord(character):04X} {unicode_data.name(character, '')}".rstrip()


def _drop_redundant_dots(text: str) -> str:
    """Remove a dot above written after a soft-dotted letter, as Unicode's casing rules do.

    Full case folding turns Turkish ``İ`` into ``i`` + U+0307, so ``İstanbul`` would not be
    ``istanbul``; the dot is redundant on an ``i`` (SpecialCasing's After_Soft_Dotted rule:
    no base character and no other accent above in between).
    """
    if text.isascii():
        return text  # no combining mark: nothing to drop (the common case, kept fast)
    kept: list[str] = []
    after_soft_dotted = False
    for character in normalize("NFD", text):
        combining = unicode_data.combining(character)
        if character == COMBINING_DOT_ABOVE and after_soft_dotted:
            continue
        if combining == 0:
            after_soft_dotted = ord(character) in unicode_data.SOFT_DOTTED
        elif combining == 230:
            after_soft_dotted = False
        kept.append(character)
    return normalize("NFC", "".join(kept))


def normalize_username_key(value: object) -> str:
    """The text a username's lock is keyed on: NFKC, case-folded, ``İ`` folded to ``i``.

    ``İstanbul``, ``istanbul`` and ``ISTANBUL`` are one name. Dotless ``ı`` stays a letter
    of its own (``ıstanbul`` is another Turkish word), caught by the skeleton lock instead.
    """
    return _drop_redundant_dots(normalize_text(value))


def skeleton_normalizer(normalizer: Normalizer) -> Normalizer:
    """A normalizer keying a second lock on the look-alike key of what ``normalizer`` returns."""

    def normalize_skeleton(value: Any) -> str:
        return lookalike_key(normalizer(value))

    normalize_skeleton.__doc__ = f"The look-alike key of {getattr(normalizer, '__name__', normalizer)}(value)."
    normalize_skeleton.key_version = KEY_VERSION  # type: ignore[attr-defined]
    return normalize_skeleton


def key_version_of(normalizer: Normalizer) -> str | None:
    """The :data:`KEY_VERSION` when ``normalizer`` depends on Unicode data (ours, the
    default :func:`~accounts.uniqueness.normalize_text`, or one that declares
    ``key_version`` itself), else its own ``key_version`` or ``None`` (a number, a phone)."""
    if normalizer in (normalize_text, normalize_username_key, normalize_email_key):
        return KEY_VERSION
    return getattr(normalizer, "key_version", None)


def username_skeleton_key(value: object) -> str:
    """The look-alike key of :func:`normalize_username_key`: what the ``HANDLE_SKEL`` lock holds."""
    return lookalike_key(normalize_username_key(value))


def ascii_domain(domain: str) -> str:
    """The IDNA (UTS #46) A-label spelling of ``domain``: ``bücher.example`` ->
    ``xn--bcher-kva.example``. Raises ``idna.IDNAError`` for a domain IDNA refuses."""
    encoded: bytes = _IDNA.encode(domain, uts46=True)
    return encoded.decode("ascii")


def normalize_email_key(value: object) -> str:
    """The text an email's lock is keyed on: NFKC and case-folded, the domain in its IDNA
    A-label spelling, so ``user@bücher.example`` and ``user@xn--bcher-kva.example`` collide.

    A domain IDNA refuses (forms refuse it first) keeps its case-folded spelling.
    """
    local, at, domain = normalize_text(value).rpartition("@")
    if not at or domain.isascii():
        # A lower-case ASCII domain is its own A-label spelling (UTS #46 maps it to itself),
        # or one IDNA refuses and that keeps its spelling: IDNA is skipped (the common case).
        return f"{local}{at}{domain}"
    try:
        domain = ascii_domain(domain)
    except (idna.IDNAError, UnicodeError):
        pass
    return f"{local}@{domain}"


def unicode_domain(domain: str) -> str:
    """The IDNA U-label spelling of ``domain``. Raises ``idna.IDNAError`` when invalid."""
    decoded: str = _IDNA.decode(domain, uts46=True)
    return decoded


def invisible_characters(text: str) -> list[str]:
    """The characters of ``text`` nobody can see (default-ignorable, controls, formats, ...)."""
    return [character for character in text if _is_invisible(character)]


def _is_invisible(character: str) -> bool:
    return ord(character) in unicode_data.DEFAULT_IGNORABLE or category(character) in INVISIBLE_CATEGORIES


def unusual_characters(text: str) -> list[str]:
    """The non-ASCII characters of ``text`` outside UTS #39's identifier profile
    (U+2800 BRAILLE PATTERN BLANK, symbols, obsolete and technical characters)."""
    return [
        character
        for character in text
        if ord(character) > 0x7F and ord(character) not in unicode_data.IDENTIFIER_ALLOWED
    ]


def scripts_of(text: str, language: str = "en") -> list[str]:
    """The names, in ``language``, of the scripts ``text`` is written in, in order of
    appearance; digits and ``.`` alone are "Common"."""
    codes: list[str] = []
    for character in text:
        script = unicode_data.script(ord(character))
        if script not in NEUTRAL_SCRIPTS and script not in codes:
            codes.append(script)
    return [unicode_data.script_name(code, language) for code in codes or ["Zyyy"]]


def mixed_scripts(text: str, language: str = "en") -> list[str]:
    """The scripts of ``text``, named in ``language``, when it mixes them beyond UTS #39's
    "highly restrictive" level (or mixes digit systems), else ``[]``: ``аdmin`` ->
    ``["Cyrillic", "Latin"]``, in Japanese ``["キリル文字", "ラテン文字"]``."""
    if text.isascii() or not (_beyond_highly_restrictive(text) or _mixes_digit_systems(text)):
        return []
    return scripts_of(text, language)


def has_letter_or_digit(text: str) -> bool:
    """Whether ``text`` holds at least one letter or decimal digit, in any script."""
    return any(category(character)[0] == "L" or category(character) == "Nd" for character in text)


def has_letter(text: str) -> bool:
    """Whether ``text`` holds at least one letter, in any script."""
    return any(category(character)[0] == "L" for character in text)
