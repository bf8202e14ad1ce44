"""The email verification flow, called as both front ends call it, on DynamoDB Local:
applying a key, discarding a sign-up, sending the link again."""

import pytest

from accounts import store, verification
from accounts.internal.flows import email_verification
from accounts.models import User
from accounts.pending import PENDING_SESSION_KEY, remember_pending
from tests.flow_requests import flow_request, stored_account
from tests.mail import mails_to

pytestmark = pytest.mark.dynamodb_local


@pytest.fixture
def mandatory(ddb, settings):
    settings.ACCOUNTS_EMAIL_VERIFICATION = "mandatory"


def pending_in(request, account):
    remember_pending(request, account.id, account.email, verification.SENT)
    return request


def test_a_key_verifies_the_address_it_names(mandatory):
    account = stored_account(verified=False)

    verified = email_verification.verify_email(
        flow_request(), key=verification.verification_token(account), end_pending=False
    )

    assert verified.outcome == verification.VERIFIED and verified.confirmed
    assert verified.account.id == account.id
    assert store.is_verified(store.get_account(account.id))


def test_a_key_for_an_address_another_account_verified_first_is_taken(mandatory):
    first = stored_account(username="ada", verified=False)
    second = stored_account(username="ada2", verified=False)
    email_verification.verify_email(flow_request(), key=verification.verification_token(first), end_pending=False)

    verified = email_verification.verify_email(
        flow_request(), key=verification.verification_token(second), end_pending=False
    )

    assert verified.outcome == verification.TAKEN and not verified.confirmed
    assert not store.is_verified(store.get_account(second.id))


def test_a_forged_key_is_invalid(mandatory):
    verified = email_verification.verify_email(flow_request(), key="forged", end_pending=True)

    assert verified.outcome == verification.INVALID and verified.account is None


def test_verifying_ends_this_sessions_pending_sign_up_only_when_asked(mandatory):
    account = stored_account(verified=False)
    key = verification.verification_token(account)
    kept, ended = pending_in(flow_request(), account), pending_in(flow_request(), account)

    email_verification.verify_email(kept, key=key, end_pending=False)
    email_verification.verify_email(ended, key=key, end_pending=True)

    assert kept.session[PENDING_SESSION_KEY]["id"] == account.id
    assert PENDING_SESSION_KEY not in ended.session


def test_discarding_deletes_the_unverified_sign_up(mandatory):
    account = stored_account(verified=False)

    discarded = email_verification.discard_signup(key=verification.verification_token(account))

    assert discarded.outcome == verification.DISCARDED
    assert store.get_account(account.id) is None


def test_a_verified_account_is_never_discarded(mandatory):
    account = stored_account(verified=False)
    key = verification.verification_token(account)
    email_verification.verify_email(flow_request(), key=key, end_pending=False)

    discarded = email_verification.discard_signup(key=key)

    assert discarded.outcome == verification.ALREADY_VERIFIED
    assert store.get_account(account.id) is not None


def test_resend_with_nothing_pending_sends_nothing(mandatory):
    resent = email_verification.resend_verification(flow_request())

    assert resent.outcome == email_verification.NOTHING_PENDING


def test_resend_of_this_sessions_sign_up_mails_the_link_and_remembers_the_outcome(mandatory):
    account = stored_account(verified=False)
    request = pending_in(flow_request(), account)

    resent = email_verification.resend_verification(request)

    assert resent.outcome == verification.SENT and resent.email == "ada@example.com"
    assert "/accounts/verify/" in mails_to("ada@example.com")[-1].body
    # The sign-up's own proof (none here) is kept for the login its verification goes on with.
    assert request.session[PENDING_SESSION_KEY] == {
        "id": account.id,
        "email": account.email,
        "outcome": "sent",
        "method": None,
    }


def test_a_second_resend_within_the_limit_is_too_soon_and_mails_nothing(mandatory):
    account = stored_account(verified=False)
    request = pending_in(flow_request(), account)
    email_verification.resend_verification(request)

    resent = email_verification.resend_verification(request)

    assert resent.outcome == verification.TOO_SOON
    assert len(mails_to("ada@example.com")) == 1
    assert request.session[PENDING_SESSION_KEY]["outcome"] == verification.TOO_SOON


def test_resend_of_a_sign_up_gone_since_forgets_it(mandatory):
    account = stored_account(verified=False)
    request = pending_in(flow_request(), account)
    store.discard_signup(account)

    resent = email_verification.resend_verification(request)

    assert resent.outcome == email_verification.GONE and resent.email == "ada@example.com"
    assert PENDING_SESSION_KEY not in request.session
    assert mails_to("ada@example.com") == []


def test_resend_of_an_address_verified_meanwhile_forgets_the_sign_up_and_mails_nothing(mandatory):
    account = stored_account(verified=False)
    request = pending_in(flow_request(), account)
    email_verification.verify_email(flow_request(), key=verification.verification_token(account), end_pending=False)

    resent = email_verification.resend_verification(request)

    assert resent.outcome == email_verification.ALREADY_VERIFIED
    assert PENDING_SESSION_KEY not in request.session
    assert mails_to("ada@example.com") == []


def test_resend_for_a_signed_in_account_leaves_the_session_alone(mandatory):
    account = stored_account(verified=False)
    request = flow_request(account)

    resent = email_verification.resend_verification(request, account=account)

    assert resent.outcome == verification.SENT
    assert PENDING_SESSION_KEY not in request.session


def test_reading_a_key_names_its_account_until_the_password_changes(mandatory):
    account = stored_account(verified=False)
    key = verification.verification_token(account)

    email, named = email_verification.read_key(key=key)
    assert (email, named.id) == ("ada@example.com", account.id)

    user = User.from_account(store.get_account(account.id))
    user.set_password("Another-Password-42")
    user.save()
    assert email_verification.read_key(key=key) == ("ada@example.com", None)
    assert email_verification.read_key(key="forged") is None
