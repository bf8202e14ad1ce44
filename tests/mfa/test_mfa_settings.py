"""The settings of second factors: where passkeys' relying party comes from, the checks
that guard it, and the demo site's environment variables."""

import ast
import subprocess
import sys
from pathlib import Path

import pytest
from django.core import checks as django_checks
from django.test import Client

from accounts.mfa import checks, passkeys
from tests.web import signed_up_client

ROOT = Path(__file__).resolve().parents[2]


def test_the_relying_party_is_the_site_urls_host_and_origin(settings):
    settings.ACCOUNTS_SITE_URL = "https://accounts.example.com:8443/"

    rp = passkeys.relying_party()

    assert (rp.id, rp.origins, rp.name) == (
        "accounts.example.com",
        ("https://accounts.example.com:8443",),
        "accounts.example.com",
    )


def test_its_id_origin_and_name_may_be_set_apart(settings):
    settings.ACCOUNTS_SITE_URL = "https://accounts.example.com"
    settings.ACCOUNTS_WEBAUTHN_RP_ID = "example.com"
    settings.ACCOUNTS_WEBAUTHN_ORIGIN = ["https://accounts.example.com", "https://www.example.com"]
    settings.ACCOUNTS_MFA_ISSUER = "Example"

    rp = passkeys.relying_party()

    assert (rp.id, rp.origins, rp.name) == (
        "example.com",
        ("https://accounts.example.com", "https://www.example.com"),
        "Example",
    )


def test_without_a_site_url_passkeys_are_unavailable(settings):
    settings.ACCOUNTS_SITE_URL = None
    settings.ACCOUNTS_WEBAUTHN_RP_ID = "example.com"  # an id alone names no origin

    with pytest.raises(passkeys.PasskeyRefused) as refused:
        passkeys.relying_party()

    assert refused.value.message == passkeys.UNAVAILABLE
    assert passkeys.configured_relying_party() is None


@pytest.mark.dynamodb_local
def test_without_a_site_url_the_pages_say_passkeys_are_unavailable_and_never_fail(ddb, settings):
    settings.ACCOUNTS_SITE_URL = None
    client = Client()  # its requests' Host, testserver, is never the relying party

    page = client.get("/accounts/login/")
    options = client.post("/accounts/mfa/passkey/options/login/")

    assert page.status_code == 200
    html = page.content.decode()
    assert str(passkeys.UNAVAILABLE) in html and "data-passkey=" not in html
    assert options.status_code == 503 and options.json()["error"] == "unavailable"
    assert options.json()["message"] == str(passkeys.UNAVAILABLE)


@pytest.mark.dynamodb_local
def test_without_a_site_url_the_authenticator_pages_still_work(ddb, settings):
    client = signed_up_client()
    settings.ACCOUNTS_SITE_URL = None

    totp_page = client.get("/accounts/mfa/totp/")
    passkeys_page = client.get("/accounts/mfa/passkeys/")

    assert totp_page.status_code == 200 and totp_page.context["uri"].startswith("otpauth://totp/")
    assert passkeys_page.status_code == 200 and str(passkeys.UNAVAILABLE) in passkeys_page.content.decode()


@pytest.mark.parametrize("url", ["http://127.0.0.1:8000", "http://[::1]:8000"])
def test_an_ip_address_as_relying_party_is_a_warning_that_passkeys_are_off(settings, url):
    settings.ACCOUNTS_SITE_URL = url

    (warning,) = checks.check_relying_party_id(None)

    assert warning.id == "accounts.mfa.W002"
    assert warning.level == django_checks.WARNING and not warning.is_serious()
    assert "Passkeys are off" in warning.msg


@pytest.mark.dynamodb_local
def test_a_site_on_an_ip_address_starts_and_offers_every_second_factor_but_passkeys(ddb, settings):
    settings.ACCOUNTS_SITE_URL = "http://127.0.0.1:8000"
    client = signed_up_client()

    serious = [message for message in django_checks.run_checks() if message.is_serious()]
    totp_page = client.get("/accounts/mfa/totp/")
    passkeys_page = client.get("/accounts/mfa/passkeys/")
    options = Client().post("/accounts/mfa/passkey/options/login/")

    assert serious == []
    assert totp_page.status_code == 200 and totp_page.context["uri"].startswith("otpauth://totp/")
    assert passkeys_page.status_code == 200 and str(passkeys.UNAVAILABLE) in passkeys_page.content.decode()
    assert options.status_code == 503 and options.json()["message"] == str(passkeys.UNAVAILABLE)


def test_localhost_is_a_relying_party(settings):
    settings.ACCOUNTS_SITE_URL = "http://localhost:8000"

    assert checks.check_relying_party_id(None) == []


def test_a_site_without_its_address_is_warned_that_passkeys_are_unavailable(settings):
    settings.DEBUG = True
    settings.ACCOUNTS_SITE_URL = None
    assert [warning.id for warning in checks.check_relying_party_configured(None)] == ["accounts.mfa.W001"]

    settings.ACCOUNTS_SITE_URL = "https://accounts.example.com"
    assert checks.check_relying_party_configured(None) == []


def demo_setting(name, **environment):
    """A setting of the demo site (project/settings.py) under ``environment``."""
    code = f"import project.settings as s; print(repr(s.{name}))"
    env = {"PATH": "/usr/bin:/bin", "DJANGO_SECRET_KEY": "x", **environment}
    result = subprocess.run([sys.executable, "-c", code], cwd=ROOT, env=env, capture_output=True, text=True, check=True)
    return ast.literal_eval(result.stdout.strip())


def test_the_demo_reads_its_address_and_the_staff_policy_from_the_environment():
    assert demo_setting("ACCOUNTS_SITE_URL", DJANGO_DEBUG="1") == "http://localhost:8000"
    assert demo_setting("ACCOUNTS_SITE_URL", DJANGO_DEBUG="0") is None
    assert (
        demo_setting("ACCOUNTS_SITE_URL", ACCOUNTS_SITE_URL="https://accounts.example.com")
        == "https://accounts.example.com"
    )
    assert demo_setting("ACCOUNTS_MFA_REQUIRED_FOR_STAFF") is False
    assert demo_setting("ACCOUNTS_MFA_REQUIRED_FOR_STAFF", ACCOUNTS_MFA_REQUIRED_FOR_STAFF="true") is True
    assert demo_setting("ACCOUNTS_PASSKEY_SIGNUP", ACCOUNTS_PASSKEY_SIGNUP="1") is True
