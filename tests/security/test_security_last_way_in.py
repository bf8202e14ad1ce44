"""The last way into an account stays (issue 26, finding 7): an account signed up with a
passkey, and so without a password, cannot remove its last passkey, on its own page or by
staff, until it sets a password; its reauthentication page offers the passkey, never a
password it does not have."""

import pytest
from django.test import Client
from django.urls import reverse

from accounts import store
from accounts.mfa import store as mfa_store
from tests import authenticator
from tests.mfa import ORIGIN, add_passkey, options
from tests.mfa.test_mfa_passkey_signup import passkey_signup, sign_up_with_a_passkey  # noqa: F401 (fixture)
from tests.mfa.test_mfa_reauthentication import REAUTHENTICATE, age
from tests.staff import boss, client_as, messages_of, staff_client  # noqa: F401 (fixtures)
from tests.web import OTHER_PASSWORD, PASSWORD

pytestmark = pytest.mark.dynamodb_local

SET_A_PASSWORD_FIRST = "It is the only way into your account: set a password first, then remove it."


def remove_url(credential):
    return reverse("accounts:mfa:passkey_remove", args=[credential.b64_id])


def test_the_last_passkey_of_an_account_without_a_password_is_not_removed(ddb, passkey_signup):
    client = Client()
    credential, _ = sign_up_with_a_passkey(client)

    response = client.post(remove_url(credential), follow=True)

    assert SET_A_PASSWORD_FIRST in messages_of(response)
    assert store.get_by_username("ada").passkeys == {credential.b64_id}
    assert [passkey.credential_id for passkey in mfa_store.passkeys_of(store.get_by_username("ada"))] == [
        credential.b64_id
    ]


def test_with_a_password_set_the_last_passkey_may_go(ddb, passkey_signup):
    client = Client()
    credential, _ = sign_up_with_a_passkey(client)
    client.post("/accounts/password/", {"new_password1": OTHER_PASSWORD, "new_password2": OTHER_PASSWORD})

    client.post(remove_url(credential))

    assert not store.get_by_username("ada").passkeys


def test_of_two_passkeys_one_may_go_without_a_password(ddb, passkey_signup):
    client = Client()
    first, _ = sign_up_with_a_passkey(client)
    add_passkey(client, "Laptop")

    client.post(remove_url(first))

    assert len(store.get_by_username("ada").passkeys) == 1


def test_staff_cannot_remove_the_last_passkey_of_an_account_without_a_password(ddb, passkey_signup, staff_client):
    credential, _ = sign_up_with_a_passkey(Client())
    ada = store.get_by_username("ada")

    response = staff_client.post(reverse("staff:passkey_remove", args=[ada.id, credential.b64_id]), follow=True)

    assert any("set a password first" in message for message in messages_of(response))
    assert store.get_by_username("ada").passkeys == {credential.b64_id}


def test_reauthentication_without_a_password_offers_the_passkey_and_takes_no_password(ddb, passkey_signup):
    client = Client()
    credential, _ = sign_up_with_a_passkey(client)
    age(client, 301)

    page = client.get(f"{REAUTHENTICATE}?next=/accounts/delete/")
    typed = client.post(f"{REAUTHENTICATE}?next=/accounts/delete/", {"password": PASSWORD})

    assert "password" not in page.context["form"].fields
    assert 'type="password"' not in page.content.decode()
    assert "Confirm with a passkey" in page.content.decode()
    assert typed.status_code == 200 and client.get("/accounts/delete/").status_code == 302
    answer = authenticator.get(credential, options(client, "reauthenticate"), ORIGIN)
    client.post("/accounts/mfa/reauthenticate/passkey/", {"credential": answer, "next": "/accounts/delete/"})
    assert client.get("/accounts/delete/").status_code == 200
