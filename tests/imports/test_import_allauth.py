"""Importing a real Django + django-allauth database (built by their own migrations and APIs,
tests/imports/allauth_site.py): each user as a sign-up would be, with its address and its
verified flag, its flags and dates, its password hash as it is (every Django hasher), its
OpenID Connect identities and its second factors; the users then log in with their old
passwords, through the form and the API, and the stored hash becomes the site's preferred."""

import json
import time
from datetime import UTC, datetime

import pytest
from django.contrib.auth.hashers import identify_hasher, is_password_usable
from django.test import Client
from django.utils.http import int_to_base36
from webauthn.helpers import bytes_to_base64url

from accounts import store
from accounts.imports.allauth import passkey_of
from accounts.imports.candidates import account_id_of
from accounts.imports.records import SourceUser
from accounts.providers.store import identities_of, identity_owner
from tests import authenticator
from tests.headless import APIClient
from tests.imports import SITE_HASHERS, run_import
from tests.imports.allauth_site import sqlite_site
from tests.mfa import ORIGIN, code_of, options, passkey_login, second_step
from tests.web import PASSWORD, login, stored_accounts

pytestmark = pytest.mark.dynamodb_local

HASHERS = ["pbkdf2_sha256", "pbkdf2_sha1", "argon2", "bcrypt_sha256", "bcrypt", "scrypt", "md5"]
SECRET = "JBSWY3DPEHPK3PXPJBSWY3DPEHPK3PXP"
ISSUER = "https://login.corp.example"
JOINED = "2019-03-04T05:06:07.123456+00:00"
LAST_LOGIN = "2024-11-12T13:14:15+00:00"


def passkey_registration():
    """A registration answer for this site's relying party, as a browser sent it to the old
    site (allauth keeps it whole), and the credential that made it."""
    registration = {"rp": {"id": "testserver"}, "user": {"id": bytes_to_base64url(b"42")}, "challenge": "Y2hhbGxlbmdl"}
    credential, answer = authenticator.create(registration, ORIGIN)
    return credential, json.loads(answer)


@pytest.fixture(scope="module")
def site(tmp_path_factory):
    """The old site: one user per hasher, and users with each of allauth's records."""
    site = sqlite_site(tmp_path_factory.mktemp("allauth"))
    credential, registration = passkey_registration()
    hashed = [
        {
            "username": f"user-{hasher.replace('_', '-')}",
            "email": f"{hasher}@example.com",
            "password": PASSWORD,
            "hasher": hasher,
            "addresses": [{"email": f"{hasher}@example.com", "verified": True, "primary": True}],
        }
        for hasher in HASHERS
    ]
    made = site.make_users(
        *hashed,
        {
            "username": "ada",
            "email": "ada@example.com",
            "password": PASSWORD,
            "hasher": "pbkdf2_sha256",
            "is_staff": True,
            "date_joined": JOINED,
            "last_login": LAST_LOGIN,
            "addresses": [
                {"email": "ada@example.com", "verified": True, "primary": True},
                {"email": "ada@work.example", "verified": True, "primary": False},
            ],
        },
        {"username": "root", "email": "root@example.com", "is_staff": True, "is_superuser": True},
        {"username": "gone", "email": "gone@example.com", "is_active": False},
        {"username": "nopassword", "email": "nopassword@example.com", "unusable": True},
        {"username": "unconfirmed", "email": "unconfirmed@example.com"},
        {
            "username": "oidc",
            "email": "oidc@example.com",
            "unusable": True,
            "addresses": [{"email": "oidc@example.com", "verified": True, "primary": True}],
            "identities": [
                {
                    "provider": "corp",
                    "uid": "subject-7",
                    "extra_data": {"id_token": {"iss": ISSUER, "sub": "subject-7"}},
                },
                {"provider": "github", "uid": "1234", "extra_data": {}},
            ],
        },
        {
            "username": "guarded",
            "email": "guarded@example.com",
            "password": PASSWORD,
            "addresses": [{"email": "guarded@example.com", "verified": True, "primary": True}],
            "totp": SECRET,
            "recovery_codes": True,
            "used_codes": [0],
            "webauthn": [{"name": "Old laptop", "credential": registration}],
        },
    )
    # allauth registered it with the user's primary key in base 36 as its handle.
    credential.user_handle = int_to_base36(made["guarded"]["id"]).encode()
    site.made, site.credential = made, credential
    return site


