"""The Unicode rules of identifiers (UTS #39 data pinned in accounts.unicode_data, idna's UTS
#46), without a table."""

import subprocess
import sys

import idna.idnadata
import pytest
import unicodedata2

from accounts import identifiers
from accounts.adapter import DefaultAccountAdapter
from accounts.forms import SignupForm, UsernameChangeForm
from accounts.models import User
from accounts.tables import Account
from tests.web import PASSWORD

HANGUL_FILLERS = ["\u3164", "\u115f", "\uffa0"]
CYRILLIC_A = "\u0430"
GREEK_OMICRON = "\u03bf"


def signup_form(email="x@example.com", username="someone"):
    return SignupForm(data={"email": email, "username": username, "password1": PASSWORD, "password2": PASSWORD})


def username_errors(username):
    return [error.code for error in signup_form(username=username).errors.as_data().get("username", ())]


def email_errors(email):
    return [error.code for error in signup_form(email=email).errors.as_data().get("email", ())]


def test_key_version_names_only_the_rules_and_the_pinned_unicode_versions():
    assert identifiers.KEY_VERSION == "rules-2+unicode-18.0.0+uts39-17.0.0"
    assert identifiers.UNICODE_VERSION == unicodedata2.unidata_version == idna.idnadata.__version__


def test_keys_never_read_the_running_pythons_unicode_data():
    # The running Python's unicodedata (14.0 on 3.11, 15.1 on 3.13) plays no part: in a
    # process where reading it fails, the keys of U+1E030 (Unicode 15.0) and of an
    # internationalized domain come out as on every host.
    code = """
import sys, types
stub = types.ModuleType("unicodedata")
def refuse(name):
    raise AssertionError(f"the running Python's unicodedata.{name} was read")
stub.__getattr__ = refuse
sys.modules["unicodedata"] = stub
from accounts import identifiers as i
print(i.KEY_VERSION, i.username_skeleton_key("p\\U0001E030ypal"), i.normalize_email_key("A@B\\u00fccher.example"))
print(i.mixed_scripts("p\\U0001E030ypal"), i.unicode_domain("xn--bcher-kva.example"))
"""
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert result.stdout.splitlines() == [
        f"{identifiers.KEY_VERSION} paypal a@xn--bcher-kva.example",
        "['Latin', 'Cyrillic'] bücher.example",
    ]


def test_a_modifier_letter_cyrillic_a_is_the_cyrillic_a_it_stands_for_on_every_host():
    # Issue 36's example: U+1E030 is a Cyrillic а after NFKC (Unicode 15.0 and later).
    assert identifiers.normalize_username_key("p\U0001e030ypal") == f"p{CYRILLIC_A}ypal"
    assert identifiers.username_skeleton_key("p\U0001e030ypal") == identifiers.username_skeleton_key("paypal")
    assert username_errors("p\U0001e030ypal") == ["username_mixed_scripts"]


def test_cyrillic_a_admin_has_the_skeleton_of_latin_admin():
    assert identifiers.skeleton(f"{CYRILLIC_A}dmin") == identifiers.skeleton("admin")


def test_an_all_cyrillic_look_alike_has_the_skeleton_of_the_latin_word():
    assert identifiers.skeleton("\u0441\u043e\u0441\u043e") == identifiers.skeleton("coco")  # сосо


@pytest.mark.parametrize("name", ["İstanbul", "ISTANBUL", "istanbul", "İSTANBUL"])
def test_turkish_dotted_capital_i_is_the_same_name_as_i(name):
    assert identifiers.normalize_username_key(name) == "istanbul"


def test_dotless_i_is_another_name_with_the_same_skeleton():
    assert identifiers.normalize_username_key("ıstanbul") != identifiers.normalize_username_key("istanbul")
    assert identifiers.username_skeleton_key("ıstanbul") == identifiers.username_skeleton_key("İstanbul")


def test_a_dot_above_is_kept_where_it_is_not_redundant():
    # On an "a" the dot is a letter of its own (ȧ), not a casing artefact.
    assert identifiers.normalize_username_key("a\u0307") == "ȧ"


