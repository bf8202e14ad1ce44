"""Profile, email/username/password change and deletion on DynamoDB Local."""

import pytest
from django.test import Client

from accounts import store
from accounts.tables import dynamodb_client
from tests.mail import link_in, mails_to, path_of
from tests.support import answer_before_call, cancellation
from tests.web import OTHER_PASSWORD, PASSWORD, login, messages_of, signed_up_client, signup, stored_accounts

pytestmark = pytest.mark.dynamodb_local


@pytest.fixture
def ada_client(ddb):
    """A browser logged in as ada (ada@example.com)."""
    return signed_up_client("ada@example.com", "ada")


@pytest.fixture
def grace(ddb):
    """A second account, grace (grace@example.com)."""
    signup(Client(), "grace@example.com", "grace")
    return store.get_by_username("grace")


def ada():
    return store.get_by_username("ada")


# Profile


def test_profile_shows_email_and_username(ada_client):
    response = ada_client.get("/accounts/profile/")

    assert response.status_code == 200
    html = response.content.decode()
    assert "<dd>ada@example.com " in html
    assert "<dd>ada " in html


@pytest.mark.parametrize(
    "url", ["/accounts/profile/", "/accounts/email/", "/accounts/username/", "/accounts/password/", "/accounts/delete/"]
)
def test_account_pages_require_login(ddb, url):
    response = Client().get(url)

    assert response.status_code == 302
    assert response["Location"] == f"/accounts/login/?next={url}"


@pytest.mark.parametrize(
    ("url", "fields"),
    [
        ("/accounts/email/", ["email", "password"]),
        ("/accounts/username/", ["username", "password"]),
        ("/accounts/password/", ["old_password", "new_password1", "new_password2"]),
        ("/accounts/delete/", ["password"]),
    ],
)
def test_account_forms_have_the_fixed_fields(ada_client, url, fields):
    response = ada_client.get(url)

    assert response.status_code == 200
    assert list(response.context["form"].fields) == fields


# Email change


def test_email_change_moves_the_account_to_the_new_email_once_the_link_is_opened(ada_client):
    response = ada_client.post("/accounts/email/", {"email": "lovelace@example.com", "password": PASSWORD})

    assert response.status_code == 302
    assert response["Location"] == "/accounts/profile/"
    profile = ada_client.get("/accounts/profile/")
    assert messages_of(profile) == [
        "We sent a link to lovelace@example.com. Your address changes when you open it; until then it stays as it is."
    ]
    assert "Change to lovelace@example.com pending" in profile.content.decode()
    assert ada().email == "ada@example.com"
    ada_client.post(path_of(link_in(mails_to("lovelace@example.com")[0])))
    profile = ada_client.get("/accounts/profile/")
    assert "lovelace@example.com" in profile.content.decode() and "pending" not in profile.content.decode()
    assert store.get_by_email("lovelace@example.com").username == "ada"
    assert store.get_by_email("ada@example.com") is None


def test_old_email_is_free_for_a_new_signup_after_a_change(ada_client):
    ada_client.post("/accounts/email/", {"email": "lovelace@example.com", "password": PASSWORD})
    ada_client.post(path_of(link_in(mails_to("lovelace@example.com")[0])))

    response = signup(Client(), "ada@example.com", "newcomer")

    assert response.status_code == 302


def test_email_change_page_starts_with_the_current_email(ada_client):
    form = ada_client.get("/accounts/email/").context["form"]

    assert form["email"].value() == "ada@example.com"


def test_email_change_to_a_taken_email_gets_email_error(ada_client, grace):
    response = ada_client.post("/accounts/email/", {"email": "GRACE@example.com", "password": PASSWORD})

    assert response.status_code == 200
    form = response.context["form"]
    assert form.has_error("email", "email_taken")
    assert 'value="GRACE@example.com"' in response.content.decode()
    assert ada().email == "ada@example.com"


def test_email_change_with_wrong_password_is_refused(ada_client):
    response = ada_client.post("/accounts/email/", {"email": "lovelace@example.com", "password": OTHER_PASSWORD})

    form = response.context["form"]
    assert form.has_error("password", "password_incorrect")
    assert ada().email == "ada@example.com"


def test_email_change_to_an_invalid_or_overlong_email_is_refused(ada_client):
    invalid = ada_client.post("/accounts/email/", {"email": "nope", "password": PASSWORD})
    overlong = ada_client.post("/accounts/email/", {"email": "a" * 250 + "@x.io", "password": PASSWORD})

    assert invalid.context["form"].has_error("email", "invalid")
    assert overlong.context["form"].has_error("email", "max_length")


def test_email_change_to_a_case_variant_of_ones_own_email_keeps_the_account(ada_client):
    response = ada_client.post("/accounts/email/", {"email": "Ada@Example.com", "password": PASSWORD})

    assert response.status_code == 302
    assert ada().email == "Ada@example.com"


def test_email_change_when_busy_shows_try_again(ada_client):
    answer_before_call(dynamodb_client(), [cancellation("TransactionConflict", "None", "None")] * 4)

    response = ada_client.post("/accounts/email/", {"email": "lovelace@example.com", "password": PASSWORD})

    assert response.status_code == 200
    assert response.context["form"].has_error("__all__", "busy")
    assert ada().email == "ada@example.com"


