"""The interface in Japanese, Turkish and French: complete catalogues that match what
``makemessages`` extracts, no unmarked template text, and pages in each language."""

import ast
import gettext
import html
import os
import re
import shutil
from pathlib import Path

import pytest
from django.core.management import call_command
from django.template.base import Lexer, TokenType
from django.test import Client
from django.utils import translation

import accounts
from tests.staff import client_as, make_account
from tests.web import PASSWORD, signup

APP = Path(accounts.__file__).resolve().parent
ROOT = APP.parent
LANGUAGES = ("ja", "tr", "fr")
CATALOGUES = {
    "app": APP / "locale",
    "demo": ROOT / "project" / "locale",
}
TEMPLATE_DIRS = [APP / "templates", ROOT / "templates"]
# Text a template may show untranslated: names, and literals staff read as code.
UNTRANSLATED = {"Dynamo Accounts", "LOCK"}
# Attributes a person reads or hears (screen readers) and so must be translated.
READ_ATTRIBUTES = re.compile(r'\b(?:aria-label|title|placeholder|alt)="([^"]*)"')
WORD = re.compile(r"[^\W\d_]{2,}")


def po_records(path):
    """The entries of a .po file as dicts: ``msgid``, ``msgstr`` (or ``msgid_plural`` and
    ``msgstr[0]``, ``msgstr[1]``... for an entry with plural forms) and ``flags`` (no
    contexts: ours have none)."""
    records, entry, part = [], {"flags": set()}, None
    for line in [*path.read_text(encoding="utf-8").splitlines(), ""]:
        if line.startswith("#,"):
            entry["flags"].update(flag.strip() for flag in line[2:].split(","))
        elif line.startswith(("msgid ", "msgstr ", "msgid_plural ", "msgstr[")):
            part, _, text = line.partition(" ")
            entry[part] = _unquote(text)
        elif line.startswith('"'):
            entry[part] += _unquote(line)
        elif not line.strip() and "msgid" in entry:
            records.append(entry)
            entry = {"flags": set()}
    return records


def po_entries(path):
    """``[(msgid, msgstr, flags)]`` of a .po file. An entry with plural forms gives a row
    per form: its msgid with the first form, its msgid_plural with each other form (with
    the only form in a language that has one)."""
    entries = []
    for record in po_records(path):
        if "msgid_plural" not in record:
            entries.append((record["msgid"], record["msgstr"], record["flags"]))
            continue
        forms = [record[key] for key in sorted(key for key in record if key.startswith("msgstr["))]
        entries.append((record["msgid"], forms[0], record["flags"]))
        entries.extend((record["msgid_plural"], form, record["flags"]) for form in forms[1:] or forms)
    return entries


def _unquote(text):
    # A PO string is a C string literal; Python reads the escapes .po files use the same way.
    return ast.literal_eval(text)


def catalogue(kind, language):
    return CATALOGUES[kind] / language / "LC_MESSAGES" / "django.po"


def extracted_msgids(tmp_path, source, **options):
    """The msgids ``makemessages`` extracts from a copy of ``source`` today."""
    copy = tmp_path / source.name
    shutil.copytree(source, copy, ignore=shutil.ignore_patterns("locale", "__pycache__"))
    (copy / "locale").mkdir()
    cwd = os.getcwd()
    os.chdir(copy)
    try:
        call_command("makemessages", locale=["ja"], keep_pot=True, verbosity=0, **options)
    finally:
        os.chdir(cwd)
    return {msgid for msgid, _, _ in po_entries(copy / "locale" / "django.pot") if msgid}


@pytest.mark.parametrize("language", LANGUAGES)
@pytest.mark.parametrize("kind", CATALOGUES)
def test_every_entry_is_translated_and_none_is_fuzzy(kind, language):
    entries = [(msgid, msgstr, flags) for msgid, msgstr, flags in po_entries(catalogue(kind, language)) if msgid]

    assert entries
    assert [msgid for msgid, msgstr, _ in entries if not msgstr] == []
    assert [msgid for msgid, _, flags in entries if "fuzzy" in flags] == []


