"""The app ships translations (French) of its messages, compiled, inside the package
(that each compiled catalogue matches its source: tests/web/test_i18n.py)."""

import pytest
from django.test import Client
from django.utils import translation

from accounts.adapter import DefaultAccountAdapter
from tests.web import signup


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
