"""Login and logout on DynamoDB Local: username or email, any case, inactive accounts, CSRF."""

import pytest
from django.contrib.auth import authenticate
from django.contrib.auth.signals import user_logged_in
from django.test import Client

from accounts import store
from accounts.backends import AccountBackend
from accounts.models import User
from tests.web import OTHER_PASSWORD, PASSWORD, csrf_token_in, login, messages_of, signed_up_client, signup

pytestmark = pytest.mark.dynamodb_local


@pytest.fixture
def ada(ddb):
    """An account ada / ada@example.com, and a logged-out client."""
    signup(Client(), "Ada@Example.com", "Ada")
    return store.get_by_username("ada")


@pytest.mark.parametrize(
    "login_name", ["Ada", "ada", "ADA", "ａｄａ", "Ada@Example.com", "ada@example.com", "ADA@EXAMPLE.COM"]
)
def test_login_with_username_or_email_in_any_case_or_width(ada, login_name):
    client = Client()

    response = login(client, login_name)

    assert response.status_code == 302
    assert response["Location"] == "/accounts/profile/"
    profile = client.get("/accounts/profile/")
    assert profile.context["user"].pk == ada.id
    assert messages_of(profile) == ["You are logged in as Ada."]


def test_login_page_has_username_and_password_fields(ddb):
    response = Client().get("/accounts/login/")

    assert response.status_code == 200
    assert list(response.context["form"].fields) == ["username", "password"]


def test_login_with_wrong_password_is_refused_and_keeps_the_login_name(ada):
    response = login(Client(), "ada", OTHER_PASSWORD)

    assert response.status_code == 200
    form = response.context["form"]
    assert form.has_error("__all__", "invalid_login")
    html = response.content.decode()
    assert 'value="ada"' in html
    assert OTHER_PASSWORD not in html


def test_login_of_unknown_account_is_refused_with_the_same_error(ddb):
    response = login(Client(), "nobody")

    assert response.context["form"].has_error("__all__", "invalid_login")


def test_login_of_unknown_account_still_hashes_a_password(ddb, monkeypatch):
    hashed = []
    original = User.set_password
    monkeypatch.setattr(User, "set_password", lambda user, raw: hashed.append(raw) or original(user, raw))

    assert authenticate(None, username="nobody", password=PASSWORD) is None
    assert hashed == [PASSWORD]


def test_inactive_account_cannot_log_in(ada):
    store.update_account(ada, is_active=False)

    response = login(Client(), "ada")

    assert response.status_code == 200
    assert response.context["form"].has_error("__all__", "invalid_login")


def test_session_of_an_account_made_inactive_ends(ada):
    client = Client()
    login(client, "ada")

    store.update_account(store.get_by_username("ada"), is_active=False)

    response = client.get("/accounts/profile/")
    assert response.status_code == 302
    assert response["Location"].startswith("/accounts/login/")


def test_login_honours_a_safe_next_url(ada):
    client = Client()

    response = client.post("/accounts/login/?next=/accounts/email/", {"username": "ada", "password": PASSWORD})

    assert response["Location"] == "/accounts/email/"


def test_login_ignores_an_external_next_url(ada):
    response = Client().post("/accounts/login/?next=https://evil.example/", {"username": "ada", "password": PASSWORD})

    assert response["Location"] == "/accounts/profile/"


def test_login_required_page_sends_to_login_with_next(ddb):
    response = Client().get("/accounts/profile/")

    assert response.status_code == 302
    assert response["Location"] == "/accounts/login/?next=/accounts/profile/"


def test_login_form_allows_email_addresses_longer_than_a_username(ddb):
    form = Client().get("/accounts/login/").context["form"]

    assert form.fields["username"].widget.attrs["maxlength"] == 254


def test_logged_in_visitor_of_the_login_page_goes_to_the_profile(ada):
    client = Client()
    login(client, "ada")

    assert client.get("/accounts/login/")["Location"] == "/accounts/profile/"


def test_django_last_login_receiver_is_not_connected():
    assert user_logged_in.disconnect(dispatch_uid="update_last_login") is False


def test_login_writes_nothing_but_its_rate_counters_and_its_session(ada, count_requests):
    response = login(Client(), "ada")

    assert response.status_code == 302
    # The lock item, the account with its sessions, the rate counters, the new session (with
    # its session slot, in one transaction).
    assert set(count_requests.counts) == {"GetItem", "Query", "UpdateItem", "TransactWriteItems"}


def test_logout_is_post_only(ada):
    client = Client()
    login(client, "ada")

    assert client.get("/accounts/logout/").status_code == 405
    assert client.get("/accounts/profile/").status_code == 200


def test_logout_logs_out_and_redirects_home(ada):
    client = Client()
    login(client, "ada")

    response = client.post("/accounts/logout/")

    assert response.status_code == 302
    assert response["Location"] == "/"
    home = client.get("/")
    assert not home.context["user"].is_authenticated
    assert "You have logged out." in messages_of(home)


def test_backend_get_user_returns_none_for_a_missing_account(ddb):
    assert AccountBackend().get_user("no-such-id") is None


def test_backend_refuses_a_login_name_too_long_for_a_lock_key(ddb):
    assert authenticate(None, username="a" * 3000, password=PASSWORD) is None


def test_full_width_at_sign_in_the_login_name_logs_in_by_email(ada):
    assert authenticate(None, username="ada＠example.com", password=PASSWORD).pk == ada.id


# CSRF: every POST needs the token.


@pytest.mark.parametrize("url", ["/accounts/signup/", "/accounts/login/"])
def test_anonymous_post_without_csrf_token_is_forbidden(ddb, url):
    client = Client(enforce_csrf_checks=True)
    client.get(url)

    response = client.post(url, {"username": "ada", "password": PASSWORD})

    assert response.status_code == 403


@pytest.mark.parametrize(
    "url", ["/accounts/email/", "/accounts/username/", "/accounts/password/", "/accounts/delete/", "/accounts/logout/"]
)
def test_logged_in_post_without_csrf_token_is_forbidden(ddb, url):
    client = signed_up_client()
    client.handler.enforce_csrf_checks = True

    response = client.post(url, {"password": PASSWORD, "email": "new@example.com", "username": "new"})

    assert response.status_code == 403
    assert store.get_by_username("ada").email == "ada@example.com"


def test_login_with_csrf_token_from_the_page_succeeds(ada):
    client = Client(enforce_csrf_checks=True)
    token = csrf_token_in(client.get("/accounts/login/"))

    response = client.post("/accounts/login/", {"username": "ada", "password": PASSWORD, "csrfmiddlewaretoken": token})

    assert response.status_code == 302


def test_login_form_posted_twice_by_one_browser_lands_on_success_twice(ada):
    client = Client(enforce_csrf_checks=True)
    token = csrf_token_in(client.get("/accounts/login/"))
    data = {"username": "ada", "password": PASSWORD, "csrfmiddlewaretoken": token}

    first = client.post("/accounts/login/", data)
    second = client.post("/accounts/login/", data)

    assert first["Location"] == second["Location"] == "/accounts/profile/"
