"""The pure-Python identifiers against the PyICU implementation they replace, over every
code point and the look-alike cases of the suite.

Keys must equal the old ones wherever the two sides' Unicode data agree; every difference
must be explained by data: a code point assigned in one side's Unicode version and not the
other's, or a per-character fact (prototype, identifier status, script, default-ignorable,
case folding, normalization) that the two versions give differently.

Needs PyICU: ``nox -s icu`` (part of ``make test-matrix``) installs one bundling its ICU;
where PyICU is built on the system's ICU, ``ACCOUNTS_TEST_ICU=1 pytest
tests/engine/test_identifiers_icu.py -s`` compares with that one. The usual run leaves this
module out (tests/engine/conftest.py) instead of skipping it.
"""

import sys
import unicodedata
from collections import Counter

import icu
import pytest

from accounts import identifiers, unicode_data
from tests.engine.pyicu_identifiers import (
    ALLOWED,
    DEFAULT_IGNORABLE,
    DISPLAY,
    ICU_NFD,
    INVISIBLE,
    SOFT_DOTTED,
    old_lookalike_key,
    old_mixed_scripts,
    old_normalize_email_key,
    old_normalize_username_key,
    old_skeleton,
    old_username_skeleton_key,
)

# -- What is compared, and with which input --------------------------------------------------

FUNCTIONS = {
    "skeleton": (lambda c: c, old_skeleton, identifiers.skeleton),
    "lookalike_key": (lambda c: c, old_lookalike_key, identifiers.lookalike_key),
    "normalize_username_key": (lambda c: c, old_normalize_username_key, identifiers.normalize_username_key),
    "username_skeleton_key": (
        lambda c: c,
        old_username_skeleton_key,
        identifiers.username_skeleton_key,
    ),
    "normalize_email_key": (lambda c: f"x{c}@d{c}.example", old_normalize_email_key, identifiers.normalize_email_key),
    "mixed_scripts (after a)": (lambda c: f"a{c}", old_mixed_scripts, identifiers.mixed_scripts),
    "mixed_scripts (after \u3042)": (lambda c: f"\u3042{c}", old_mixed_scripts, identifiers.mixed_scripts),
    "unusual_characters": (
        lambda c: c,
        lambda text: [ch for ch in text if ord(ch) > 0x7F and not ALLOWED.contains(ch)],
        identifiers.unusual_characters,
    ),
    "invisible_characters": (
        lambda c: c,
        lambda text: [ch for ch in text if INVISIBLE.contains(ch)],
        identifiers.invisible_characters,
    ),
}

# Names of the suite's look-alike and script cases (tests/engine/test_identifiers.py,
# test_lookalikes.py, docs/lookalikes.md), compared whole.
CYRILLIC_A = "\u0430"
NAMES = [
    *("admin", "adrnin", "Admin", "ＡＤＭＩＮ", f"{CYRILLIC_A}dmin", "\u0441\u043e\u0441\u043e", "coco", "coc0"),
    *("sc0tt", "SC0TT", "scott", "1ucy", "lucy", "paypal", "paypal\u0301", "paypa\u1e37", "p\U0001e030ypal"),
    *("İstanbul", "ISTANBUL", "istanbul", "ıstanbul", "İSTANBUL", "a\u0307", "rené", "René", "ｒｏｏｔ", "supp0rt"),
    *("\u03ac\u03bb\u03c6\u03b1", "\u03b1\u03bb\u03c6\u03b1", "\u04e3\u0432\u0430\u043d", "\u0438\u0432\u0430\u043d"),
    *("\u304c", "\u304b", "\u30ac", "\u30ab", "\u3071", "\u306f", "山田タロウ", "やまだtaro", "ヤマダ山田taro"),
    *("Ωμέγα", "Иван", "محمد", "ada_l", "ada.lovelace", "r2d2", "12345", "١٢٣", "1\u0661", "ex\u03bfmple"),
    *("ada\u3164", "ada\u115f", "ada\uffa0", "ada\ufe0f", "ada\U000e0100", "ada\u200b", "ada\u2800", "ß", "ẞ", "ǅ"),
    *("straße", "STRASSE", "ﬁsh", "fish", "Ǆemal", "ǆemal", "x\u0130\u0307", "i\u0307\u0301", "ΣΊΣΥΦΟΣ", "σίσυφος"),
]
EMAILS = ["User@Bücher.Example", "user@xn--bcher-kva.example", "taro@例え.jp", "a@παράδειγμα.gr", "A@Exa_mple.com"]

# -- Why the two sides may differ ------------------------------------------------------------


def icu_assigned(character):
    return icu.Char.charType(character) != icu.UCharCategory.UNASSIGNED


def ours_assigned(character):
    return unicode_data.category(character) != "Cn"


def python_assigned(character):
    return unicodedata.category(character) != "Cn"


def uts39_data_differs(character):
    code = ord(character)
    theirs_scx = sorted(icu.Script(s).getShortName() for s in icu.Script.getScriptExtensions(code))
    return (
        old_skeleton(character) != identifiers.skeleton(character)
        or ALLOWED.contains(character) != (code in unicode_data.IDENTIFIER_ALLOWED)
        or DEFAULT_IGNORABLE.contains(character) != (code in unicode_data.DEFAULT_IGNORABLE)
        or SOFT_DOTTED.contains(character) != (code in unicode_data.SOFT_DOTTED)
        or icu.Script.getScript(code).getShortName() != unicode_data.script(code)
        or theirs_scx != sorted(unicode_data.script_extensions(code))
    )


