"""Unicode rules for the identifiers people type: usernames and email domains.

Every table comes from a maintained implementation of the Unicode data, none is written
here: ICU (through PyICU) for UTS #39 (confusable skeletons, restriction levels, the
identifier profile) and character properties, the ``idna`` package for UTS #46.

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

import unicodedata
from typing import Any

import icu
import idna

from .uniqueness import Normalizer, normalize_text

#: The Unicode version of ICU's data, which the skeletons and script rules follow.
UNICODE_VERSION = icu.UNICODE_VERSION
#: The ICU version PyICU is built against.
ICU_VERSION = icu.ICU_VERSION
#: The version of our own folding rules (:func:`normalize_username_key`, the skeleton of a
#: key, :func:`normalize_email_key`): bump it whenever they change what a key is.
FOLDING_RULES_VERSION = 1
#: What every Unicode-dependent lock key is computed from: our rules, ICU and its Unicode
#: data (skeletons, soft-dotted letters), Python's Unicode data (NFKC, case folding) and the
#: ``idna`` package's tables. Two servers computing keys differently differ here; each lock
#: records the version that wrote it, and the system check ``accounts.E016`` refuses to
#: start a server whose version is not the one the table's locks are keyed with.
KEY_VERSION = (
    f"rules-{FOLDING_RULES_VERSION}+icu-{ICU_VERSION}+unicode-{UNICODE_VERSION}"
    f"+python-unicode-{unicodedata.unidata_version}+idna-{idna.__version__}"
)

COMBINING_DOT_ABOVE = "\u0307"


def _frozen(unicode_set: icu.UnicodeSet) -> icu.UnicodeSet:
    # A frozen set is immutable and, as ICU documents, safe to read from many threads.
    unicode_set.freeze()
    return unicode_set


# Characters nobody sees, or that steer the text without being seen: default-ignorable code
# points (Hangul fillers, variation selectors, zero-width joiners, ...), controls, formats,
# surrogates, private-use and unassigned code points, line and paragraph separators.
INVISIBLE = _frozen(icu.UnicodeSet(r"[[:Default_Ignorable_Code_Point:][:Cc:][:Cf:][:Cs:][:Co:][:Cn:][:Zl:][:Zp:]]"))
# Soft-dotted letters (i, j, Cyrillic і ...) lose their dot under an accent above: a dot above
# written after one adds nothing visible.
SOFT_DOTTED = _frozen(icu.UnicodeSet(r"[:Soft_Dotted:]"))
LETTERS_AND_DIGITS = _frozen(icu.UnicodeSet(r"[[:L:][:Nd:]]"))
LETTERS = _frozen(icu.UnicodeSet(r"[:L:]"))
# Scripts a character shares with every script (digits, punctuation, combining marks).
NEUTRAL_SCRIPTS = frozenset({icu.UScriptCode.COMMON, icu.UScriptCode.INHERITED})
# Scripts whose letters carry accents that are easy to miss (paypaĺ, paypaḷ, Greek ά,
# Cyrillic й): a look-alike key drops a mark on one of their letters. Elsewhere a mark can
# make another letter (Japanese voicing: が is not か), so it is kept.
MARK_FOLDED_SCRIPTS = frozenset({icu.UScriptCode.LATIN, icu.UScriptCode.GREEK, icu.UScriptCode.CYRILLIC})


# ICU documents a spoof checker as safe to share between threads once it is set up.
_SKELETONS = icu.SpoofChecker()
# UTS #39 "highly restrictive": one script, or Latin with Han + Hiragana + Katakana
# (Japanese), Han + Bopomofo (Chinese) or Han + Hangul (Korean); mixed digit systems too.
_RESTRICTION = icu.SpoofChecker()
_RESTRICTION.setChecks(icu.USpoofChecks.RESTRICTION_LEVEL | icu.USpoofChecks.MIXED_NUMBERS)
_RESTRICTION.setRestrictionLevel(icu.URestrictionLevel.HIGHLY_RESTRICTIVE)
# UTS #39's identifier profile: characters recommended for identifiers in modern use.
IDENTIFIER_CHARACTERS = _frozen(icu.UnicodeSet(_SKELETONS.getRecommendedUnicodeSet()))


def skeleton(text: str) -> str:
    """The UTS #39 confusable skeleton of ``text``: two strings that look alike share it."""
    # PyICU is unannotated: the name gives its result a type.
    skeleton_text: str = _SKELETONS.getSkeleton(0, text)
    return skeleton_text


