"""Passkeys on DynamoDB Local: registered with their credential id's lock in one
transaction, used to log in without a password, their counter and backup flags checked,
their challenge single-use, removed with their lock."""

import threading

import pytest
from django.test import Client

from accounts import store, transactions
from accounts.mfa import passkeys
from accounts.mfa import store as mfa_store
from tests import authenticator
from tests.mail import mails_to
from tests.mfa import ORIGIN, add_passkey, options, passkey_login
from tests.seeding import overwrite, read_lock
from tests.web import messages_of, signed_up_client

pytestmark = pytest.mark.dynamodb_local


def account_of(username="ada"):
    return store.get_by_username(username)


def test_registering_a_passkey_writes_its_item_and_its_lock_owned_by_the_account(ddb):
    client = signed_up_client()

    credential, response = add_passkey(client, "Laptop")

    assert response.status_code == 302
    ada = account_of()
    assert ada.passkeys == {credential.b64_id}
    assert read_lock(f"UNIQ#WEBAUTHN#{credential.b64_id}") == (True, ada.PK)
    (passkey,) = mfa_store.passkeys_of(ada)
    assert (passkey.name, passkey.sign_count, passkey.transports) == ("Laptop", 0, ["internal"])
    assert passkey.last_used is None
    page = client.get("/accounts/mfa/passkeys/")
    assert "Laptop" in page.content.decode()
    assert mails_to("ada@example.com")[-1].subject.startswith("An authenticator was added")


def test_a_second_account_cannot_register_the_same_credential_id(ddb):
    credential, _ = add_passkey(signed_up_client())
    grace = signed_up_client("grace@example.com", "grace")
    _, answer = authenticator.create(options(grace, "register"), ORIGIN, credential_id=credential.id)

    response = grace.post("/accounts/mfa/passkeys/", {"name": "Mine", "credential": answer})

    assert response.status_code == 200
    assert response.context["form"].non_field_errors() == ["This passkey is already registered."]
    assert account_of("grace").passkeys is None
    assert mfa_store.passkeys_of(account_of("grace")) == []
    assert read_lock(f"UNIQ#WEBAUTHN#{credential.b64_id}") == (True, account_of().PK)


def test_logging_in_with_a_passkey_needs_no_password_and_records_its_use(ddb):
    client = signed_up_client()
    credential, _ = add_passkey(client)
    client.post("/accounts/logout/")

    response = passkey_login(client, credential)

    assert response.status_code == 302
    assert response["Location"] == "/accounts/profile/"
    assert client.get("/accounts/profile/").context["user"].username == "ada"
    (passkey,) = mfa_store.passkeys_of(account_of())
    assert passkey.sign_count == 1 and passkey.last_used is not None


def test_a_passkey_without_user_handle_is_found_through_its_lock(ddb):
    client = signed_up_client()
    credential, _ = add_passkey(client)

    response = passkey_login(Client(), credential, user_handle=False)

    assert response.status_code == 302 and response["Location"] == "/accounts/profile/"


def test_a_user_handle_naming_another_account_gets_nobody_in(ddb):
    credential, _ = add_passkey(signed_up_client())
    signed_up_client("grace@example.com", "grace")
    credential.user_handle = account_of("grace").id.encode()
    # Grace claims the credential in her own partition too (listed, with a copy of its item,
    # written behind the engine): the lock, which names ada, is all that refuses her.
    grace = account_of("grace")
    (item,) = mfa_store.passkeys_of(account_of())
    item.PK = grace.PK
    item.save()
    overwrite(grace, passkeys={credential.b64_id})

    visitor = Client()
    response = passkey_login(visitor, credential)

    assert response["Location"] == "/accounts/login/"
    assert "_auth_user_id" not in visitor.session


def test_a_signature_counter_that_does_not_grow_is_refused(ddb):
    client = signed_up_client()
    credential, _ = add_passkey(client)
    passkey_login(Client(), credential, counter=5)

    clone = Client()
    response = passkey_login(clone, credential, counter=5)

    assert response["Location"] == "/accounts/login/"
    assert "_auth_user_id" not in clone.session
    assert mfa_store.passkeys_of(account_of())[0].sign_count == 5


def test_a_changed_backup_eligibility_is_refused_and_the_backup_state_recorded(ddb):
    client = signed_up_client()
    synced, _ = add_passkey(client, "Phone", backed_up=True)
    assert mfa_store.passkeys_of(account_of())[0].backup_state is True

    synced.backed_up = False
    response = passkey_login(Client(), synced)

    assert response["Location"] == "/accounts/login/"


def test_a_challenge_is_used_once(ddb):
    client = signed_up_client()
    credential, _ = add_passkey(client)
    visitor = Client()
    answer = authenticator.get(credential, options(visitor, "login"), ORIGIN)

    first = visitor.post("/accounts/mfa/passkey/login/", {"credential": answer})
    visitor.post("/accounts/logout/")
    again = visitor.post("/accounts/mfa/passkey/login/", {"credential": answer})

    assert first["Location"] == "/accounts/profile/"
    assert again["Location"] == "/accounts/login/"


def test_an_expired_challenge_is_refused(ddb, monkeypatch):
    client = signed_up_client()
    credential, _ = add_passkey(client)
    monkeypatch.setattr(passkeys, "CHALLENGE_SECONDS", -1)
    visitor = Client()
    answer = authenticator.get(credential, options(visitor, "login"), ORIGIN)

    response = visitor.post("/accounts/mfa/passkey/login/", {"credential": answer}, follow=True)

    assert "The passkey request expired." in response.content.decode()


