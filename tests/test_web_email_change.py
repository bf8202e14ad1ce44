"""Verified email change on DynamoDB Local: a link to the new address, a notice to the old
one, one transaction when the link is applied, and clear pages for stale or taken links."""

import pytest
from django.test import Client, RequestFactory

from accounts import store, verification
from accounts.exceptions import StaleItem
from tests.mail import link_in, mails_to, path_of
from tests.test_engine import locks
from tests.test_engine_concurrency import race
from tests.web import PASSWORD, signed_up_client, signup

pytestmark = pytest.mark.dynamodb_local


@pytest.fixture
def ada_client(ddb):
    return signed_up_client("ada@example.com", "ada")


def request_change(client, email):
    response = client.post("/accounts/email/", {"email": email, "password": PASSWORD})
    assert response.status_code == 302
    return path_of(link_in(mails_to(email)[-1]))


def test_request_mails_a_link_to_the_new_address_and_a_notice_to_the_old(ada_client):
    request_change(ada_client, "lovelace@example.com")

    (link_mail,) = mails_to("lovelace@example.com")
    (notice,) = mails_to("ada@example.com")
    assert "/accounts/email/confirm/" in link_mail.body
    assert "lovelace@example.com" in notice.body and "http" not in notice.body
    assert store.get_by_username("ada").pending_email == "lovelace@example.com"


def test_applying_the_link_notifies_the_old_address_after_the_commit(ada_client):
    path = request_change(ada_client, "lovelace@example.com")

    response = Client().post(path)

    assert response.status_code == 200
    notices = mails_to("ada@example.com")
    assert "was changed" in notices[-1].subject
    account = store.get_by_email("lovelace@example.com")
    assert account.username == "ada" and account.pending_email is None and account.pending_nonce is None
    assert locks() == {
        "UNIQ#EMAIL#lovelace@example.com": account.PK,
        "UNIQ#HANDLE#ada": account.PK,
        "UNIQ#HANDLE_SKEL#ada": account.PK,
    }


def test_a_link_works_once(ada_client):
    path = request_change(ada_client, "lovelace@example.com")
    Client().post(path)

    again = Client().post(path)

    assert again.status_code == 400
    assert "no longer valid" in again.content.decode()


def test_a_newer_request_makes_the_older_link_stale(ada_client, settings):
    settings.ACCOUNTS_RATE_LIMITS = False  # two requests in a minute: not what this is about
    older = request_change(ada_client, "lovelace@example.com")
    request_change(ada_client, "countess@example.com")

    response = Client().post(older)

    assert response.status_code == 400
    assert store.get_by_username("ada").email == "ada@example.com"


def test_address_taken_meanwhile_is_a_clear_error_and_changes_nothing(ada_client):
    path = request_change(ada_client, "wanted@example.com")
    store.signup("wanted@example.com", "grace", "!hash", email_verified=True)

    response = Client().post(path)

    assert response.status_code == 400
    assert "already in use by another account" in response.content.decode()
    assert store.get_by_username("ada").email == "ada@example.com"
    assert store.get_by_email("wanted@example.com").username == "grace"


def test_request_for_an_address_a_verified_account_holds_gets_the_email_error(ada_client):
    store.signup("grace@example.com", "grace", "!hash", email_verified=True)

    response = ada_client.post("/accounts/email/", {"email": "grace@example.com", "password": PASSWORD})

    assert response.context["form"].has_error("email", "email_taken")
    assert mails_to("grace@example.com") == []


def test_forged_link_is_a_clear_error_page(ada_client):
    response = Client().post("/accounts/email/confirm/forged/")

    assert response.status_code == 400


def test_email_change_link_opened_while_the_account_changes_username(ada_client):
    token = request_change(ada_client, "lovelace@example.com").split("/")[-2]
    account_id = store.get_by_username("ada").id
    request = RequestFactory().get("/")

    def open_link():
        return verification.apply_email_change(request, token)[0]

    def change_username():
        return store.change_username(store.get_account(account_id), "countess")

    outcomes = race(2, lambda i: (open_link, change_username)[i]())

    account = store.get_account(account_id)
    # Whatever the order, every lock names the account and matches what it holds; a loser
    # is told "stale" (the link) or StaleItem (the username form), never a half change.
    assert locks() == {
        f"UNIQ#EMAIL#{account.email}": account.PK,
        f"UNIQ#HANDLE#{account.username}": account.PK,
        f"UNIQ#HANDLE_SKEL#{account.username}": account.PK,
    }
    assert outcomes[0] in (verification.CHANGED, verification.STALE)
    assert not isinstance(outcomes[1], Exception) or isinstance(outcomes[1], StaleItem)
    assert (account.email == "lovelace@example.com") == (outcomes[0] == verification.CHANGED)
    assert (account.username == "countess") == (not isinstance(outcomes[1], Exception))


def test_an_unverified_address_is_replaced_at_once_and_the_new_one_gets_a_verification_link(ddb, settings):
    settings.ACCOUNTS_EMAIL_VERIFICATION = "optional"
    client = Client()
    signup(client, "typo@exampel.com", "ada")

    response = client.post("/accounts/email/", {"email": "ada@example.com", "password": PASSWORD}, follow=True)

    assert any("Open it to confirm your address" in str(message) for message in response.context["messages"])
    account = store.get_by_username("ada")
    assert account.email == "ada@example.com" and account.email_verified is False
    assert "/accounts/verify/" in mails_to("ada@example.com")[0].body
    assert "UNIQ#EMAIL#ada@example.com" not in locks()
