"""A signed-in account's number on its phone page: added or changed only once the new
number's code is typed (the old number keeps its lock until then, and loses it in the very
transaction that gives the account the new one), removed at once, behind reauthentication."""

import time

import pytest
from django.contrib.auth.hashers import make_password

from accounts import store
from accounts.mfa.flows.reauthentication import AUTHENTICATED_AT_SESSION_KEY
from accounts.phones import flows
from accounts.phones import store as phone_store
from tests.phones import ask_for, logged_in, phone_lock_owner, type_code, with_number
from tests.sms import NUMBER, NUMBER_E164, OTHER, OTHER_E164, code_to, phone_site, texts_to, wrong_code  # noqa: F401
from tests.web import OTHER_PASSWORD, PASSWORD, messages_of

pytestmark = pytest.mark.dynamodb_local


def test_the_profile_shows_the_number_and_the_phone_page_says_it_is_verified(phone_site):
    with_number()
    client = logged_in()

    profile = client.get("/accounts/profile/").content.decode()
    page = client.get("/accounts/phone/change/").content.decode()

    assert NUMBER_E164 in profile and "/accounts/phone/change/" in profile
    assert NUMBER in page and "verified" in page and "not verified" not in page


def test_a_new_number_is_the_accounts_only_once_its_code_is_typed_and_the_old_lock_goes_with_it(
    phone_site, count_requests
):
    account = with_number()
    client = logged_in()

    asked = ask_for(client, OTHER)

    assert asked["Location"] == "/accounts/phone/verify/"
    assert store.get_account(account.id).phone == NUMBER_E164
    assert (phone_lock_owner(NUMBER_E164), phone_lock_owner(OTHER_E164)) == (account.PK, None)
    count_requests.reset()

    verified = client.post("/accounts/phone/verify/", {"code": code_to(OTHER_E164)}, follow=True)

    assert "Your phone number is now +44 7911 123456." in messages_of(verified)
    assert count_requests.counts["TransactWriteItems"] == 1
    assert (phone_lock_owner(NUMBER_E164), phone_lock_owner(OTHER_E164)) == (None, account.PK)
    assert (store.get_account(account.id).phone, store.get_account(account.id).phone_verified) == (OTHER_E164, True)


def test_the_phone_page_asks_for_a_fresh_proof_first(phone_site):
    with_number()
    client = logged_in()
    session = client.session
    session[AUTHENTICATED_AT_SESSION_KEY] = time.time() - 3600
    session.save()

    for response in (client.get("/accounts/phone/change/"), ask_for(client, OTHER)):
        assert response.status_code == 302
        assert response["Location"].startswith("/accounts/mfa/reauthenticate/")
    assert texts_to(OTHER_E164) == []


def test_a_number_another_account_holds_is_refused_on_the_phone_page(phone_site):
    with_number("bob@example.com", OTHER)
    with_number()
    client = logged_in()

    refused = ask_for(client, "+447911123456")

    assert refused.context["form"].has_error("phone", "phone_taken")
    assert texts_to(OTHER_E164) == []


def test_the_accounts_own_verified_number_in_another_notation_is_the_same_as_the_current_one(phone_site):
    with_number()
    client = logged_in()

    refused = ask_for(client, "+81 (0)90 1234 5678")

    assert refused.context["form"].has_error("phone", "same_as_current")


def test_an_unreadable_number_is_a_clear_error_and_texts_nobody(phone_site):
    with_number()
    client = logged_in()

    for typed in ("090-1234-5678", "+81 12", "+1 555 010 9999", "call me"):
        refused = ask_for(client, typed)
        assert refused.status_code == 200
        assert refused.context["form"].has_error("phone", "invalid_phone"), typed


def test_removing_the_number_frees_it_at_once_for_another_account(phone_site, settings):
    settings.ACCOUNTS_SIGNUP_FIELDS = ["email*", "phone", "password1*"]
    account = with_number()
    client = logged_in()

    removed = client.post("/accounts/phone/remove/", follow=True)

    assert "Your account has no phone number now." in messages_of(removed)
    assert store.get_account(account.id).phone is None
    assert phone_lock_owner(NUMBER_E164) is None
    other = with_number("bob@example.com", NUMBER)
    assert phone_lock_owner(NUMBER_E164) == other.PK


def test_a_required_number_cannot_be_removed(phone_site):
    account = with_number()
    client = logged_in()

    refused = client.post("/accounts/phone/remove/", follow=True)

    assert "A phone number is required on this site, so it cannot be removed." in messages_of(refused)
    assert phone_lock_owner(NUMBER_E164) == account.PK


def test_a_code_is_used_once(phone_site):
    account = with_number()
    client = logged_in()
    ask_for(client, OTHER)
    code = code_to(OTHER_E164)
    kept = client.session[flows.CHANGE_SESSION_KEY]

    assert type_code(client, code)["Location"] == "/accounts/phone/change/"
    replayed = type_code(client, code)
    # Even the session's record of the code, put back, verifies nothing again: the account
    # is no longer as it was when the code was sent.
    session = client.session
    session[flows.CHANGE_SESSION_KEY] = kept
    session.save()
    again = client.post("/accounts/phone/verify/", {"code": code}, follow=True)

    assert replayed["Location"] == "/accounts/phone/change/"
    assert "This code no longer works: the number or the password changed since it was sent." in messages_of(again)
    assert store.get_account(account.id).phone == OTHER_E164