def test_email_change_of_an_account_changed_meanwhile_shows_stale_error(ada_client):
    answer_before_call(dynamodb_client(), [cancellation("ConditionalCheckFailed", "None", "None")])

    response = ada_client.post("/accounts/email/", {"email": "lovelace@example.com", "password": PASSWORD})

    assert response.context["form"].has_error("__all__", "stale")


# Username change


def test_username_change_moves_the_account_to_the_new_username(ada_client):
    response = ada_client.post("/accounts/username/", {"username": "lovelace", "password": PASSWORD})

    assert response.status_code == 302
    assert messages_of(ada_client.get("/accounts/profile/")) == ["Your username is now lovelace."]
    assert store.get_by_username("lovelace").email == "ada@example.com"
    assert store.get_by_username("ada") is None


@pytest.mark.parametrize("variant", ["grace", "GRACE", "ｇｒａｃｅ"])
def test_username_change_to_a_taken_username_gets_username_error(ada_client, grace, variant):
    response = ada_client.post("/accounts/username/", {"username": variant, "password": PASSWORD})

    assert response.context["form"].has_error("username", "username_taken")
    assert ada().username == "ada"


@pytest.mark.parametrize(
    ("username", "code"),
    [
        ("ada@home", "username_at"),
        ("ad\u200ba", "username_invisible"),
        ("a" * 151, "max_length"),
        ("a b", "username_invalid"),
    ],
)
def test_username_change_follows_the_signup_rules(ada_client, username, code):
    response = ada_client.post("/accounts/username/", {"username": username, "password": PASSWORD})

    assert response.context["form"].has_error("username", code)


def test_username_change_with_wrong_password_is_refused(ada_client):
    response = ada_client.post("/accounts/username/", {"username": "lovelace", "password": OTHER_PASSWORD})

    assert response.context["form"].has_error("password", "password_incorrect")


def test_login_with_the_new_username_works_after_a_change(ada_client):
    ada_client.post("/accounts/username/", {"username": "Lovelace", "password": PASSWORD})

    assert login(Client(), "lovelace").status_code == 302
    assert login(Client(), "ada").status_code == 200


# Password change


def change_password(client, old=PASSWORD, new=OTHER_PASSWORD):
    return client.post("/accounts/password/", {"old_password": old, "new_password1": new, "new_password2": new})


def test_password_change_keeps_this_session_and_the_new_password_logs_in(ada_client):
    response = change_password(ada_client)

    assert response.status_code == 302
    profile = ada_client.get("/accounts/profile/")
    assert profile.status_code == 200
    assert messages_of(profile) == ["Your password has been changed. Your other sessions have been logged out."]
    assert login(Client(), "ada", OTHER_PASSWORD).status_code == 302
    assert login(Client(), "ada", PASSWORD).status_code == 200


def test_password_change_ends_every_other_session(ada_client):
    other_session = Client()
    login(other_session, "ada")
    assert other_session.get("/accounts/profile/").status_code == 200

    change_password(ada_client)

    response = other_session.get("/accounts/profile/")
    assert response.status_code == 302
    assert response["Location"].startswith("/accounts/login/")


def test_password_change_mails_a_notice_to_the_accounts_address(ada_client):
    change_password(ada_client)

    (notice,) = mails_to("ada@example.com")
    assert notice.subject == "Your password was changed on testserver"
    assert "was changed" in notice.body and "If this was not you" in notice.body
    assert path_of(link_in(notice)) == "/accounts/password/reset/"


def test_password_change_with_wrong_old_password_is_refused(ada_client):
    response = change_password(ada_client, old=OTHER_PASSWORD)

    assert response.context["form"].has_error("old_password", "password_incorrect")
    assert login(Client(), "ada", PASSWORD).status_code == 302


def test_password_change_runs_the_password_validators(ada_client):
    response = change_password(ada_client, new="12345678")

    assert response.context["form"].has_error("new_password2", "password_entirely_numeric")


# Deletion


def test_delete_removes_the_account_logs_out_and_frees_email_and_username(ada_client):
    response = ada_client.post("/accounts/delete/", {"password": PASSWORD})

    assert response.status_code == 302
    assert response["Location"] == "/"
    home = ada_client.get("/")
    assert not home.context["user"].is_authenticated
    assert messages_of(home) == ["Your account has been deleted."]
    assert stored_accounts() == []
    assert signup(Client(), "ada@example.com", "ada").status_code == 302


def test_delete_ends_every_other_session(ada_client):
    other_session = Client()
    login(other_session, "ada")

    ada_client.post("/accounts/delete/", {"password": PASSWORD})

    assert other_session.get("/accounts/profile/").status_code == 302


def test_delete_with_wrong_password_keeps_the_account(ada_client):
    response = ada_client.post("/accounts/delete/", {"password": OTHER_PASSWORD})

    assert response.status_code == 200
    assert response.context["form"].has_error("password", "password_incorrect")
    assert ada() is not None


def test_delete_when_busy_shows_try_again_and_keeps_the_account(ada_client):
    answer_before_call(dynamodb_client(), [cancellation("TransactionConflict", "None", "None")] * 4)

    response = ada_client.post("/accounts/delete/", {"password": PASSWORD})

    assert response.context["form"].has_error("__all__", "busy")
    assert ada() is not None
