"""Every current-password field is a password check counted against ``reauthenticate``, per
account (issue 26, finding 3): guessing it on a change form stops at the limit, as on the
reauthentication page; a username change asks for a fresh proof and tells the address."""

import pytest

from accounts import store
from tests.mail import mails_to
from tests.mfa.test_mfa_reauthentication import REAUTHENTICATE, age
from tests.web import OTHER_PASSWORD, PASSWORD, signed_up_client

pytestmark = pytest.mark.dynamodb_local

LIMIT = 10
# Each change form, with what it needs besides the current password and the field holding it.
CHANGE_FORMS = [
    ("/accounts/username/", {"username": "lovelace"}, "password"),
    ("/accounts/email/", {"email": "lovelace@example.com"}, "password"),
    ("/accounts/password/", {"new_password1": OTHER_PASSWORD, "new_password2": OTHER_PASSWORD}, "old_password"),
    ("/accounts/delete/", {}, "password"),
]


@pytest.mark.parametrize("url, data, field", CHANGE_FORMS)
def test_wrong_current_passwords_past_the_reauthenticate_limit_get_429_and_the_right_one_is_not_checked(
    ddb, url, data, field
):
    client = signed_up_client()

    statuses = [client.post(url, {**data, field: f"wrong-{attempt}"}).status_code for attempt in range(LIMIT + 2)]
    right = client.post(url, {**data, field: PASSWORD})

    assert statuses == [200] * LIMIT + [429, 429]
    assert right.status_code == 429 and right["Retry-After"]
    account = store.get_by_username("ada")
    assert account is not None and account.email == "ada@example.com" and account.pending_email is None


def test_change_forms_and_the_reauthentication_page_share_one_count(ddb, settings):
    settings.ACCOUNTS_RATE_LIMITS = {"reauthenticate": "3/m/user"}
    client = signed_up_client()
    client.post("/accounts/delete/", {"password": "wrong"})
    client.post("/accounts/username/", {"username": "lovelace", "password": "wrong"})
    age(client, 301)

    response = client.post(REAUTHENTICATE, {"password": "wrong"})
    limited = client.post(REAUTHENTICATE, {"password": PASSWORD})

    assert response.status_code == 200 and limited.status_code == 429


def test_a_username_change_past_the_timeout_asks_to_reauthenticate_first(ddb):
    client = signed_up_client()
    age(client, 301)

    response = client.post("/accounts/username/", {"username": "lovelace", "password": PASSWORD})

    assert response.status_code == 302 and response["Location"].startswith(REAUTHENTICATE)
    assert store.get_by_username("ada") is not None


def test_a_username_change_is_told_to_the_address(ddb):
    client = signed_up_client()

    response = client.post("/accounts/username/", {"username": "lovelace", "password": PASSWORD})

    assert response["Location"] == "/accounts/profile/"
    (notice,) = [mail for mail in mails_to("ada@example.com") if "username" in mail.subject.lower()]
    assert "ada" in notice.body and "lovelace" in notice.body
