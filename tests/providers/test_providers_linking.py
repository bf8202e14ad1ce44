"""Linking never trusts an address alone, on DynamoDB Local with the test OpenID provider:
an identity no account holds never logs into the account holding its address; a provider's
address is taken as verified only when the provider verified it and it is free; the second
factor still applies; and the provider path tells no more about addresses than sign-up."""

import time

import pytest
from django.test import Client

from accounts import store
from accounts.providers import store as provider_store
from tests.mfa import code_of, enable_totp, second_step
from tests.oidc import (  # noqa: F401
    CALLBACK_PATH,
    callback_query,
    oidc_provider,
    oidc_site,
    provider_login,
    sign_in_at_provider,
)
from tests.seeding import read_lock
from tests.web import signed_up_client

pytestmark = pytest.mark.dynamodb_local
SIGNUP = "/accounts/providers/signup/"


def link(client, login):
    response = client.post("/accounts/providers/test/link/")
    back = sign_in_at_provider(response["Location"], login, "http://testserver" + CALLBACK_PATH)
    return client.get(CALLBACK_PATH, callback_query(back))


def test_pre_account_hijack_an_unverified_claim_to_the_victims_address_gets_no_access(oidc_site):
    signed_up_client("ada@example.com", "ada")
    attacker = Client()

    # mallory signed up at the provider with ada's address, which it never verified.
    response = provider_login(attacker, "mallory")
    assert response["Location"] == SIGNUP
    assert "_auth_user_id" not in attacker.session
    page = attacker.post(SIGNUP, {"email": "ada@example.com", "username": "mallory"})

    assert "_auth_user_id" not in attacker.session
    assert page.status_code == 200 and page.context["form"].has_error("email")
    ada = store.get_by_username("ada")
    assert ada.oidc_identities is None
    assert read_lock(provider_store.identity_lock_key(oidc_site.issuer, "mallory")) == (False, None)


def test_a_verified_address_of_an_existing_account_does_not_log_into_it(oidc_site):
    signed_up_client("alice@example.com", "alice")
    stranger = Client()

    response = provider_login(stranger, "alice")

    assert response["Location"] == SIGNUP
    assert "_auth_user_id" not in stranger.session
    assert store.get_by_username("alice").oidc_identities is None


def test_the_owner_logs_in_and_links_then_the_identity_logs_in(oidc_site):
    owner = signed_up_client("alice@example.com", "alice")
    link(owner, "alice")

    browser = Client()
    provider_login(browser, "alice")

    assert browser.session["_auth_user_id"] == store.get_by_username("alice").id


def test_a_verified_free_address_of_the_provider_is_taken_at_once(oidc_site, settings):
    settings.ACCOUNTS_EMAIL_VERIFICATION = "mandatory"
    settings.ACCOUNTS_PREVENT_ENUMERATION = False
    client = Client()
    provider_login(client, "alice")

    response = client.post(SIGNUP, {"email": "alice@example.com", "username": "alice"})

    account = store.get_by_username("alice")
    assert account.email_verified is True
    assert client.session["_auth_user_id"] == account.id
    assert response.status_code == 302 and response["Location"] != "/accounts/verify/sent/"


def test_another_address_than_the_providers_is_confirmed_by_mail(oidc_site, settings, mailoutbox):
    settings.ACCOUNTS_EMAIL_VERIFICATION = "mandatory"
    settings.ACCOUNTS_PREVENT_ENUMERATION = False
    client = Client()
    provider_login(client, "alice")

    response = client.post(SIGNUP, {"email": "alice.other@example.com", "username": "alice"})

    assert response["Location"] == "/accounts/verify/sent/"
    assert store.get_by_username("alice").email_verified is False
    assert [mail.to for mail in mailoutbox] == [["alice.other@example.com"]]


def test_an_address_the_provider_did_not_verify_is_confirmed_by_mail(oidc_site, settings, mailoutbox):
    settings.ACCOUNTS_EMAIL_VERIFICATION = "mandatory"
    settings.ACCOUNTS_PREVENT_ENUMERATION = False
    client = Client()
    provider_login(client, "mallory")

    response = client.post(SIGNUP, {"email": "ada@example.com", "username": "mallory"})

    assert response["Location"] == "/accounts/verify/sent/"
    assert store.get_by_username("mallory").email_verified is False


def test_with_enumeration_prevented_a_taken_and_a_free_address_answer_alike(oidc_site, settings):
    settings.ACCOUNTS_PREVENT_ENUMERATION = True
    signed_up_client("alice@example.com", "alice")
    answers = []
    for login, email in (("alice", "alice@example.com"), ("bob", "bob@example.com")):
        client = Client()
        provider_login(client, login)
        answers.append(client.post(SIGNUP, {"email": email, "username": f"{login}2"}))

    assert [(answer.status_code, answer["Location"]) for answer in answers] == [(302, "/accounts/verify/sent/")] * 2


def test_with_enumeration_prevented_even_a_verified_free_address_is_confirmed_by_mail(oidc_site, settings):
    settings.ACCOUNTS_PREVENT_ENUMERATION = True
    client = Client()
    provider_login(client, "bob")

    client.post(SIGNUP, {"email": "bob@example.com", "username": "bob"})

    assert store.get_by_username("bob").email_verified is False


def test_the_second_factor_still_applies_after_a_provider_login(oidc_site):
    owner = signed_up_client("alice@example.com", "alice")
    secret, _ = enable_totp(owner)
    link(owner, "alice")

    browser = Client()
    response = provider_login(browser, "alice")

    assert response["Location"] == "/accounts/mfa/authenticate/"
    assert "_auth_user_id" not in browser.session
    # The next time step's code: the one enabling the app was spent.
    second_step(browser, code_of(secret, at=time.time() + 30))
    assert browser.session["_auth_user_id"] == store.get_by_username("alice").id
