"""Password reset by email on DynamoDB Local: no enumeration, mail only to a verified
address, Django's set-password form, expiry, single use, other sessions ended."""

from datetime import timedelta

import pytest
from django.test import Client

from accounts import store
from accounts.password_reset import token_generator
from tests.mail import link_in, mails_to, path_of
from tests.web import PASSWORD, login, signed_up_client, signup

pytestmark = pytest.mark.dynamodb_local

NEW_PASSWORD = "Velvet-Compass-Orchard-5"


def ask_reset(client, email):
    return client.post("/accounts/password/reset/", {"email": email})


def set_new_password(client, link_path, password=NEW_PASSWORD):
    """Open the link (Django moves the token into the session) and post the new password."""
    form_page = client.get(link_path, follow=True)
    assert form_page.context["validlink"], "the link should be valid"
    return client.post(form_page.redirect_chain[-1][0], {"new_password1": password, "new_password2": password})


@pytest.fixture
def ada_client(ddb):
    return signed_up_client("ada@example.com", "ada")


def test_the_same_answer_whether_or_not_the_address_is_known(ada_client):
    known = ask_reset(Client(), "ada@example.com")
    unknown = ask_reset(Client(), "nobody@example.com")

    assert known.status_code == unknown.status_code == 302
    assert known["Location"] == unknown["Location"] == "/accounts/password/reset/done/"
    assert len(mails_to("ada@example.com")) == 1
    assert mails_to("nobody@example.com") == []


def test_no_mail_to_an_unverified_address(ddb, settings):
    settings.ACCOUNTS_EMAIL_VERIFICATION = "mandatory"
    signup(Client(), "victim@example.com", "squatter")
    before = len(mails_to("victim@example.com"))

    response = ask_reset(Client(), "victim@example.com")

    assert response["Location"] == "/accounts/password/reset/done/"
    assert len(mails_to("victim@example.com")) == before


def test_the_link_sets_a_new_password_with_djangos_form_and_validators(ada_client):
    ask_reset(Client(), "ada@example.com")
    path = path_of(link_in(mails_to("ada@example.com")[0]))
    client = Client()

    weak = set_new_password(client, path, "123")
    assert weak.context["form"].has_error("new_password2")
    done = set_new_password(Client(), path)

    assert done["Location"] == "/accounts/password/reset/complete/"
    assert login(Client(), "ada", NEW_PASSWORD).status_code == 302
    assert login(Client(), "ada", PASSWORD).status_code == 200


def test_a_used_link_fails_because_the_password_hash_changed(ada_client):
    ask_reset(Client(), "ada@example.com")
    path = path_of(link_in(mails_to("ada@example.com")[0]))
    set_new_password(Client(), path)

    again = Client().get(path, follow=True)

    assert again.context["validlink"] is False
    # No last_login on this user model: the password hash is what ends the token.
    assert not hasattr(store.get_by_username("ada"), "last_login")


@pytest.mark.parametrize("minutes_later, valid", [(30, True), (61, False)])
def test_the_link_expires_after_password_reset_timeout(ada_client, settings, monkeypatch, minutes_later, valid):
    settings.PASSWORD_RESET_TIMEOUT = 3600
    ask_reset(Client(), "ada@example.com")
    path = path_of(link_in(mails_to("ada@example.com")[0]))
    opened_at = token_generator._now() + timedelta(minutes=minutes_later)
    monkeypatch.setattr(token_generator, "_now", lambda: opened_at)

    response = Client().get(path, follow=True)

    assert response.context["validlink"] is valid


def test_a_reset_mails_a_notice_to_the_accounts_address(ada_client):
    ask_reset(Client(), "ada@example.com")

    set_new_password(Client(), path_of(link_in(mails_to("ada@example.com")[0])))

    link_mail, notice = mails_to("ada@example.com")
    assert notice.subject == "Your password was reset on testserver"
    assert "was reset" in notice.body and "If this was not you" in notice.body
    assert path_of(link_in(notice)) == "/accounts/password/reset/"


def test_a_reset_ends_every_other_session(ada_client):
    ask_reset(Client(), "ada@example.com")
    path = path_of(link_in(mails_to("ada@example.com")[0]))

    set_new_password(Client(), path)

    assert ada_client.get("/accounts/profile/").status_code == 302


def test_a_forged_uid_or_token_is_an_invalid_link_page(ada_client):
    for path in ("/accounts/password/reset/bm9ib2R5/abc-123/", "/accounts/password/reset/%%%/x-y/"):
        response = Client().get(path, follow=True)
        assert response.status_code == 200
        assert response.context["validlink"] is False


def test_a_busy_table_while_setting_the_password_is_a_form_error_not_a_500(ada_client):
    from accounts.tables import dynamodb_client
    from tests.support import answer_before_call, cancellation

    ask_reset(Client(), "ada@example.com")
    path = path_of(link_in(mails_to("ada@example.com")[0]))
    answer_before_call(dynamodb_client(), [cancellation("TransactionConflict")] * 4)

    response = set_new_password(Client(), path)

    assert response.status_code == 200
    assert response.context["form"].has_error("__all__", "busy")
    assert login(Client(), "ada", PASSWORD).status_code == 302
