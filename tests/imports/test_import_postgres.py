"""A Django + allauth project on PostgreSQL (its own server, tests/imports/postgres.py):
read through Django's PostgreSQL backend (psycopg, the ``postgres`` extra), its JSON
columns and time zones as that backend gives them."""

from datetime import datetime

import pytest
from django.test import Client

from accounts import store
from accounts.providers.store import identities_of
from tests.imports import SITE_HASHERS, run_import
from tests.imports.allauth_site import AllauthSite
from tests.imports.postgres import postgres_server
from tests.mfa import code_of, second_step
from tests.web import PASSWORD, login

pytestmark = pytest.mark.dynamodb_local

ISSUER = "https://login.corp.example"
SECRET = "JBSWY3DPEHPK3PXPJBSWY3DPEHPK3PXP"


@pytest.fixture(scope="module")
def site(tmp_path_factory):
    with postgres_server() as url:
        site = AllauthSite(tmp_path_factory.mktemp("allauth"), url).migrate()
        site.made = site.make_users(
            {
                "username": "ada",
                "email": "ada@example.com",
                "password": PASSWORD,
                "hasher": "argon2",
                "date_joined": "2020-02-02T02:02:02.020202+00:00",
                "last_login": "2024-04-04T04:04:04+00:00",
                "addresses": [{"email": "ada@example.com", "verified": True, "primary": True}],
                "identities": [{"provider": "corp", "uid": "s-1", "extra_data": {"id_token": {"iss": ISSUER}}}],
                "totp": SECRET,
                "recovery_codes": True,
            },
            {"username": "bob", "email": "bob@example.com"},
            {"username": "BOB", "email": "bob2@example.com", "last_login": "2025-01-01T00:00:00+00:00"},
        )
        yield site


def test_a_postgresql_project_is_imported_with_its_json_columns_and_dates(ddb, site, settings, tmp_path):
    settings.PASSWORD_HASHERS = SITE_HASHERS
    settings.ACCOUNTS_OIDC_PROVIDERS = [{"id": "corp", "name": "Corp", "issuer": ISSUER, "client_id": "site"}]

    run = run_import(site.url, report=tmp_path / "report.jsonl")

    assert run.codes() == {site.made["bob"]["id"]: ["same_username"]}
    ada = store.get_by_username("ada")
    assert ada.created == datetime.fromisoformat("2020-02-02T02:02:02.020202+00:00")
    assert ada.imported["last_login"] == "2024-04-04T04:04:04+00:00"
    assert identities_of(ada) == [(ISSUER, "s-1")]
    assert ada.totp_secret == SECRET and len(ada.recovery_codes) == 10
    client = Client()
    login(client, "ada", PASSWORD)
    assert second_step(client, code_of(SECRET))["Location"] == "/accounts/profile/"
    assert store.get_by_username("BOB").email == "bob2@example.com"
