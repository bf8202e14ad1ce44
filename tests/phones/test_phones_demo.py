"""The demo site prints each text in the terminal, as it prints mail: a phone number can be
verified on ``make run`` with the code the terminal shows."""

import pytest
from django.test import Client

from accounts.phones import store as phone_store
from project.adapter import DemoAdapter
from tests.sms import NUMBER, NUMBER_E164, PHONE_FIELDS, PHONE_METHODS

pytestmark = pytest.mark.dynamodb_local


def test_the_demo_texts_a_code_to_the_terminal_and_it_verifies_the_number(ddb, settings, capsys):
    settings.ACCOUNTS_SIGNUP_FIELDS = PHONE_FIELDS
    settings.ACCOUNTS_LOGIN_METHODS = PHONE_METHODS
    assert settings.ACCOUNTS_ADAPTER == "project.adapter.DemoAdapter"
    client = Client()
    page = client.get("/accounts/signup/")
    data = {"email": "ada@example.com", "phone": NUMBER, "password1": "Tangerine-Sky-Runner-7"}
    client.post("/accounts/signup/", {**data, "token": page.context["form"]["token"].value()})

    printed = capsys.readouterr().out
    assert f"SMS to {NUMBER_E164}\nYour verification code: " in printed
    code = printed.split("Your verification code: ")[1].split()[0]
    assert client.post("/accounts/phone/verify/", {"code": code}).status_code == 302
    assert phone_store.get_by_phone(NUMBER) is not None


def test_the_demos_login_code_text_says_what_it_is_for(capsys):
    DemoAdapter().send_verification_code_sms(None, NUMBER_E164, "ABCD2345", login=True)

    assert capsys.readouterr().out.startswith(f"SMS to {NUMBER_E164}\nYour login code: ABCD2345\n")