def test_the_u_label_and_a_label_of_a_domain_give_one_email_key():
    typed = identifiers.normalize_email_key("User@Bücher.Example")
    assert typed == identifiers.normalize_email_key("user@xn--bcher-kva.example") == "user@xn--bcher-kva.example"


def test_an_email_key_of_a_domain_idna_refuses_keeps_its_folded_spelling():
    assert identifiers.normalize_email_key("A@Exa_mple.com") == "a@exa_mple.com"


@pytest.mark.parametrize(
    "character", [*HANGUL_FILLERS, "\ufe0f", "\U000e0100", "\u200b", "\u180e", "\u034f"], ids=ascii
)
def test_invisible_code_points_come_from_the_unicode_properties(character):
    assert identifiers.invisible_characters(f"ada{character}") == [character]


def test_braille_blank_is_outside_the_identifier_profile_and_named():
    assert identifiers.unusual_characters("ada\u2800") == ["\u2800"]
    assert identifiers.describe_character("\u2800") == "U+2800 BRAILLE PATTERN BLANK"


@pytest.mark.parametrize("name", ["山田タロウ", "やまだtaro", "ヤマダ山田taro", "Ωμέγα", "Иван", "محمد", "ada_l"])
def test_highly_restrictive_script_mixes_are_allowed(name):
    assert identifiers.mixed_scripts(name) == []


@pytest.mark.parametrize(
    "name, scripts",
    [(f"{CYRILLIC_A}dmin", ["Cyrillic", "Latin"]), (f"ex{GREEK_OMICRON}mple", ["Latin", "Greek"])],
)
def test_other_script_mixes_are_named(name, scripts):
    assert identifiers.mixed_scripts(name) == scripts


@pytest.mark.parametrize("filler", HANGUL_FILLERS, ids=ascii)
def test_a_hangul_filler_in_or_as_a_username_is_refused(filler):
    assert username_errors(f"ada{filler}") == ["username_invisible"]
    assert username_errors(filler) == ["username_invisible"]


@pytest.mark.parametrize("selector", ["\ufe0e", "\ufe0f", "\U000e0100"], ids=ascii)
def test_a_variation_selector_is_refused(selector):
    assert username_errors(f"ada{selector}") == ["username_invisible"]


def test_braille_blank_is_refused_with_its_name_in_the_message():
    message = "A username cannot contain U+2800 BRAILLE PATTERN BLANK."
    assert signup_form(username="ada\u2800").errors["username"] == [message]


def test_cyrillic_a_in_a_latin_name_is_refused_naming_both_scripts():
    message = "A username cannot mix these writing systems: Cyrillic, Latin."
    assert signup_form(username=f"{CYRILLIC_A}dmin").errors["username"] == [message]


@pytest.mark.parametrize(
    "name, code",
    [
        (".", "username_no_letter_or_digit"),
        ("._-", "username_no_letter_or_digit"),
        ("12345", "username_digits_only"),
        ("1.2-3", "username_digits_only"),
        ("١٢٣", "username_digits_only"),
    ],
)
def test_a_username_needs_a_letter(name, code):
    assert username_errors(name) == [code]


@pytest.mark.parametrize("name", ["admin", "Admin", "ADMIN", "adrnin", "Support", "postmaster", "no-reply", "ｒｏｏｔ"])
def test_reserved_names_and_their_look_alikes_are_refused(name):
    assert username_errors(name) == ["username_reserved"]


def test_the_reserved_list_is_the_setting(settings):
    settings.ACCOUNTS_USERNAME_BLACKLIST = ["ada"]
    assert username_errors("Ada") == ["username_reserved"]
    assert username_errors("admin") == []


def test_names_that_merely_contain_a_reserved_word_are_allowed():
    assert username_errors("adminton") == []
    assert username_errors("rootbeer") == []


