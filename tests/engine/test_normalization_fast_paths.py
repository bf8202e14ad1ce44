"""The engine's create path skips work whose result is known: an ASCII email domain is
already its IDNA spelling, and an ASCII username has no dot above to drop. Each shortcut
gives exactly what the full path gives (issue 17: the engine's overhead per transaction)."""

import random
import string

import idna
import pytest

from accounts.identifiers import _drop_redundant_dots, ascii_domain, normalize_email_key
from accounts.uniqueness import normalize_text

TRICKY_DOMAINS = [
    "example.com",
    "example.com.",
    "a..b",
    "-a.com",
    "a-.com",
    "ab--c.com",
    "xn--abc.com",
    "xn--bcher-kva.example",
    "xn--ls8h.la",
    "x_y.com",
    "[192.0.2.1]",
    "a b.com",
    ".",
    "",
    "a" * 64 + ".com",
    "ex%ample.com",
]


def through_idna(value):
    """What normalize_email_key gave before the shortcut: IDNA on every domain."""
    local, at, domain = normalize_text(value).rpartition("@")
    if not at:
        return domain
    try:
        domain = ascii_domain(domain)
    except (idna.IDNAError, UnicodeError):
        pass
    return f"{local}@{domain}"


@pytest.mark.parametrize("domain", TRICKY_DOMAINS)
def test_an_ascii_domain_keys_as_idna_would_key_it(domain):
    for value in (f"ada@{domain}", f"Ada@{domain.upper()}", domain):
        assert normalize_email_key(value) == through_idna(value)


def test_random_ascii_domains_key_as_idna_would_key_them():
    chooser = random.Random(17)
    alphabet = string.ascii_letters + string.digits + "-._~!%+"
    for _ in range(20_000):
        domain = "".join(chooser.choice(alphabet) for _ in range(chooser.randint(0, 14)))
        value = f"x@{domain}"
        assert normalize_email_key(value) == through_idna(value), value


def test_a_non_ascii_domain_still_goes_through_idna():
    assert normalize_email_key("Ada@Bücher.Example") == "ada@xn--bcher-kva.example"


def test_an_ascii_name_has_no_dot_to_drop_and_a_turkish_one_still_loses_it():
    assert _drop_redundant_dots("istanbul") == "istanbul"
    assert _drop_redundant_dots(normalize_text("İstanbul")) == "istanbul"
