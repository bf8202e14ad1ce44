"""Signing up with a passkey instead of a password (``ACCOUNTS_PASSKEY_SIGNUP``), on
DynamoDB Local: one transaction creates the account, its locks (the credential id's among
them) and the credential item; verification by mail as for any signup."""

import pytest
from django.test import Client

from accounts import store
from accounts.mfa import store as mfa_store
from accounts.tables import account_pk
from tests import authenticator
from tests.invariants import scan_everything, violations
from tests.mail import link_in, mails_to, path_of
from tests.mfa import ORIGIN, options, passkey_login
from tests.seeding import read_lock
from tests.web import signup, signup_data

pytestmark = pytest.mark.dynamodb_local

FIRST_PAGE, SECOND_PAGE = "/accounts/mfa/signup/passkey/", "/accounts/mfa/signup/passkey/create/"


@pytest.fixture
def passkey_signup(settings):
    settings.ACCOUNTS_PASSKEY_SIGNUP = True


def sign_up_with_a_passkey(client, email="ada@example.com", username="ada"):
    """Both pages, as a person does: ``(credential, response of the second page's POST)``."""
    page = client.get(FIRST_PAGE)
    token = page.context["form"]["token"].value()
    assert client.post(FIRST_PAGE, {"email": email, "username": username, "token": token})["Location"] == SECOND_PAGE
    credential, answer = authenticator.create(options(client, "signup"), ORIGIN)
    return credential, client.post(SECOND_PAGE, {"name": "Phone", "credential": answer})


def test_it_is_off_by_default(ddb):
    assert Client().get(FIRST_PAGE).status_code == 404
    assert "Sign up with a passkey" not in Client().get("/accounts/signup/").content.decode()


def test_a_passkey_signup_creates_the_account_its_locks_and_its_credential_at_once(ddb, passkey_signup):
    client = Client()
    assert FIRST_PAGE in client.get("/accounts/signup/").content.decode()

    credential, response = sign_up_with_a_passkey(client)

    assert response["Location"] == "/accounts/profile/"
    ada = store.get_by_username("ada")
    assert ada.passkeys == {credential.b64_id} and not ada.password.startswith("argon2")
    assert read_lock(f"UNIQ#WEBAUTHN#{credential.b64_id}") == (True, ada.PK)
    assert [passkey.name for passkey in mfa_store.passkeys_of(ada)] == ["Phone"]
    assert violations() == []
    client.post("/accounts/logout/")
    assert passkey_login(client, credential)["Location"] == "/accounts/profile/"


def test_a_taken_address_sends_back_to_the_first_page_and_writes_nothing(ddb, passkey_signup):
    signup(Client())

    _, response = sign_up_with_a_passkey(Client(), "ADA@example.com", "lovelace")

    assert response.status_code == 200
    assert response.context["form"].has_error("email", "email_taken")
    assert store.get_by_username("lovelace") is None
    assert not [raw for raw in scan_everything() if "WEBAUTHN" in raw["PK"]["S"] + raw["SK"]["S"]]


def test_an_unverified_passkey_signup_expires_with_its_account_until_the_link_is_opened(ddb, passkey_signup, settings):
    settings.ACCOUNTS_EMAIL_VERIFICATION = "mandatory"
    credential, response = sign_up_with_a_passkey(Client())
    assert response["Location"] == "/accounts/verify/sent/"
    ada = store.get_by_username("ada")
    owned = [
        raw
        for raw in scan_everything()
        if raw["PK"]["S"] == account_pk(ada.id) and raw["SK"]["S"].startswith("WEBAUTHN#")
    ]
    assert [int(raw["expires"]["N"]) for raw in owned] == [ada.expires]
    assert passkey_login(Client(), credential)["Location"] == "/accounts/login/"

    Client().post(path_of(link_in(mails_to("ada@example.com")[0])))

    assert store.get_by_username("ada").expires is None
    assert all("expires" not in raw for raw in scan_everything() if "WEBAUTHN" in raw["PK"]["S"] + raw["SK"]["S"])
    assert passkey_login(Client(), credential)["Location"] == "/accounts/profile/"


def test_the_signup_limit_counts_passkey_signups(ddb, passkey_signup, settings):
    settings.ACCOUNTS_RATE_LIMITS = {"signup": "1/m/ip"}
    signup(Client())

    response = Client().post(FIRST_PAGE, signup_data(Client(), "grace@example.com", "grace", url=FIRST_PAGE))

    assert response.status_code == 429


@pytest.mark.argon2
def test_an_account_without_a_password_confirms_with_its_passkey_and_may_set_one(ddb, passkey_signup):
    client = Client()
    credential, _ = sign_up_with_a_passkey(client)
    session = client.session
    session["accounts_authenticated_at"] = 0
    session.save()
    answer = authenticator.get(credential, options(client, "reauthenticate"), ORIGIN)
    client.post("/accounts/mfa/reauthenticate/passkey/", {"credential": answer, "next": "/accounts/password/"})

    page = client.get("/accounts/password/")
    new = "Marble-Harbor-Lantern-3"
    response = client.post("/accounts/password/", {"new_password1": new, "new_password2": new})

    assert "old_password" not in page.context["form"].fields
    assert response["Location"] == "/accounts/profile/"
    assert store.get_by_username("ada").password.startswith("argon2")


def test_an_account_without_a_password_deletes_itself_after_its_passkey(ddb, passkey_signup):
    client = Client()
    sign_up_with_a_passkey(client)

    form = client.get("/accounts/delete/").context["form"]
    response = client.post("/accounts/delete/", {})

    assert "password" not in form.fields
    assert response.status_code == 302 and store.get_by_username("ada") is None
    assert violations() == []
