"""The flows of several addresses per account, called as both front ends call them (the email
page and the API's ``account/email``), on DynamoDB Local: outcomes with per-field errors, the
link, login by a verified other address, and mail to the address typed."""

import re

import pytest
from django.test import Client

from accounts import addresses, idempotency, store
from accounts.exceptions import InvalidUniqueValue
from accounts.form_errors import field_errors
from accounts.internal.flows import email_addresses, password_reset
from accounts.internal.flows import login as login_flow
from tests.engine.test_engine import locks
from tests.flow_requests import flow_request, stored_account
from tests.invariants import violations
from tests.mail import link_in, mails_to, path_of
from tests.web import PASSWORD

pytestmark = pytest.mark.dynamodb_local


@pytest.fixture
def ada(ddb, settings):
    settings.ACCOUNTS_MAX_EMAIL_ADDRESSES = 3
    settings.ACCOUNTS_RATE_LIMITS = {}
    return stored_account("ada@example.com", "ada")


def key_mailed_to(email):
    return path_of(link_in(mails_to(email)[-1])).rstrip("/").rsplit("/", 1)[-1]


def confirmed(account, email):
    assert email_addresses.add_address(flow_request(account), account=account, email=email).done
    outcome = email_addresses.verify_address(flow_request(), key=key_mailed_to(email))
    assert outcome.outcome == "verified"
    return store.get_account(account.id)


def test_adding_returns_the_mails_outcome_and_lists_the_address_unconfirmed(ada):
    outcome = email_addresses.add_address(flow_request(ada), account=ada, email="work@example.org")

    assert outcome.done and outcome.mail == "sent" and outcome.email == "work@example.org"
    listed = email_addresses.list_addresses(account=store.get_account(ada.id))
    assert listed == [
        addresses.Address("ada@example.com", True, True),
        addresses.Address("work@example.org", False, False),
    ]


def test_an_address_another_account_holds_is_an_error_on_email_naming_it(ada):
    stored_account("bob@example.com", "bob")

    outcome = email_addresses.add_address(flow_request(ada), account=ada, email="BOB@example.com")

    (error,) = outcome.errors["email"]
    assert error.code == "email_taken"
    assert list(error) == ["BOB@example.com is already in use by another account."]


def test_the_verification_taken_by_another_account_meanwhile_is_taken(ada, settings):
    bob = stored_account("bob@example.com", "bob")
    email_addresses.add_address(flow_request(ada), account=ada, email="shared@example.org")
    ada_key = key_mailed_to("shared@example.org")
    email_addresses.add_address(flow_request(bob), account=bob, email="shared@example.org")
    bob_key = key_mailed_to("shared@example.org")

    assert email_addresses.verify_address(flow_request(), key=bob_key).outcome == "verified"
    assert email_addresses.verify_address(flow_request(), key=ada_key).outcome == "taken"
    assert locks()["UNIQ#EMAIL#shared@example.org"] == bob.PK


def test_the_refusals_of_the_account_as_read_are_errors_on_email(ada):
    account = confirmed(ada, "work@example.org")
    request = flow_request(account)

    cases = {
        "duplicate_email": email_addresses.add_address(request, account=account, email="WORK@example.org"),
        "cannot_remove_primary_email": email_addresses.remove_address(
            request, account=account, email="ada@example.com"
        ),
        "unknown_email": email_addresses.make_primary(request, account=account, email="nobody@example.org"),
    }

    assert {code: [error.code for error in outcome.errors["email"]] for code, outcome in cases.items()} == {
        code: [code] for code in cases
    }


def test_an_account_not_verified_yet_adds_no_address(ddb, settings):
    settings.ACCOUNTS_MAX_EMAIL_ADDRESSES = 3
    carol = stored_account("carol@example.com", "carol", verified=False)

    outcome = email_addresses.add_address(flow_request(carol), account=carol, email="work@example.org")

    assert [error.code for error in outcome.errors["email"]] == ["account_unverified"]


def test_a_change_from_a_stale_read_is_an_error_of_the_whole_request(ada):
    stale = store.get_account(ada.id)
    email_addresses.add_address(flow_request(ada), account=ada, email="one@example.org")

    outcome = email_addresses.add_address(flow_request(stale), account=stale, email="two@example.org")

    assert [error.code for error in outcome.errors[None]] == ["stale"]
    assert store.get_account(ada.id).unverified_emails == {"one@example.org"}


