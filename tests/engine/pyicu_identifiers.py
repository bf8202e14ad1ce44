"""The implementation of accounts/identifiers.py before issue 36, over PyICU (ICU's UTS #39
data, Python's unicodedata, idna): the yardstick of tests/engine/test_identifiers_icu.py and
of the identifiers benchmark. Importing it needs PyICU."""

import unicodedata

import icu
import idna

from accounts.uniqueness import as_text

SKELETONS = icu.SpoofChecker()
RESTRICTION = icu.SpoofChecker()
RESTRICTION.setChecks(icu.USpoofChecks.RESTRICTION_LEVEL | icu.USpoofChecks.MIXED_NUMBERS)
RESTRICTION.setRestrictionLevel(icu.URestrictionLevel.HIGHLY_RESTRICTIVE)
ALLOWED = icu.UnicodeSet(SKELETONS.getRecommendedUnicodeSet())
INVISIBLE = icu.UnicodeSet(r"[[:Default_Ignorable_Code_Point:][:Cc:][:Cf:][:Cs:][:Co:][:Cn:][:Zl:][:Zp:]]")
DEFAULT_IGNORABLE = icu.UnicodeSet("[:Default_Ignorable_Code_Point:]")
SOFT_DOTTED = icu.UnicodeSet("[:Soft_Dotted:]")
NEUTRAL = {icu.UScriptCode.COMMON, icu.UScriptCode.INHERITED}
MARK_FOLDED = {icu.UScriptCode.LATIN, icu.UScriptCode.GREEK, icu.UScriptCode.CYRILLIC}
ICU_NFD = icu.Normalizer2.getNFDInstance()
DISPLAY = icu.LocaleDisplayNames.createInstance(icu.Locale("en"))


def old_normalize_text(value):
    return unicodedata.normalize("NFKC", as_text(value).strip()).casefold()


def old_skeleton(text):
    return SKELETONS.getSkeleton(0, text)


def old_lookalike_key(text):
    kept, base = [], None
    for character in unicodedata.normalize("NFD", old_skeleton(text).casefold()):
        if unicodedata.category(character) == "Mn":
            if base in MARK_FOLDED:
                continue
        else:
            base = icu.Script.getScript(ord(character)).getScriptCode()
        kept.append(character)
    return "".join(kept)


def old_normalize_username_key(value):
    text = old_normalize_text(value)
    if text.isascii():
        return text
    kept, after = [], False
    for character in unicodedata.normalize("NFD", text):
        combining = unicodedata.combining(character)
        if character == "\u0307" and after:
            continue
        if combining == 0:
            after = SOFT_DOTTED.contains(character)
        elif combining == 230:
            after = False
        kept.append(character)
    return unicodedata.normalize("NFC", "".join(kept))


def old_normalize_email_key(value):
    local, at, domain = old_normalize_text(value).rpartition("@")
    if not at or domain.isascii():
        return f"{local}{at}{domain}"
    try:
        domain = idna.encode(domain, uts46=True).decode("ascii")
    except (idna.IDNAError, UnicodeError):
        pass
    return f"{local}@{domain}"


def old_mixed_scripts(text):
    if RESTRICTION.check(text) == 0:
        return []
    codes = []
    for character in text:
        script = icu.Script.getScript(ord(character))
        if script.getScriptCode() not in NEUTRAL and script.getShortName() not in codes:
            codes.append(script.getShortName())
    return [DISPLAY.scriptDisplayName(code) for code in codes or ["Zyyy"]]


def old_username_skeleton_key(value):
    return old_lookalike_key(old_normalize_username_key(value))
