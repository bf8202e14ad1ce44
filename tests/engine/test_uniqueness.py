"""Lock keys: normalization, unambiguous encoding, and values that cannot become keys."""

from decimal import Decimal

import pytest

from accounts.examples import Player
from accounts.exceptions import InvalidUniqueValue
from accounts.uniqueness import UniqueConstraint, encode_component, normalize_exact, normalize_text


class Item:
    def __init__(self, **values):
        self.__dict__.update(values)


EMAIL = UniqueConstraint("email", namespace="EMAIL")


def test_email_lock_key_is_the_normalized_email():
    assert EMAIL.lock_key(Item(email="  Ada@X.io ")) == "UNIQ#EMAIL#ada@x.io"


def test_case_and_full_width_variants_share_one_key():
    handle = UniqueConstraint("username", namespace="HANDLE")
    keys = {handle.lock_key(Item(username=name)) for name in ("ada", "ADA", "ａｄａ", " Ada ")}
    assert keys == {"UNIQ#HANDLE#ada"}


def test_normalize_text_is_nfkc_strip_casefold():
    assert normalize_text(" Straße ") == "strasse"
    assert normalize_text("ﬁ") == "fi"


def test_composite_components_with_hash_never_share_a_key():
    pair = UniqueConstraint("left", "right", namespace="PAIR")
    first = pair.lock_key(Item(left="a#b", right="c"))
    second = pair.lock_key(Item(left="a", right="b#c"))
    assert first != second
    assert first == "UNIQ#PAIR#a%23b#c"
    assert second == "UNIQ#PAIR#a#b%23c"


def test_percent_is_escaped_so_escapes_cannot_be_forged():
    assert encode_component("a%23b") == "a%2523b"
    assert encode_component("a%23b") != encode_component("a#b")


def test_scoped_key_keeps_scope_exact_and_puts_it_first():
    uniform = UniqueConstraint("number", scope=("team",), namespace="UNIFORM", normalizer=normalize_exact)
    assert uniform.lock_key(Item(team="Team-001", number=18)) == "UNIQ#UNIFORM#Team-001#18"
    assert uniform.key_for("Team-001", 18) == "UNIQ#UNIFORM#Team-001#18"


def test_empty_value_is_an_error_naming_the_field():
    with pytest.raises(InvalidUniqueValue) as raised:
        EMAIL.lock_key(Item(email="   "))
    assert raised.value.fields == {"email"}
    assert raised.value.code == "empty"


def test_empty_value_takes_no_lock_when_allowed():
    phone = UniqueConstraint("phone", namespace="PHONE", allow_empty=True)
    assert phone.lock_key(Item(phone=None)) is None
    assert phone.lock_key(Item(phone="")) is None


def test_zero_is_not_empty():
    number = UniqueConstraint("number", namespace="N", normalizer=normalize_exact)
    assert number.lock_key(Item(number=0)) == "UNIQ#N#0"


def test_key_over_2048_bytes_is_a_too_long_error():
    prefix = len("UNIQ#EMAIL#")
    assert len(EMAIL.lock_key(Item(email="a" * (2048 - prefix))).encode()) == 2048
    with pytest.raises(InvalidUniqueValue) as raised:
        EMAIL.lock_key(Item(email="a" * (2049 - prefix)))
    assert raised.value.code == "too_long"
    assert raised.value.fields == {"email"}


def test_multibyte_characters_count_in_bytes():
    prefix = len("UNIQ#EMAIL#")
    with pytest.raises(InvalidUniqueValue):
        EMAIL.lock_key(Item(email="é" * ((2048 - prefix) // 2 + 1)))


def test_namespace_may_not_contain_the_separator():
    with pytest.raises(ValueError):
        UniqueConstraint("x", namespace="A#B")


@pytest.mark.parametrize("number", [18, 18.0, Decimal("18.00"), Decimal("1.8E+1")])
def test_a_number_has_one_key_whatever_its_python_form(number):
    constraint = Player.unique_constraints[0]
    assert constraint.key_for("team-001", number) == "UNIQ#UNIFORM#team-001#18"


@pytest.mark.parametrize(
    ("number", "as_dynamodb_returns_it"),
    [(1.5, "1.5"), (Decimal("1.50"), "1.5"), (1e2, "100"), (-0.0, "0"), (Decimal("1E-7"), "0.0000001"), (-7, "-7")],
)
def test_numbers_are_keyed_as_dynamodb_returns_them(number, as_dynamodb_returns_it):
    assert normalize_exact(number) == as_dynamodb_returns_it


def test_text_that_looks_like_a_number_stays_text():
    assert normalize_exact("18.0") == "18.0"
    assert normalize_exact(True) == "True"


@pytest.mark.parametrize("value", ["a@\udcff\udcffb.com", "\ud800", "x\udfffy"])
def test_a_lone_surrogate_is_an_invalid_value_not_an_encoding_crash(value):
    constraint = UniqueConstraint("email", namespace="EMAIL")
    with pytest.raises(InvalidUniqueValue) as raised:
        constraint.key_for(value)
    assert raised.value.fields == {"email"} and raised.value.code == "invalid"