def character_data_differs(character):
    return (
        character.casefold() != unicode_data.casefold(character)
        or any(
            unicodedata.normalize(form, character) != unicode_data.normalize(form, character)
            for form in ("NFC", "NFD", "NFKC")
        )
        or ICU_NFD.normalize(character) != unicode_data.normalize("NFD", character)
        or unicodedata.category(character) != unicode_data.category(character)
        or unicodedata.combining(character) != unicode_data.combining(character)
    )


def script_name_differs(character):
    code = icu.Script.getScript(ord(character)).getShortName()
    return DISPLAY.scriptDisplayName(code) != unicode_data.script_name(code, "en")


def reason(text, outputs):
    """Why ``text`` may key differently: the first data difference among its characters and
    those of its normalized forms and of both sides' outputs, else ``None``."""
    characters = set(text)
    for form in ("NFD", "NFKC"):
        characters |= set(unicodedata.normalize(form, text)) | set(unicode_data.normalize(form, text))
    characters |= set(text.casefold()) | set(unicode_data.casefold(text))
    for output in outputs:
        characters |= set(output if isinstance(output, str) else "".join(output))
    reasons = [
        (f"assigned after ICU's Unicode {icu.UNICODE_VERSION}", lambda c: ours_assigned(c) and not icu_assigned(c)),
        (
            f"unassigned in the running Python's Unicode {unicodedata.unidata_version}",
            lambda c: icu_assigned(c) != python_assigned(c) or ours_assigned(c) != python_assigned(c),
        ),
        ("assigned in ICU's data, not in the pinned data", lambda c: icu_assigned(c) and not ours_assigned(c)),
        (f"UTS #39 data or scripts changed since Unicode {icu.UNICODE_VERSION}", uts39_data_differs),
        ("case folding or normalization changed", character_data_differs),
        (f"CLDR's name of its script changed since ICU {icu.ICU_VERSION}", script_name_differs),
    ]
    for name, differs in reasons:
        if any(differs(character) for character in characters):
            return name
    return None


def every_assigned_code_point():
    """Every code point some side assigns (private use included), surrogates excepted: ICU's
    strings cannot hold one alone."""
    for code in range(0x110000):
        if 0xD800 <= code <= 0xDFFF:
            continue
        character = chr(code)
        if ours_assigned(character) or icu_assigned(character) or python_assigned(character):
            yield character


def compare(texts, functions):
    """``(equal, {function: Counter(reason)}, unexplained)`` over ``texts``."""
    equal = Counter()
    differing = {name: Counter() for name in functions}
    unexplained = []
    for text in texts:
        for name, (make_input, old, new) in functions.items():
            typed = make_input(text)
            before, after = old(typed), new(typed)
            if before == after:
                equal[name] += 1
                continue
            why = reason(typed, [before, after])
            differing[name][why] += 1
            if why is None:
                unexplained.append((name, typed, before, after))
    return equal, differing, unexplained


def report(title, equal, differing):
    print(f"\n{title} (ICU {icu.ICU_VERSION}, Unicode {icu.UNICODE_VERSION}; Python {sys.version.split()[0]}):")
    for name in FUNCTIONS:
        reasons = ", ".join(f"{count} {why}" for why, count in differing[name].most_common())
        print(f"  {name}: {equal[name]} equal, {sum(differing[name].values())} differ ({reasons or '-'})")


def test_every_assigned_code_point_keys_as_before_where_the_unicode_data_agree():
    code_points = list(every_assigned_code_point())
    equal, differing, unexplained = compare(code_points, FUNCTIONS)
    report(f"{len(code_points)} code points", equal, differing)

    assert len(code_points) > 290_000
    assert unexplained[:20] == []


def test_the_suites_look_alike_names_and_emails_key_as_before_where_the_unicode_data_agree():
    names = {name: FUNCTIONS[name] for name in FUNCTIONS if name != "normalize_email_key"}
    name_equal, name_differing, name_unexplained = compare(NAMES, names)
    emails = {"normalize_email_key": (lambda email: email, old_normalize_email_key, identifiers.normalize_email_key)}
    email_equal, _, email_unexplained = compare(EMAILS, emails)

    assert name_unexplained == email_unexplained == []
    assert email_equal["normalize_email_key"] == len(EMAILS)
    for name in names:
        assert name_equal[name] + sum(name_differing[name].values()) == len(NAMES)


@pytest.mark.parametrize("language", ["en", "ja", "tr", "fr"])
def test_script_names_are_icus_in_each_language_of_the_site(language):
    display = icu.LocaleDisplayNames.createInstance(icu.Locale(language))
    codes = {"Latn", "Cyrl", "Grek", "Arab", "Hani", "Hira", "Kana", "Hang", "Hebr", "Thai", "Deva", "Zyyy"}

    assert {code: unicode_data.script_name(code, language) for code in codes} == {
        code: display.scriptDisplayName(code) for code in codes
    }