@pytest.fixture
def imported(ddb, site, settings, tmp_path):
    """The site's users imported into this site (its hashers, its OpenID Connect provider),
    one address per account (the default)."""
    return import_site(site, settings, tmp_path)


@pytest.fixture
def imported_with_several_addresses(ddb, site, settings, tmp_path):
    """The same, into a site that allows several addresses per account."""
    settings.ACCOUNTS_MAX_EMAIL_ADDRESSES = 3
    return import_site(site, settings, tmp_path)


def import_site(site, settings, tmp_path):
    settings.PASSWORD_HASHERS = SITE_HASHERS
    settings.ACCOUNTS_OIDC_PROVIDERS = [{"id": "corp", "name": "Corp", "issuer": ISSUER, "client_id": "site"}]
    return run_import(site.url, report=tmp_path / "report.jsonl")


def test_allauth_users_come_in_with_their_primary_address_flags_and_dates(imported):
    ada = store.get_by_username("ada")

    assert ada.email == "ada@example.com"
    assert ada.email_verified is True
    assert ada.is_staff is True
    assert ada.created == datetime.fromisoformat(JOINED)
    assert dict(ada.imported.as_dict()) == {"source_id": "8", "last_login": LAST_LOGIN}
    assert ada.id == account_id_of(SourceUser(8, date_joined=datetime.fromisoformat(JOINED)))


def test_a_further_verified_allauth_address_is_a_member_of_the_account_holding_its_lock_and_logs_in(
    imported_with_several_addresses, site
):
    ada = store.get_by_username("ada")

    assert (ada.email, ada.email_addresses, ada.unverified_emails) == ("ada@example.com", {"ada@work.example"}, None)
    assert store.email_owner_id("ada@work.example") == store.email_owner_id("ada@example.com") == ada.id
    report = imported_with_several_addresses.report
    assert [line for line in report if line["source_id"] == site.made["ada"]["id"]] == []
    assert login(Client(), "ada@WORK.example", PASSWORD).status_code == 302


def test_with_one_address_per_account_a_further_allauth_address_is_reported_and_the_user_imported(imported, site):
    lines = [line for line in imported.report if line["code"] == "extra_address_not_imported"]

    assert lines == [
        {
            "source_id": site.made["ada"]["id"],
            "field": "email",
            "code": "extra_address_not_imported",
            "message": "An account holds one address: this one was not imported.",
            "detail": "ada@work.example",
        }
    ]
    assert store.get_by_username("ada") is not None
    assert imported.status == 1


def test_an_address_allauth_never_verified_comes_in_unverified_and_holds_no_lock(imported):
    unconfirmed = store.get_by_username("unconfirmed")

    assert unconfirmed.email_verified is False
    assert unconfirmed.expires is None
    assert store.email_owner_id("unconfirmed@example.com") is None


def test_flags_are_carried(imported):
    assert store.get_by_username("gone").is_active is False
    root = store.get_by_username("root")
    assert (root.is_staff, root.is_superuser) == (True, True)
    assert store.get_by_username("ada").is_superuser is False


def test_an_unusable_password_stays_unusable(imported):
    assert not is_password_usable(store.get_by_username("nopassword").password)


@pytest.mark.parametrize("hasher", HASHERS)
def test_a_user_logs_in_with_the_old_password_of_each_hasher_and_the_hash_is_then_the_sites(imported, hasher):
    username = f"user-{hasher.replace('_', '-')}"
    assert identify_hasher(store.get_by_username(username).password).algorithm == hasher

    response = login(Client(), username, PASSWORD)

    assert response.status_code == 302, response.content.decode()
    assert identify_hasher(store.get_by_username(username).password).algorithm == "argon2"


