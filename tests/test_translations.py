"""The app ships translations (French) of its messages, compiled, inside the package."""

import ast
import gettext
from pathlib import Path

import pytest
from django.test import Client
from django.utils import translation

import accounts
from accounts.adapter import DefaultAccountAdapter
from tests.web import signup

LOCALE = Path(accounts.__file__).resolve().parent / "locale"


def po_entries(path):
    """``{msgid: msgstr}`` of a .po file's entries without plural forms (tests/test_i18n.py
    checks those) or contexts (ours have none)."""
    entries, entry, part = {}, {}, None
    for line in [*path.read_text(encoding="utf-8").splitlines(), ""]:
        if line.startswith(("msgid ", "msgstr ", "msgid_plural ", "msgstr[")):
            part, _, text = line.partition(" ")
            entry[part] = ast.literal_eval(text)
        elif line.startswith('"'):
            entry[part] += ast.literal_eval(line)
        elif not line.strip() and entry:
            if "msgid_plural" not in entry:
                entries[entry["msgid"]] = entry["msgstr"]
            entry = {}
    return entries


def test_compiled_french_catalog_matches_its_source():
    catalog = LOCALE / "fr" / "LC_MESSAGES"
    source = {msgid: msgstr for msgid, msgstr in po_entries(catalog / "django.po").items() if msgid}

    with open(catalog / "django.mo", "rb") as compiled:
        translations = gettext.GNUTranslations(compiled)

    assert source
    assert {msgid: translations.gettext(msgid) for msgid in source} == source


@pytest.mark.parametrize("catalog", ["error_messages", "success_messages"])
def test_every_adapter_message_has_a_french_translation(catalog):
    messages = getattr(DefaultAccountAdapter, catalog)
    with translation.override("en"):
        english = {code: str(message) for code, message in messages.items()}
    with translation.override("fr"):
        french = {code: str(message) for code, message in messages.items()}

    assert [code for code in messages if french[code] == english[code]] == []


def test_french_messages_keep_their_placeholders():
    with translation.override("fr"):
        welcome = DefaultAccountAdapter.success_messages["signed_up"] % {"username": "ada"}

    assert welcome == "Bienvenue, ada ! Votre compte est prêt."


@pytest.mark.dynamodb_local
def test_signup_collision_is_reported_in_french_on_a_french_site(ddb, settings):
    settings.LANGUAGE_CODE = "fr"
    signup(Client(), "ada@example.com", "ada")

    form = signup(Client(), "ada@example.com", "lovelace").context["form"]

    assert form.errors["email"] == ["Cette adresse e-mail est déjà utilisée."]
