"""The settings of second factors: where passkeys' relying party comes from, the checks
that guard it, and the demo site's environment variables."""

import ast
import subprocess
import sys
from pathlib import Path

import pytest
from django.test import RequestFactory

from accounts.mfa import checks, passkeys

ROOT = Path(__file__).resolve().parent.parent


def relying_party(**headers):
    return passkeys.relying_party(RequestFactory().get("/", **headers))


def test_the_relying_party_is_the_site_urls_host_and_origin(settings):
    settings.ACCOUNTS_SITE_URL = "https://accounts.example.com:8443/"

    rp = relying_party()

    assert (rp.id, rp.origins, rp.name) == ("accounts.example.com", ("https://accounts.example.com:8443",), "accounts.example.com")


def test_its_id_origin_and_name_may_be_set_apart(settings):
    settings.ACCOUNTS_SITE_URL = "https://accounts.example.com"
    settings.ACCOUNTS_WEBAUTHN_RP_ID = "example.com"
    settings.ACCOUNTS_WEBAUTHN_ORIGIN = ["https://accounts.example.com", "https://www.example.com"]
    settings.ACCOUNTS_MFA_ISSUER = "Example"

    rp = relying_party()

    assert (rp.id, rp.origins, rp.name) == ("example.com", ("https://accounts.example.com", "https://www.example.com"), "Example")


def test_without_a_site_url_it_is_the_requests_own(settings):
    settings.ALLOWED_HOSTS = ["localhost"]

    rp = relying_party(HTTP_HOST="localhost:8000")

    assert (rp.id, rp.origins) == ("localhost", ("http://localhost:8000",))


@pytest.mark.parametrize("url", ["http://127.0.0.1:8000", "http://[::1]:8000"])
def test_an_ip_address_as_relying_party_is_an_error(settings, url):
    settings.ACCOUNTS_SITE_URL = url

    (error,) = checks.check_relying_party_id(None)

    assert error.id == "accounts.mfa.E001"


def test_localhost_is_a_relying_party(settings):
    settings.ACCOUNTS_SITE_URL = "http://localhost:8000"

    assert checks.check_relying_party_id(None) == []


def test_outside_debug_a_site_without_its_address_is_warned(settings):
    settings.DEBUG = False
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
    assert demo_setting("ACCOUNTS_SITE_URL", ACCOUNTS_SITE_URL="https://accounts.example.com") == "https://accounts.example.com"
    assert demo_setting("ACCOUNTS_MFA_REQUIRED_FOR_STAFF") is False
    assert demo_setting("ACCOUNTS_MFA_REQUIRED_FOR_STAFF", ACCOUNTS_MFA_REQUIRED_FOR_STAFF="true") is True
    assert demo_setting("ACCOUNTS_PASSKEY_SIGNUP", ACCOUNTS_PASSKEY_SIGNUP="1") is True