def test_a_request_resent_with_its_idempotency_key_changes_and_mails_nothing_more(ada):
    key = idempotency.ClientKey(key="k-1", operation="add_email", caller=ada.id, fingerprint="body")
    first = email_addresses.add_address(flow_request(ada), account=ada, email="work@example.org", idempotency_key=key)
    again = store.get_account(ada.id)
    resent = email_addresses.add_address(
        flow_request(again), account=again, email="work@example.org", idempotency_key=key
    )

    assert first.mail == "sent" and resent.mail == email_addresses.RESENT and resent.done
    assert len(mails_to("work@example.org")) == 1


def test_the_password_flow_logs_in_with_a_verified_other_address(ada):
    confirmed(ada, "work@example.org")

    outcome = login_flow.authenticate_password(flow_request(), login="Work@Example.org", password=PASSWORD)

    assert outcome.status == login_flow.AUTHENTICATED and outcome.user.pk == ada.id


def test_the_password_flow_refuses_an_address_waiting_for_its_link(ada):
    email_addresses.add_address(flow_request(ada), account=ada, email="work@example.org")

    outcome = login_flow.authenticate_password(flow_request(), login="work@example.org", password=PASSWORD)

    assert outcome.status != login_flow.AUTHENTICATED


def test_a_password_reset_asked_for_another_address_is_mailed_to_it(ada):
    confirmed(ada, "work@example.org")
    mails = len(mails_to("ada@example.com"))

    password_reset.request_password_reset(flow_request(), email="WORK@example.org").send_link()

    assert "/accounts/password/reset/" in mails_to("work@example.org")[-1].body
    assert len(mails_to("ada@example.com")) == mails


def test_a_password_reset_asked_for_an_address_waiting_for_its_link_mails_nobody(ada):
    email_addresses.add_address(flow_request(ada), account=ada, email="work@example.org")
    mails = len(mails_to("work@example.org"))

    password_reset.request_password_reset(flow_request(), email="work@example.org").send_link()

    assert len(mails_to("work@example.org")) == mails


def test_a_login_code_asked_for_another_address_is_mailed_to_it(ada):
    confirmed(ada, "work@example.org")
    client = Client()

    client.post("/accounts/code/", {"login": "work@example.org"})

    code = re.search(r"log in: (\w{8})", mails_to("work@example.org")[-1].body).group(1)
    assert client.post("/accounts/code/confirm/", {"code": code}).status_code == 302
    assert client.session["_auth_user_id"] == ada.id


def test_staff_removal_names_the_actor_and_tells_the_owner(ada):
    account = confirmed(ada, "work@example.org")
    staff_origin = addresses.timeline.Origin(actor="staff-id")

    outcome = email_addresses.remove_address(
        flow_request(account), account=account, email="work@example.org", origin=staff_origin
    )

    assert outcome.done
    assert "The site's staff made this change." in mails_to("ada@example.com")[-1].body
    assert "UNIQ#EMAIL#work@example.org" not in locks()


def test_an_email_change_to_one_of_the_accounts_other_addresses_is_refused_before_sending(ada):
    account = confirmed(ada, "work@example.org")

    with pytest.raises(InvalidUniqueValue) as raised:
        store.change_email(account, "WORK@example.org")

    assert raised.value.code == "duplicate"
    assert field_errors(raised.value)["email"].messages == ["This value is already one of yours."]


def test_making_a_verified_address_primary_over_an_unverified_one_staff_set_verifies_the_account(ada):
    account = confirmed(ada, "work@example.org")
    store.set_unverified_email(account, "typo@example.com")
    account = store.get_account(ada.id)

    outcome = email_addresses.make_primary(flow_request(account), account=account, email="work@example.org")

    assert outcome.done
    final = store.get_account(ada.id)
    assert (final.email, final.email_verified) == ("work@example.org", True)
    assert final.unverified_emails == {"typo@example.com"} and not final.email_addresses
    assert locks()["UNIQ#EMAIL#work@example.org"] == ada.PK
    assert "UNIQ#EMAIL#typo@example.com" not in locks()
    assert violations() == []


def test_the_only_verified_address_of_an_account_whose_primary_staff_unverified_stays(ada):
    account = confirmed(ada, "work@example.org")
    store.set_unverified_email(account, "typo@example.com")
    account = store.get_account(ada.id)

    outcome = email_addresses.remove_address(flow_request(account), account=account, email="work@example.org")

    assert [error.code for error in outcome.errors["email"]] == ["last_verified_email"]
    assert locks()["UNIQ#EMAIL#work@example.org"] == ada.PK


def test_making_the_primary_address_primary_again_changes_nothing_and_tells_nobody(ada):
    mails = len(mails_to("ada@example.com"))

    outcome = email_addresses.make_primary(flow_request(ada), account=ada, email="ADA@example.com")

    assert outcome.done and outcome.email == "ada@example.com"
    assert len(mails_to("ada@example.com")) == mails