@pytest.mark.parametrize("language", LANGUAGES)
@pytest.mark.parametrize("kind", CATALOGUES)
def test_compiled_catalogue_matches_its_source(kind, language):
    source = catalogue(kind, language)
    with open(source.with_suffix(".mo"), "rb") as compiled:
        translations = gettext.GNUTranslations(compiled)

    for record in po_records(source):
        if "msgid_plural" in record:
            for count in (0, 1, 2, 5):
                form = record[f"msgstr[{translations.plural(count)}]"]
                assert translations.ngettext(record["msgid"], record["msgid_plural"], count) == form, record["msgid"]
        elif record["msgid"]:
            assert translations.gettext(record["msgid"]) == record["msgstr"], record["msgid"]


@pytest.mark.parametrize("language", LANGUAGES)
@pytest.mark.parametrize("kind", CATALOGUES)
def test_translations_keep_every_placeholder(kind, language):
    placeholder = re.compile(r"%\(\w+\)[sd]")
    for msgid, msgstr, _ in po_entries(catalogue(kind, language)):
        assert sorted(placeholder.findall(msgstr)) == sorted(placeholder.findall(msgid)), msgid


def test_the_app_catalogues_hold_every_string_makemessages_finds(tmp_path):
    extracted = extracted_msgids(tmp_path, APP)

    assert "This username is too similar to an existing one." in extracted
    for language in LANGUAGES:
        translated = {msgid for msgid, msgstr, _ in po_entries(catalogue("app", language)) if msgstr}
        assert sorted(extracted - translated) == [], language


def test_the_demo_catalogues_hold_every_string_of_the_demo_templates(tmp_path):
    extracted = extracted_msgids(tmp_path, ROOT / "templates")

    assert "Welcome" in extracted
    for language in LANGUAGES:
        translated = {msgid for msgid, msgstr, _ in po_entries(catalogue("demo", language)) if msgstr}
        assert sorted(extracted - translated) == [], language


def unmarked_text(source):
    """Words a template shows outside ``{% translate %}`` / ``{% blocktranslate %}``."""
    shown, skipping = [], 0
    for token in Lexer(source).tokenize():
        if token.token_type == TokenType.BLOCK:
            name = token.contents.split()[0]
            if name in ("blocktranslate", "blocktrans", "comment"):
                skipping += 1
            elif name in ("endblocktranslate", "endblocktrans", "endcomment"):
                skipping -= 1
        if token.token_type == TokenType.TEXT and not skipping:
            shown.append(token.contents)
        else:
            # A tag or a variable: translated or data, never literal text.
            shown.append("{}")
    text = "".join(shown)
    found = [value for value in READ_ATTRIBUTES.findall(text) if WORD.search(value)]
    text = re.sub(r"<code>.*?</code>", " ", text, flags=re.S)
    text = html.unescape(re.sub(r"<[^>]*>", " ", text))
    for untranslated in UNTRANSLATED:
        text = text.replace(untranslated, " ")
    return found + WORD.findall(text)


def templates():
    return sorted(path for directory in TEMPLATE_DIRS for path in directory.rglob("*.html"))


@pytest.mark.parametrize("path", templates(), ids=lambda path: str(path.relative_to(ROOT)))
def test_every_template_string_is_marked_for_translation(path):
    assert unmarked_text(path.read_text(encoding="utf-8")) == []


def test_the_unmarked_text_check_finds_text_attributes_and_titles():
    source = '{% load i18n %}{% block title %}Hello{% endblock %}<a aria-label="Menu">{% translate "Ok" %}</a>'

    assert sorted(unmarked_text(source)) == ["Hello", "Menu"]


PAGES = {
    "ja": {"label": "メールアドレス", "button": "登録", "taken": "このメールアドレスはすでに使われています。"},
    "tr": {"label": "E-posta adresi", "button": "Kaydol", "taken": "Bu e-posta adresi zaten kullanılıyor."},
    "fr": {"label": "Adresse e-mail", "button": "S’inscrire", "taken": "Cette adresse e-mail est déjà utilisée."},
}


@pytest.mark.dynamodb_local
@pytest.mark.parametrize("language", PAGES)
def test_signup_page_in_the_browsers_language_with_a_translated_field_error(ddb, language):
    expected = PAGES[language]
    signup(Client(), "ada@example.com", "ada")
    client = Client(headers={"accept-language": f"{language},en;q=0.5"})

    page = client.get("/accounts/signup/").content.decode()
    refused = signup(client, "ada@example.com", "lovelace")

    assert f'lang="{language}"' in page
    assert expected["label"] in page and expected["button"] in page
    assert refused.context["form"].errors["email"] == [expected["taken"]]
    assert expected["taken"] in refused.content.decode()