def test_two_logins_racing_with_one_challenge_make_one_session(ddb):
    # The same answer posted twice at once, from one browser: the transaction that logs in
    # records its challenge as used only while it is not, so one of them wins.
    client = signed_up_client()
    credential, _ = add_passkey(client)
    visitor = Client()
    answer = authenticator.get(credential, options(visitor, "login"), ORIGIN)
    challenge_cookie = visitor.cookies[passkeys.CHALLENGE_COOKIE].value
    barrier = threading.Barrier(4)
    landed = []

    def post():
        racer = Client()
        racer.cookies[passkeys.CHALLENGE_COOKIE] = challenge_cookie
        barrier.wait()
        response = racer.post("/accounts/mfa/passkey/login/", {"credential": answer})
        landed.append(response.get("Location", f"{response.status_code} {response.content[-500:]}"))

    threads = [threading.Thread(target=post) for _ in range(4)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()

    assert sorted(landed) == ["/accounts/login/"] * 3 + ["/accounts/profile/"]
    assert mfa_store.passkeys_of(account_of())[0].sign_count == 1


def test_an_answer_refused_after_another_request_used_its_challenge_says_it_was_used(ddb, monkeypatch):
    # The loser of the race above, deterministically: it took the challenge, then the winner
    # signed in (recording the challenge as used, and storing the counter the loser's
    # answer repeats), so the loser's answer is refused.
    credential, _ = add_passkey(signed_up_client())
    client = Client()
    answer = authenticator.get(credential, options(client, "login"), ORIGIN)
    verify = passkeys.verify_assertion

    def after_the_winner(request, assertion, challenge, *args, **kwargs):
        mfa_store.spend(mfa_store.used_challenge_spend(challenge))
        raise passkeys.PasskeyRefused(passkeys.INVALID, "the counter did not grow")

    monkeypatch.setattr(passkeys, "verify_assertion", after_the_winner)

    response = client.post("/accounts/mfa/passkey/login/", {"credential": answer}, follow=True)

    assert response.redirect_chain == [("/accounts/login/", 302)]
    assert "This code or passkey was already used. Please log in again." in messages_of(response)
    monkeypatch.setattr(passkeys, "verify_assertion", verify)
    assert passkey_login(client, credential)["Location"] == "/accounts/profile/"


def test_two_uses_reading_one_counter_store_one(ddb):
    client = signed_up_client()
    credential, _ = add_passkey(client)
    (read,) = mfa_store.passkeys_of(account_of())

    mfa_store.spend(mfa_store.passkey_spend(read, {"sign_count": 2}))
    with pytest.raises(store.StaleItem):
        mfa_store.spend(mfa_store.passkey_spend(read, {"sign_count": 1}))

    assert mfa_store.passkeys_of(account_of())[0].sign_count == 2


def test_removing_a_passkey_releases_its_lock_and_another_account_may_register_it(ddb):
    client = signed_up_client()
    credential, _ = add_passkey(client, "Laptop")

    client.post(f"/accounts/mfa/passkeys/{credential.b64_id}/remove/")

    ada = account_of()
    assert ada.passkeys is None and mfa_store.passkeys_of(ada) == []
    assert read_lock(f"UNIQ#WEBAUTHN#{credential.b64_id}") == (False, None)
    assert mfa_store.read_for_passkey(ada.id, credential.b64_id)[1] is None
    assert mails_to("ada@example.com")[-1].subject.startswith("An authenticator was removed")
    grace = signed_up_client("grace@example.com", "grace")
    _, answer = authenticator.create(options(grace, "register"), ORIGIN, credential_id=credential.id)
    assert grace.post("/accounts/mfa/passkeys/", {"name": "Mine", "credential": answer}).status_code == 302
    assert passkey_login(Client(), credential)["Location"] == "/accounts/login/"


def test_an_account_has_at_most_max_passkeys(ddb, monkeypatch):
    monkeypatch.setattr(passkeys, "MAX_PASSKEYS", 2)
    client = signed_up_client()
    add_passkey(client, "One")
    add_passkey(client, "Two")

    assert client.post("/accounts/mfa/passkey/options/register/").status_code == 403
    assert "remove one to add another" in client.get("/accounts/mfa/passkeys/").content.decode()
    assert len(account_of().passkeys) == 2


def test_deleting_an_account_with_the_most_passkeys_fits_one_transaction():
    account = store.build_account(
        "ada@example.com", "ada", "!", passkeys={f"id{n}" for n in range(passkeys.MAX_PASSKEYS)}
    )

    transaction = transactions.plan_delete(account)

    # The account, its email, username and look-alike locks, a lock and an item per passkey,
    # and its staff registry entry (deleted whatever the account was read as).
    assert len(transaction.actions) == 4 + 2 * passkeys.MAX_PASSKEYS + 1 <= transactions.MAX_ACTIONS


def test_an_unverified_account_cannot_set_up_a_passkey(ddb, settings):
    settings.ACCOUNTS_EMAIL_VERIFICATION = "optional"
    client = signed_up_client()

    response = client.get("/accounts/mfa/passkeys/", follow=True)

    assert response.redirect_chain[-1][0] == "/accounts/profile/"
    assert "Confirm your email address first" in response.content.decode()
    assert client.post("/accounts/mfa/passkey/options/register/").status_code == 403


def test_an_inactive_account_cannot_log_in_with_its_passkey(ddb):
    client = signed_up_client()
    credential, _ = add_passkey(client)
    store.update_account(account_of(), is_active=False)

    assert passkey_login(Client(), credential)["Location"] == "/accounts/login/"


def test_an_answer_that_is_not_json_is_refused_kindly(ddb):
    visitor = Client()
    options(visitor, "login")

    response = visitor.post("/accounts/mfa/passkey/login/", {"credential": "{not json"}, follow=True)

    assert response.status_code == 200
    assert "The passkey could not be checked." in response.content.decode()
