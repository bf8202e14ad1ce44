"""Verified email change on DynamoDB Local: a link to the new address, a notice to the old
one, one transaction when the link is applied, and clear pages for stale or taken links."""

import pytest
from django.contrib.auth.hashers import make_password
from django.test import Client, RequestFactory

from accounts import store, verification
from accounts.exceptions import StaleItem
from accounts.models import User
from tests.engine.test_engine import locks
from tests.engine.test_engine_concurrency import race
from tests.mail import link_in, mails_to, path_of
from tests.web import OTHER_PASSWORD, PASSWORD, login, messages_of, signed_up_client, signup

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


# Ownership cannot be carried past a password change (issue 18, point 6).


def change_password(client, old=PASSWORD, new=OTHER_PASSWORD):
    data = {"old_password": old, "new_password1": new, "new_password2": new}
    return client.post("/accounts/password/", data, follow=True)


def test_a_password_change_cancels_the_pending_change_and_its_link_says_so(ada_client):
    intruders_link = request_change(ada_client, "intruder@example.com")

    changed = change_password(ada_client)
    response = Client().post(intruders_link)

    assert any("is cancelled" in text for text in messages_of(changed))
    assert response.status_code == 400
    assert "password of this account was changed after this link was sent" in response.content.decode()
    account = store.get_by_username("ada")
    assert account.email == "ada@example.com" and account.pending_email is None and account.pending_nonce is None
    assert locks()["UNIQ#EMAIL#ada@example.com"] == account.PK


def test_a_password_reset_cancels_the_pending_change(ada_client):
    intruders_link = request_change(ada_client, "intruder@example.com")
    Client().post("/accounts/password/reset/", {"email": "ada@example.com"})
    owner = Client()
    form_page = owner.get(path_of(link_in(mails_to("ada@example.com")[-1])), follow=True)
    data = {"new_password1": OTHER_PASSWORD, "new_password2": OTHER_PASSWORD}
    assert owner.post(form_page.redirect_chain[-1][0], data).status_code == 302

    response = Client().post(intruders_link)

    assert response.status_code == 400
    assert "password of this account was changed" in response.content.decode()
    account = store.get_by_username("ada")
    assert account.email == "ada@example.com" and account.pending_email is None


def test_a_link_read_before_a_password_change_never_applies_when_it_lands_after_it(ada_client, monkeypatch):
    # The race: the link's page reads the account, the owner's new password commits, then
    # the link's transaction arrives. Its stamp check passed on the read; the new password
    # removed the nonce it is guarded by. The new password is stamped with the `updated` the
    # link read (two servers' clocks can agree), so that guard alone cannot refuse it.
    token = request_change(ada_client, "intruder@example.com").split("/")[-2]
    claim = verification.read_email_change_token(token)
    as_read = store.get_account(claim.account_id)
    monkeypatch.setattr(store, "utcnow", lambda: as_read.updated)
    owner = User.from_account(store.get_account(claim.account_id))
    owner.set_password(OTHER_PASSWORD)
    owner.save()

    with pytest.raises(StaleItem):
        store.apply_email_change(as_read, claim.old_email, claim.new_email, claim.nonce)

    account = store.get_account(claim.account_id)
    assert account.email == "ada@example.com" and account.pending_email is None
    assert locks()["UNIQ#EMAIL#ada@example.com"] == account.PK


def test_the_profile_shows_the_pending_address_with_a_cancel_button_that_cancels_it(ada_client):
    link = request_change(ada_client, "intruder@example.com")
    profile = ada_client.get("/accounts/profile/").content.decode()
    assert "intruder@example.com" in profile and 'action="/accounts/email/cancel/"' in profile

    response = ada_client.post("/accounts/email/cancel/", follow=True)

    assert any("is cancelled" in text for text in messages_of(response))
    assert response.context["pending_email"] is None and "email/cancel" not in response.content.decode()
    assert store.get_by_username("ada").pending_email is None
    assert Client().post(link).status_code == 400
    assert ada_client.get("/accounts/email/cancel/").status_code == 405


def test_cancel_and_the_old_address_work_when_the_intruder_used_up_the_limit(ada_client):
    request_change(ada_client, "intruder@example.com")  # the change_email limit: once a minute
    assert ada_client.post("/accounts/email/", {"email": "other@example.com", "password": PASSWORD}).status_code == 429

    response = ada_client.post("/accounts/email/", {"email": "ADA@example.com", "password": PASSWORD}, follow=True)

    assert response.status_code == 200
    assert any("intruder@example.com is cancelled" in text for text in messages_of(response))
    account = store.get_by_username("ada")
    assert account.pending_email is None and store.is_same_address(account, "ada@example.com")


def test_with_enumeration_prevention_a_registered_address_is_recorded_and_never_applied(ddb, settings):
    settings.ACCOUNTS_PREVENT_ENUMERATION = True
    store.signup("grace@example.com", "grace", "!hash", email_verified=True)
    store.signup("ada@example.com", "ada", make_password(PASSWORD), email_verified=True)
    client = Client()
    login(client, "ada")

    response = client.post("/accounts/email/", {"email": "grace@example.com", "password": PASSWORD}, follow=True)

    assert any("We sent a link to grace@example.com" in text for text in messages_of(response))
    assert store.get_by_username("ada").pending_email == "grace@example.com"
    assert "/accounts/email/confirm/" not in mails_to("grace@example.com")[0].body
    assert store.get_by_email("grace@example.com").username == "grace"