def test_a_code_sent_before_the_number_changed_is_refused(phone_site, settings):
    settings.ACCOUNTS_RATE_LIMITS = {"change_phone": False}  # two changes within a minute
    account = with_number()
    first, second = logged_in(), logged_in()
    ask_for(first, OTHER)
    first_code = code_to(OTHER_E164)
    ask_for(second, "+33 6 12 34 56 78")
    type_code(second, code_to("+33612345678"))

    refused = first.post("/accounts/phone/verify/", {"code": first_code}, follow=True)

    assert "This code no longer works: the number or the password changed since it was sent." in messages_of(refused)
    assert store.get_account(account.id).phone == "+33612345678"
    assert phone_lock_owner(OTHER_E164) is None


def test_a_code_sent_before_a_password_change_is_refused(phone_site):
    account = with_number()
    client = logged_in()
    ask_for(client, OTHER)
    code = code_to(OTHER_E164)
    changed = client.post(
        "/accounts/password/",
        {"old_password": PASSWORD, "new_password1": OTHER_PASSWORD, "new_password2": OTHER_PASSWORD},
    )
    assert changed.status_code == 302

    refused = client.post("/accounts/phone/verify/", {"code": code}, follow=True)

    assert "This code no longer works: the number or the password changed since it was sent." in messages_of(refused)
    assert store.get_account(account.id).phone == NUMBER_E164
    assert phone_lock_owner(OTHER_E164) is None


def test_a_verification_whose_transaction_follows_a_password_change_is_cancelled(phone_site, monkeypatch):
    account = with_number()
    client = logged_in()
    ask_for(client, OTHER)

    def password_changed(account_id):
        store.set_password_hash(store.get_account(account_id), make_password(OTHER_PASSWORD))

    after_the_verifications_read(monkeypatch, password_changed)
    refused = client.post("/accounts/phone/verify/", {"code": code_to(OTHER_E164)}, follow=True)

    refused_and_nothing_moved(refused, account, "This code no longer works: the number or the password changed")


def test_wrong_codes_are_counted_and_the_last_one_kills_the_code(phone_site):
    with_number()
    client = logged_in()
    ask_for(client, OTHER)
    code = code_to(OTHER_E164)

    first = type_code(client, wrong_code(code))
    type_code(client, wrong_code(code))
    last = client.post("/accounts/phone/verify/", {"code": wrong_code(code)}, follow=True)
    after = type_code(client, code)

    assert first.status_code == 400 and first.context["form"].has_error("code", "incorrect_code")
    assert "Too many wrong codes: this code no longer works. Ask for a new one." in messages_of(last)
    assert after["Location"] == "/accounts/phone/change/"
    assert phone_lock_owner(OTHER_E164) is None


def test_a_second_change_within_a_minute_is_refused_with_429(phone_site):
    with_number()
    client = logged_in()
    ask_for(client, OTHER)

    refused = ask_for(client, "+33 6 12 34 56 78")

    assert refused.status_code == 429
    assert texts_to("+33612345678") == []


def test_wrong_codes_counted_after_a_right_codes_read_stop_it(phone_site, monkeypatch):
    account = with_number()
    client = logged_in()
    ask_for(client, OTHER)
    tries = flows.pending_change(client_request(client)).tries()

    def others_guessed_wrong(account_id):
        # Three wrong codes, from requests that share this session's code, are counted after
        # this request read the code's tries (none), before its transaction.
        for _ in range(3):
            assert tries.count(time.time())

    after_the_verifications_read(monkeypatch, others_guessed_wrong)
    refused = client.post("/accounts/phone/verify/", {"code": code_to(OTHER_E164)}, follow=True)

    refused_and_nothing_moved(refused, account, "Too many wrong codes: this code no longer works.")


def after_the_verifications_read(monkeypatch, happen):
    """Once a verification has read the account, ``happen(account_id)`` lands (another
    request's write), before the verification's transaction."""
    read = phone_store.read_account

    def read_then(account_id):
        found = read(account_id)
        happen(account_id)
        return found

    monkeypatch.setattr(phone_store, "read_account", read_then)


def refused_and_nothing_moved(response, account, message):
    """The code was refused (the page says ``message``...) and the account kept its number."""
    assert any(text.startswith(message) for text in messages_of(response)), messages_of(response)
    assert store.get_account(account.id).phone == NUMBER_E164
    assert phone_lock_owner(OTHER_E164) is None


def client_request(client):
    """A request carrying ``client``'s session, as a flow reads it."""
    from django.test import RequestFactory

    request = RequestFactory().get("/")
    request.session = client.session
    return request


def test_the_address_is_told_of_a_new_number_and_of_its_removal(phone_site, settings, mailoutbox):
    settings.ACCOUNTS_SIGNUP_FIELDS = ["email*", "phone", "password1*"]
    with_number()
    client = logged_in()
    ask_for(client, OTHER)
    type_code(client, code_to(OTHER_E164))
    client.post("/accounts/phone/remove/")

    changed, removed = mailoutbox
    assert changed.to == removed.to == ["ada@example.com"]
    assert "is now +447911123456; it was +819012345678" in changed.body
    assert "has no phone number now; it was +447911123456" in removed.body
    assert "/accounts/password/reset/" in changed.body