def test_a_user_logs_in_through_the_api_and_the_hash_is_then_the_sites(imported):
    response = APIClient().login("user-bcrypt-sha256", PASSWORD)

    assert response.status_code == 200, response.content.decode()
    assert identify_hasher(store.get_by_username("user-bcrypt-sha256").password).algorithm == "argon2"


def test_an_identity_at_a_configured_provider_becomes_its_identity_lock(imported, site):
    oidc = store.get_by_username("oidc")

    assert identities_of(oidc) == [(ISSUER, "subject-7")]
    assert identity_owner(ISSUER, "subject-7") == oidc.PK
    assert {"source_id": site.made["oidc"]["id"], "code": "identity_not_imported", "detail": "github:1234"}.items() <= (
        next(line for line in imported.report if line["code"] == "identity_not_imported").items()
    )


def test_the_totp_secret_recovery_codes_and_passkey_of_allauth_are_the_accounts(imported, site):
    guarded = store.get_by_username("guarded")

    assert guarded.totp_secret == SECRET
    assert len(guarded.recovery_codes) == 9 and len(guarded.used_recovery_codes) == 1
    assert guarded.passkeys == {site.credential.b64_id}

    client = Client()
    assert login(client, "guarded", PASSWORD)["Location"].startswith("/accounts/mfa/authenticate/")
    assert second_step(client, code_of(SECRET, at=time.time() + 30))["Location"] == "/accounts/profile/"


@pytest.mark.parametrize(("extensions", "discoverable"), [({"credProps": {"rk": True}}, True), ({}, None)])
def test_whether_an_allauth_passkey_logs_in_alone_is_its_credprops_answer_else_not_said(extensions, discoverable):
    _, registration = passkey_registration()
    registration["clientExtensionResults"] = extensions

    assert passkey_of({"name": "Key", "credential": registration}, None, None).discoverable is discoverable


def test_an_unused_allauth_recovery_code_logs_in_and_a_used_one_is_refused(imported, site):
    codes = site.made["guarded"]["recovery_codes"]
    client = Client()
    login(client, "guarded", PASSWORD)

    refused = second_step(client, codes[0])
    accepted = second_step(client, codes[1])

    assert refused.status_code == 200
    assert accepted["Location"] == "/accounts/profile/"


def test_the_allauth_passkey_is_the_second_step(imported, site):
    client = Client()
    login(client, "guarded", PASSWORD)
    answer = authenticator.get(site.credential, options(client, "second_factor"), ORIGIN)

    response = client.post("/accounts/mfa/authenticate/passkey/", {"credential": answer})

    assert response["Location"] == "/accounts/profile/"


def test_the_allauth_passkey_logs_in_alone_though_it_carries_the_old_sites_user_handle(imported, site):
    client = Client()

    response = passkey_login(client, site.credential)

    assert response["Location"] == "/accounts/profile/"
    assert store.get_by_username("guarded").passkeys == {site.credential.b64_id}


def test_the_allauth_passkey_answering_with_another_user_handle_gets_nobody_in(imported, site):
    credential = authenticator.Credential("testserver", b"1", site.credential.id, key=site.credential.key)
    client = Client()

    response = passkey_login(client, credential)

    assert response["Location"] == "/accounts/login/"
    assert "_auth_user_id" not in client.session


def test_every_allauth_user_is_imported_and_a_second_run_creates_nothing(imported, site, tmp_path):
    ids = sorted(account.id for account in stored_accounts())
    assert len(ids) == len(site.made)
    assert imported.stdout.startswith(f"{len(site.made)} users read: {len(site.made)} imported")

    again = run_import(site.url, report=tmp_path / "again.jsonl")

    assert sorted(account.id for account in stored_accounts()) == ids
    assert f"0 imported, {len(site.made)} already there" in again.stdout
    assert sorted(map(str, again.report)) == sorted(map(str, imported.report))
    assert datetime.now(UTC) > datetime.fromisoformat(JOINED)
