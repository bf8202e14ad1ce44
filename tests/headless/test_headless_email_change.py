"""An email change the app can finish (allauth's ChangeEmail screen, with
``ACCOUNT_CHANGE_EMAIL``): ``POST account/email`` lists the pending address beside the
account's, the key mailed to it is accepted by ``auth/email/verify`` (its link into the app
carries it), ``PUT`` mails it again and ``DELETE`` cancels the change."""

from urllib.parse import unquote, urlsplit

import pytest

from accounts import store
from tests.headless import APIClient
from tests.headless_spec import conforms
from tests.mail import link_in, mails_to
from tests.web import PASSWORD

pytestmark = pytest.mark.dynamodb_local

BOTH = [
    {"email": "ada@example.com", "primary": True, "verified": True},
    {"email": "lovelace@example.com", "primary": False, "verified": False},
]


@pytest.fixture
def ada(ddb, settings, mailoutbox):
    """ada, logged in through the app client, her address verified; links lead into the app."""
    settings.ACCOUNTS_HEADLESS_FRONTEND_URLS = {"account_confirm_email": "/account/verify-email/{key}"}
    api = APIClient("app")
    assert api.signup().status_code == 200
    mailoutbox.clear()
    return api


def change_key(email="lovelace@example.com"):
    """The key of the last email-change link mailed to ``email`` (into the app)."""
    link = link_in(mails_to(email)[-1])
    return unquote(urlsplit(link).path.removeprefix("/account/verify-email/"))


@pytest.mark.parametrize("client", ["app", "browser"])
def test_a_change_lists_both_addresses_as_allauth_lists_them(ddb, mailoutbox, client):
    api = APIClient(client)
    api.signup()

    asked = api.post("account/email", {"email": "lovelace@example.com"})
    listed = api.get("account/email")

    assert asked.status_code == 200
    assert asked.json()["data"] == listed.json()["data"] == BOTH
    assert conforms("EmailAddresses", listed.json(), "responses")


def test_the_mailed_key_finishes_the_change_through_auth_email_verify(ada):
    ada.post("account/email", {"email": "lovelace@example.com"})
    key = change_key()

    shown = ada.get("auth/email/verify", headers={"X-Email-Verification-Key": key})
    done = ada.post("auth/email/verify", {"key": key})

    assert shown.status_code == 200
    assert shown.json()["data"]["email"] == "lovelace@example.com"
    assert shown.json()["data"]["user"]["username"] == "ada"
    assert done.status_code == 200
    assert done.json()["data"]["user"]["email"] == "lovelace@example.com"
    assert ada.get("account/email").json()["data"] == [
        {"email": "lovelace@example.com", "primary": True, "verified": True}
    ]
    assert store.get_by_email("lovelace@example.com").username == "ada"
    assert store.get_by_email("ada@example.com") is None


def test_the_key_finishes_the_change_from_another_browser_too(ada):
    ada.post("account/email", {"email": "lovelace@example.com"})

    done = APIClient("browser").post("auth/email/verify", {"key": change_key()})

    assert done.status_code == 401
    assert store.get_by_email("lovelace@example.com").username == "ada"


def test_a_used_key_is_refused(ada):
    ada.post("account/email", {"email": "lovelace@example.com"})
    key = change_key()
    assert ada.post("auth/email/verify", {"key": key}).status_code == 200

    again = ada.post("auth/email/verify", {"key": key})

    assert again.status_code == 400
    assert again.json()["errors"][0]["param"] == "key"
    assert ada.get("auth/email/verify", headers={"X-Email-Verification-Key": key}).status_code == 400


def test_put_mails_the_pending_addresses_key_again(ada, mailoutbox):
    ada.post("account/email", {"email": "lovelace@example.com"})
    first = change_key()

    resent = ada.request("PUT", "account/email", {"email": "LOVELACE@example.com"})

    assert resent.status_code == 200
    assert len(mails_to("lovelace@example.com")) == 2
    # The same change: either key finishes it.
    assert ada.post("auth/email/verify", {"key": first}).status_code == 200


def test_put_within_a_minute_again_is_refused_with_403(ada):
    ada.post("account/email", {"email": "lovelace@example.com"})
    assert ada.request("PUT", "account/email", {"email": "lovelace@example.com"}).status_code == 200

    assert ada.request("PUT", "account/email", {"email": "lovelace@example.com"}).status_code == 403


def test_delete_of_the_pending_address_cancels_the_change(ada):
    ada.post("account/email", {"email": "lovelace@example.com"})
    key = change_key()

    cancelled = ada.delete("account/email", {"email": "lovelace@example.com"})

    assert cancelled.status_code == 200
    assert cancelled.json()["data"] == BOTH[:1]
    assert ada.post("auth/email/verify", {"key": key}).status_code == 400
    assert store.get_by_username("ada").email == "ada@example.com"


def test_the_own_address_cannot_be_removed_nor_the_pending_one_made_primary(ada):
    ada.post("account/email", {"email": "lovelace@example.com"})

    removed = ada.delete("account/email", {"email": "ada@example.com"})
    primary = ada.request("PATCH", "account/email", {"email": "lovelace@example.com", "primary": True})
    unknown = ada.delete("account/email", {"email": "nobody@example.com"})

    assert removed.status_code == 400
    assert removed.json()["errors"][0]["code"] == "cannot_remove_primary_email"
    assert primary.status_code == 400
    assert primary.json()["errors"][0]["code"] == "unverified_primary_email"
    assert unknown.status_code == 400
    assert unknown.json()["errors"][0]["code"] == "unknown_email"
    assert ada.get("account/email").json()["data"] == BOTH


def test_a_new_password_ends_the_pending_change_and_its_key(ada):
    ada.post("account/email", {"email": "lovelace@example.com"})
    key = change_key()

    ada.post("account/password/change", {"current_password": PASSWORD, "new_password": "Quartz-Meadow-Falcon-9"})

    assert ada.get("account/email").json()["data"] == BOTH[:1]
    assert APIClient("app").post("auth/email/verify", {"key": key}).status_code == 400