def test_changing_to_a_reserved_name_is_refused_too():
    user = User.from_account(Account(PK="ACCT#x", email="x@example.com", username="x", password="!"))
    form = UsernameChangeForm(user, data={"username": "support", "password": "irrelevant"})
    assert form.has_error("username", "username_reserved")


@pytest.mark.parametrize("name", ["山田タロウ", "ada.lovelace", "İstanbul", "ıstanbul", "r2d2", "Ωμέγα"])
def test_real_names_in_many_scripts_pass(name):
    assert username_errors(name) == []


def test_a_domain_label_mixing_latin_and_greek_is_refused():
    assert email_errors(f"g@ex{GREEK_OMICRON}mple.com") == ["email_mixed_scripts"]


def test_the_a_label_of_a_mixed_script_domain_is_refused_too():
    assert email_errors(f"g@{identifiers.ascii_domain(f'ex{GREEK_OMICRON}mple.com')}") == ["email_mixed_scripts"]


@pytest.mark.parametrize(
    "email", ["user@bücher.example", "user@xn--bcher-kva.example", "taro@例え.jp", "a@παράδειγμα.gr"]
)
def test_single_script_internationalized_domains_are_accepted(email):
    assert email_errors(email) == []


def test_the_email_is_stored_as_typed_not_as_its_key():
    form = signup_form(email="user@Bücher.example")
    assert form.is_valid()
    assert form.cleaned_data["email"] == "user@bücher.example"


def test_the_similar_message_is_the_issues_wording():
    message = DefaultAccountAdapter.error_messages["username_similar"]
    assert str(message) == "This username is too similar to an existing one."


def test_script_names_come_in_the_pages_language():
    assert identifiers.mixed_scripts(f"{CYRILLIC_A}dmin", "ja") == ["キリル文字", "ラテン文字"]
    assert identifiers.mixed_scripts(f"{CYRILLIC_A}dmin", "tr") == ["Kiril", "Latin"]


@pytest.mark.parametrize(
    "typed, existing",
    [
        ("sc0tt", "scott"),
        ("SC0TT", "scott"),
        ("coc0", "coco"),
        ("1ucy", "lucy"),
        ("paypal\u0301", "paypal"),  # paypaĺ: a combining acute
        ("paypa\u1e37", "paypal"),  # paypaḷ: l with a dot below
        ("\u03ac\u03bb\u03c6\u03b1", "\u03b1\u03bb\u03c6\u03b1"),  # Greek ά
        ("\u04e3\u0432\u0430\u043d", "\u0438\u0432\u0430\u043d"),  # Cyrillic ӣ (и with macron)
    ],
    ids=ascii,
)
def test_digits_and_marked_letters_share_the_look_alike_key_of_the_plain_name(typed, existing):
    assert identifiers.username_skeleton_key(typed) == identifiers.username_skeleton_key(existing)


@pytest.mark.parametrize("voiced, plain", [("\u304c", "\u304b"), ("\u30ac", "\u30ab"), ("\u3071", "\u306f")], ids=ascii)
def test_kana_with_voicing_marks_stay_distinct_names(voiced, plain):
    # が and か, ガ and カ, ぱ and は: the mark makes another letter.
    assert identifiers.username_skeleton_key(voiced) != identifiers.username_skeleton_key(plain)


def test_the_look_alike_key_is_the_skeleton_then_its_fold():
    assert identifiers.lookalike_key("SC0TT") == identifiers.fold_skeleton(identifiers.skeleton("SC0TT")) == "scott"


def test_a_digit_look_alike_of_a_reserved_name_is_reserved():
    assert username_errors("supp0rt") == ["username_reserved"]


@pytest.mark.parametrize("email", ['"ada"@example.com', '"ada.lovelace"@example.com'])
def test_a_quoted_local_part_is_refused(email):
    assert email_errors(email) == ["email_quoted"]


def test_a_local_part_over_64_characters_is_refused():
    assert email_errors(f"{'a' * 64}@example.com") == []
    assert email_errors(f"{'a' * 65}@example.com") == ["email_local_too_long"]
