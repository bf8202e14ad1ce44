"""Behaviours that fail when a guard of second factors is removed, on DynamoDB Local: the
credential lock decides whose passkey it is at login, the last second factor takes the
recovery codes with it, and a credential item is never written over."""

import pytest
from django.test import Client

from accounts import store
from accounts.exceptions import StaleItem
from accounts.mfa import passkeys
from accounts.mfa import store as mfa_store
from accounts.tables import passkey_sort_key
from tests import authenticator
from tests.mfa import ORIGIN, add_passkey, enable_totp, options, passkey_login, password_login, second_step
from tests.seeding import write_locks
from tests.web import signed_up_client

pytestmark = pytest.mark.dynamodb_local


def account_of(username="ada"):
    return store.get_by_username(username)


def test_a_passkey_whose_lock_names_another_account_logs_nobody_in(ddb):
    credential, _ = add_passkey(signed_up_client())
    signed_up_client("grace@example.com", "grace")
    # The lock moved to grace (a repair, or damage): ada still lists the credential and
    # holds its item, and the passkey names ada; only the lock says it is not hers.
    write_locks({f"UNIQ#WEBAUTHN#{credential.b64_id}": account_of("grace").PK})
    visitor = Client()

    response = passkey_login(visitor, credential)

    assert response["Location"] == "/accounts/login/"
    assert "_auth_user_id" not in visitor.session


def test_turning_the_app_off_with_no_passkey_left_removes_the_recovery_codes(ddb):
    client = signed_up_client()
    _, old_codes = enable_totp(client)

    client.post("/accounts/mfa/totp/deactivate/")

    assert account_of().recovery_codes is None
    # Turned on again, the app comes with new codes; the old ones log nobody in.
    _, new_codes = enable_totp(client)
    assert new_codes and set(new_codes).isdisjoint(old_codes)
    browser = Client()
    password_login(browser)
    assert second_step(browser, old_codes[0]).status_code == 200
    assert "_auth_user_id" not in browser.session


def test_removing_the_last_passkey_with_the_app_off_removes_the_recovery_codes(ddb):
    client = signed_up_client()
    credential, _ = add_passkey(client)
    enable_totp(client)
    client.post("/accounts/mfa/totp/deactivate/")
    assert account_of().recovery_codes  # the passkey still stands: the codes stay

    client.post(f"/accounts/mfa/passkeys/{credential.b64_id}/remove/")

    assert account_of().recovery_codes is None


def new_credential(credential_id, public_key, sign_count=0):
    return passkeys.NewCredential(credential_id, public_key, sign_count, False, False, [], "0" * 32)


def test_registering_a_credential_the_account_has_never_writes_over_its_item(ddb):
    ada, _ = store.signup("ada@example.com", "ada", "!")
    mfa_store.add_passkey(store.get_account(ada.id), new_credential("cred1", b"first key", 7), "Laptop")

    # The same id again (a browser ignoring excludeCredentials): no lock moves, so only the
    # item's own guard keeps its key and counter (a counter reset would let a clone in).
    with pytest.raises(StaleItem):
        mfa_store.add_passkey(store.get_account(ada.id), new_credential("cred1", b"other key", 0), "Intruder")

    _, item = mfa_store.read_for_passkey(ada.id, "cred1")
    assert (item.public_key, item.sign_count, item.name) == (b"first key", 7, "Laptop")
    assert item.SK == passkey_sort_key("cred1")


def test_a_passkey_answer_with_a_stale_counter_is_refused_at_the_second_step(ddb):
    client = signed_up_client()
    credential, _ = add_passkey(client)
    client.post("/accounts/logout/")
    browser = Client()
    password_login(browser)
    answer = authenticator.get(credential, options(browser, "second_factor"), ORIGIN, counter=5)
    assert (
        browser.post("/accounts/mfa/authenticate/passkey/", {"credential": answer})["Location"] == "/accounts/profile/"
    )
    again = Client()
    password_login(again)

    replayed = authenticator.get(credential, options(again, "second_factor"), ORIGIN, counter=5)
    again.post("/accounts/mfa/authenticate/passkey/", {"credential": replayed})

    assert "_auth_user_id" not in again.session
