"""The pages take a mailed code instead of a link when ``ACCOUNTS_EMAIL_VERIFICATION_BY_CODE_ENABLED``
or ``ACCOUNTS_PASSWORD_RESET_BY_CODE_ENABLED`` is on, as the API does (the same flows):
"check your inbox" confirms the sign-up with its code, the profile's pending email change
takes the code mailed to the new address, and a reset asks for its code, then the new
password."""

import pytest
from django.test import Client

from accounts import store
from tests.mail import code_in, mails_to
from tests.web import OTHER_PASSWORD, PASSWORD, login, signed_up_client, signup

pytestmark = pytest.mark.dynamodb_local


def code_in_mail(address):
    return code_in(mails_to(address)[-1])


@pytest.fixture
def by_code(ddb, settings, mailoutbox):
    settings.ACCOUNTS_EMAIL_VERIFICATION = "mandatory"
    settings.ACCOUNTS_EMAIL_VERIFICATION_BY_CODE_ENABLED = True
    settings.ACCOUNTS_PASSWORD_RESET_BY_CODE_ENABLED = True
    return settings


def test_a_sign_up_confirmed_on_check_your_inbox_with_its_code_goes_on_logged_in(by_code):
    client = Client()
    assert signup(client)["Location"] == "/accounts/verify/sent/"

    page = client.get("/accounts/verify/sent/")
    confirmed = client.post("/accounts/verify/code/", {"code": code_in_mail("ada@example.com").lower()})

    assert 'name="code"' in page.content.decode()
    assert "/accounts/verify/" not in mails_to("ada@example.com")[-1].body
    # As allauth's verify_email stage: the browser that signed up is logged in once verified.
    assert confirmed.status_code == 302 and confirmed["Location"] == "/accounts/profile/"
    assert store.is_verified(store.get_by_username("ada"))
    assert client.get("/accounts/profile/").status_code == 200
    assert login(Client(), "ada").status_code == 302


def test_a_wrong_code_is_a_form_error_and_the_third_ends_it(by_code):
    client = Client()
    signup(client)
    code = code_in_mail("ada@example.com")

    answers = [
        client.post("/accounts/verify/code/", {"code": "BBBB-BBBB" if code != "BBBB-BBBB" else "CCCC-CCCC"})
        for _ in range(3)
    ]
    too_late = client.post("/accounts/verify/code/", {"code": code})

    assert [answer.status_code for answer in answers] == [400, 400, 400]
    assert answers[0].context["form"].has_error("code", "wrong_code")
    assert answers[2].context["form"].has_error("code", "no_tries_left")
    assert too_late.context["form"].has_error("code", "no_code")
    assert not store.is_verified(store.get_by_username("ada"))


def test_send_a_new_code_mails_one_that_works(by_code, settings):
    client = Client()
    signup(client)
    first = code_in_mail("ada@example.com")

    resent = client.post("/accounts/verify/sent/")
    second = code_in_mail("ada@example.com")

    assert resent["Location"] == "/accounts/verify/sent/"
    assert first != second
    assert client.post("/accounts/verify/code/", {"code": first}).status_code == 400
    assert client.post("/accounts/verify/code/", {"code": second}).status_code == 302
    assert store.is_verified(store.get_by_username("ada"))


def test_a_login_of_the_unverified_account_offers_its_code(by_code):
    signup(Client())
    client = Client()

    page = login(client, "ada")
    code = code_in_mail("ada@example.com")

    assert "/accounts/verify/sent/" in page.content.decode()
    assert client.post("/accounts/verify/code/", {"code": code}).status_code == 302
    assert store.is_verified(store.get_by_username("ada"))


def test_an_email_change_is_confirmed_with_the_code_on_its_page(by_code):
    by_code.ACCOUNTS_EMAIL_VERIFICATION = "none"
    client = signed_up_client()

    asked = client.post("/accounts/email/", {"email": "lovelace@example.com", "password": PASSWORD})
    profile = client.get("/accounts/profile/")
    code_page = client.get(asked["Location"])
    changed = client.post("/accounts/email/confirm/code/", {"code": code_in_mail("lovelace@example.com")})

    assert asked["Location"] == "/accounts/email/confirm/code/"
    assert "lovelace@example.com" in code_page.content.decode()
    assert "/accounts/email/confirm/code/" in profile.content.decode()
    assert changed.status_code == 302
    assert store.get_by_email("lovelace@example.com").username == "ada"


def test_a_password_is_reset_with_its_code_then_the_new_password(by_code):
    signed_up_client()
    store.verify_email(store.get_by_username("ada"))
    client = Client()

    asked = client.post("/accounts/password/reset/", {"email": "ada@example.com"})
    code_page = client.get(asked["Location"])
    typed = client.post("/accounts/password/reset/code/", {"code": code_in_mail("ada@example.com")})
    password_page = client.get(typed["Location"])
    reset = client.post(
        "/accounts/password/reset/code/", {"new_password1": OTHER_PASSWORD, "new_password2": OTHER_PASSWORD}
    )

    assert asked["Location"] == "/accounts/password/reset/code/"
    assert 'name="code"' in code_page.content.decode()
    assert 'name="new_password1"' in password_page.content.decode()
    assert reset["Location"] == "/accounts/password/reset/complete/"
    assert login(Client(), "ada", OTHER_PASSWORD).status_code == 302
    assert login(Client(), "ada", PASSWORD).status_code == 200


def test_a_reset_code_page_without_a_code_asks_for_one_and_refuses_a_guess(by_code):
    client = Client()

    page = client.get("/accounts/password/reset/code/")
    guessed = client.post("/accounts/password/reset/code/", {"code": "BCDF-GHJK"})

    assert 'name="code"' in page.content.decode()
    assert guessed.status_code == 400
    assert guessed.context["form"].has_error("code", "no_code")