def fold_skeleton(text: str) -> str:
    """Fold what a UTS #39 skeleton keeps apart though people read it alike: case (the
    skeleton of ``0`` is ``O``, of ``o`` is ``o``, so ``sc0tt`` and ``scott`` differ) and
    nonspacing marks on Latin, Greek and Cyrillic letters (``paypaĺ``, ``paypaḷ``: ``paypal``).
    Marks on letters of other scripts stay (``が`` and ``か`` are two names).

    A separate step after :func:`skeleton`, so that a change to it is a new version of the
    look-alike key (existing locks are re-keyed by ``accounts_backfill``).
    """
    kept: list[str] = []
    base_script = None
    for character in unicodedata.normalize("NFD", text.casefold()):
        if unicodedata.category(character) == "Mn":
            if base_script in MARK_FOLDED_SCRIPTS:
                continue
        else:
            base_script = icu.Script.getScript(ord(character)).getScriptCode()
        kept.append(character)
    return "".join(kept)


def lookalike_key(text: str) -> str:
    """The look-alike key of ``text``: its :func:`skeleton`, folded by :func:`fold_skeleton`."""
    return fold_skeleton(skeleton(text))


def describe_character(character: str) -> str:
    """``"U+3164 HANGUL FILLER"``: a character named so that a person can see which one."""
    return f"U+{ord(character):04X} {unicodedata.name(character, '')}".rstrip()


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
    for character in unicodedata.normalize("NFD", text):
        combining = unicodedata.combining(character)
        if character == COMBINING_DOT_ABOVE and after_soft_dotted:
            continue
        if combining == 0:
            after_soft_dotted = SOFT_DOTTED.contains(character)
        elif combining == 230:
            after_soft_dotted = False
        kept.append(character)
    return unicodedata.normalize("NFC", "".join(kept))


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
    return idna.encode(domain, uts46=True).decode("ascii")


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
    return idna.decode(domain, uts46=True)


def invisible_characters(text: str) -> list[str]:
    """The characters of ``text`` nobody can see (default-ignorable, controls, formats, ...)."""
    return [character for character in text if INVISIBLE.contains(character)]


def unusual_characters(text: str) -> list[str]:
    """The non-ASCII characters of ``text`` outside UTS #39's identifier profile
    (U+2800 BRAILLE PATTERN BLANK, symbols, obsolete and technical characters)."""
    return [character for character in text if ord(character) > 0x7F and not IDENTIFIER_CHARACTERS.contains(character)]


def scripts_of(text: str, language: str = "en") -> list[str]:
    """The names, in ``language``, of the scripts ``text`` is written in, in order of
    appearance; digits and ``.`` alone are "Common"."""
    codes: list[str] = []
    for character in text:
        script = icu.Script.getScript(ord(character))
        if script.getScriptCode() not in NEUTRAL_SCRIPTS and script.getShortName() not in codes:
            codes.append(script.getShortName())
    names = icu.LocaleDisplayNames.createInstance(icu.Locale(language))
    return [names.scriptDisplayName(code) for code in codes or ["Zyyy"]]


def mixed_scripts(text: str, language: str = "en") -> list[str]:
    """The scripts of ``text``, named in ``language``, when it mixes them beyond UTS #39's
    "highly restrictive" level (or mixes digit systems), else ``[]``: ``аdmin`` ->
    ``["Cyrillic", "Latin"]``, in Japanese ``["キリル文字", "ラテン文字"]``."""
    if _RESTRICTION.check(text) == 0:
        return []
    return scripts_of(text, language)


def has_letter_or_digit(text: str) -> bool:
    """Whether ``text`` holds at least one letter or decimal digit, in any script."""
    return any(LETTERS_AND_DIGITS.contains(character) for character in text)


def has_letter(text: str) -> bool:
    """Whether ``text`` holds at least one letter, in any script."""
    return any(LETTERS.contains(character) for character in text)
