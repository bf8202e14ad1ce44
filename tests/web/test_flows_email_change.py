"""The email change flow, called as both front ends call it, on DynamoDB Local: the
request, the key's confirmation and the cancellation, each outcome."""

import pytest

from accounts import ratelimit, store, verification
from accounts.exceptions import StaleItem, UniqueViolation
from accounts.form_errors import field_errors
from accounts.internal.flows import email_change
from tests.flow_requests import flow_request, stored_account
from tests.mail import link_in, mails_to, path_of

pytestmark = pytest.mark.dynamodb_local


def key_mailed_to(email):
    return path_of(link_in(mails_to(email)[-1])).split("/")[-2]


def test_a_verified_account_asking_for_a_free_address_gets_a_link_there_and_a_notice(ddb):
    account = stored_account()

    changing = email_change.request_email_change(flow_request(account), account=account, email="lovelace@example.com")

    assert (changing.kind, changing.mail) == (email_change.EMAIL_CHANGE, verification.SENT)
    assert "/accounts/email/confirm/" in mails_to("lovelace@example.com")[-1].body
    assert len(mails_to("ada@example.com")) == 1
    stored = store.get_account(account.id)
    assert stored.email == "ada@example.com" and stored.pending_email == "lovelace@example.com"


def test_an_address_a_verified_account_holds_gives_the_email_error_from_the_cancelled_transaction(ddb):
    stored_account("grace@example.com", "grace")
    account = stored_account()

    changing = email_change.request_email_change(flow_request(account), account=account, email="grace@example.com")

    assert changing.kind == email_change.REFUSED
    assert isinstance(changing.refusal, UniqueViolation) and changing.refusal.fields == {"email"}
    assert field_errors(changing.refusal)["email"].code == "email_taken"
    assert mails_to("grace@example.com") == []
    assert store.get_account(account.id).pending_email is None


def test_an_unverified_address_is_replaced_at_once_and_the_new_one_gets_a_verification_link(ddb, settings):
    settings.ACCOUNTS_EMAIL_VERIFICATION = "mandatory"
    account = stored_account(verified=False)

    changing = email_change.request_email_change(flow_request(account), account=account, email="lovelace@example.com")

    assert (changing.kind, changing.mail) == (email_change.VERIFICATION, verification.SENT)
    assert store.get_account(account.id).email == "lovelace@example.com"
    assert "/accounts/verify/" in mails_to("lovelace@example.com")[-1].body


def test_the_current_address_typed_again_cancels_the_pending_change_and_mails_nobody(ddb):
    account = stored_account()
    email_change.request_email_change(flow_request(account), account=account, email="lovelace@example.com")
    account = store.get_account(account.id)
    mailed = len(mails_to("ada@example.com"))

    changing = email_change.request_email_change(flow_request(account), account=account, email="ADA@example.com")

    assert (changing.kind, changing.cancelled) == (email_change.KEPT, "lovelace@example.com")
    assert store.get_account(account.id).pending_email is None
    assert len(mails_to("ada@example.com")) == mailed


def test_past_the_change_email_limit_a_request_is_refused_but_typing_the_address_again_is_not(ddb, settings):
    settings.ACCOUNTS_RATE_LIMITS = {"change_email": "1/m/user"}
    account = stored_account()
    email_change.request_email_change(flow_request(account), account=account, email="lovelace@example.com")
    account = store.get_account(account.id)

    with pytest.raises(ratelimit.RateLimited):
        email_change.request_email_change(flow_request(account), account=account, email="countess@example.com")
    kept = email_change.request_email_change(flow_request(account), account=account, email="ada@example.com")

    assert kept.kind == email_change.KEPT and kept.cancelled == "lovelace@example.com"
    assert mails_to("countess@example.com") == []


def test_confirming_the_mailed_key_changes_the_address(ddb):
    account = stored_account()
    email_change.request_email_change(flow_request(account), account=account, email="lovelace@example.com")

    confirmed = email_change.confirm_email_change(flow_request(), key=key_mailed_to("lovelace@example.com"))

    assert confirmed.outcome == verification.CHANGED
    assert store.get_account(account.id).email == "lovelace@example.com"


def test_confirming_after_another_account_took_the_address_is_taken(ddb):
    account = stored_account()
    email_change.request_email_change(flow_request(account), account=account, email="lovelace@example.com")
    stored_account("lovelace@example.com", "grace")

    confirmed = email_change.confirm_email_change(flow_request(), key=key_mailed_to("lovelace@example.com"))

    assert confirmed.outcome == verification.TAKEN
    assert store.get_account(account.id).email == "ada@example.com"


def test_cancelling_names_the_address_of_the_pending_change_and_its_key_stops_working(ddb):
    account = stored_account()
    email_change.request_email_change(flow_request(account), account=account, email="lovelace@example.com")

    cancelling = email_change.cancel_email_change(account=store.get_account(account.id))

    assert cancelling == email_change.EmailChangeCancel(cancelled="lovelace@example.com")
    confirmed = email_change.confirm_email_change(flow_request(), key=key_mailed_to("lovelace@example.com"))
    assert confirmed.outcome == verification.STALE


def test_cancelling_an_account_changed_since_it_was_read_is_refused_stale(ddb):
    account = stored_account()
    email_change.request_email_change(flow_request(account), account=account, email="lovelace@example.com")
    as_read = store.get_account(account.id)
    store.change_username(store.get_account(account.id), "countess")

    cancelling = email_change.cancel_email_change(account=as_read)

    assert cancelling.cancelled is None and isinstance(cancelling.refusal, StaleItem)
    assert store.get_account(account.id).pending_email == "lovelace@example.com"


def test_reading_a_key_names_the_old_and_new_address_and_a_forged_one_nothing(ddb):
    account = stored_account()
    email_change.request_email_change(flow_request(account), account=account, email="lovelace@example.com")

    claim = email_change.read_key(key=key_mailed_to("lovelace@example.com"))

    assert (claim.account_id, claim.old_email, claim.new_email) == (
        account.id,
        "ada@example.com",
        "lovelace@example.com",
    )
    assert email_change.read_key(key="forged") is None