@pytest.mark.dynamodb_local
def test_the_look_alike_error_is_translated(ddb):
    signup(Client(), "coco@example.com", "coco")
    client = Client(headers={"accept-language": "tr"})

    refused = signup(client, "other@example.com", "\u0441\u043e\u0441\u043e")

    similar = "Bu kullanıcı adı mevcut bir kullanıcı adına çok benziyor."
    assert refused.context["form"].errors["username"] == [similar]


def test_the_language_switcher_sets_the_language_of_the_next_pages():
    client = Client(headers={"accept-language": "fr"})

    assert "Se connecter" in client.get("/accounts/login/").content.decode()
    assert 'name="language"' in client.get("/").content.decode()
    client.post("/i18n/setlang/", {"language": "ja", "next": "/accounts/login/"})

    assert "パスワード" in client.get("/accounts/login/").content.decode()


def test_the_503_page_is_translated(settings):
    settings.ACCOUNTS_ENDPOINT_URL = "http://127.0.0.1:9"
    client = Client(headers={"accept-language": "ja"})

    response = client.post("/accounts/login/", {"username": "ada", "password": PASSWORD})

    assert response.status_code == 503
    assert "一時的に利用できません" in response.content.decode()


TURKISH_MONTHS = "Ocak|Şubat|Mart|Nisan|Mayıs|Haziran|Temmuz|Ağustos|Eylül|Ekim|Kasım|Aralık"


@pytest.mark.dynamodb_local
@pytest.mark.parametrize("language, created", [("ja", "年"), ("tr", TURKISH_MONTHS)])
def test_staff_pages_show_localized_dates(ddb, language, created):
    boss = make_account("boss@example.com", "boss", staff=True)
    client = client_as(boss, headers={"accept-language": language})

    page = client.get(f"/staff/accounts/{boss.id}/").content.decode()

    date = re.search(r"<time datetime=\"[^\"]+\">([^<]+)</time>", page).group(1)
    assert re.search(created, date), date
    assert {"ja": "アカウント項目", "tr": "Hesap öğesi"}[language] in page


STAFF_ANSWERS = {
    "en": {"ended": "Ended 1 session of boss.", "unknown": "Unknown flag or value."},
    "ja": {"ended": "boss のセッションを 1 件終了しました。", "unknown": "不明なフラグまたは値です。"},
    "tr": {"ended": "boss kullanıcısının 1 oturumu sonlandırıldı.", "unknown": "Bilinmeyen bayrak veya değer."},
}


@pytest.mark.dynamodb_local
@pytest.mark.parametrize("language", STAFF_ANSWERS)
def test_staff_answers_about_sessions_and_flags_are_translated(ddb, language):
    boss = make_account("boss@example.com", "boss", staff=True)
    client = client_as(boss, headers={"accept-language": language})

    ended = client.post(f"/staff/accounts/{boss.id}/sessions/end/", follow=True)
    unknown = client_as(boss, headers={"accept-language": language}).get(f"/staff/accounts/{boss.id}/flags/?flag=x")

    assert STAFF_ANSWERS[language]["ended"] in [str(message) for message in ended.context["messages"]]
    assert unknown.status_code == 400
    assert unknown.content.decode() == STAFF_ANSWERS[language]["unknown"]


BROWSER_ON_SYSTEM = {
    "en": "Firefox on Linux",
    "ja": "Linux の Firefox",
    "tr": "Linux üzerinde Firefox",
    "fr": "Firefox sous Linux",
}


@pytest.mark.parametrize("language", BROWSER_ON_SYSTEM)
def test_the_browser_of_a_session_is_described_in_the_language(language):
    from accounts.sessions import describe_user_agent

    firefox = "Mozilla/5.0 (X11; Linux x86_64; rv:127.0) Gecko/20100101 Firefox/127.0"
    with translation.override(language):
        assert describe_user_agent(firefox) == BROWSER_ON_SYSTEM[language]


@pytest.fixture(autouse=True)
def back_to_the_site_language():
    """A page in another language activates it for the thread (LocaleMiddleware), and
    nothing resets it: the tests that follow must not run in Turkish."""
    yield
    translation.deactivate()
