"""``check --deploy`` warns (accounts.W020) when a deployed site's ACCOUNTS_SITE_URL is still a
development address: every mailed link starts with it, and passkeys belong to its host."""

import pytest
from django.core import checks

from accounts.checks import check_site_url_for_deploy


def site_url_warnings():
    return [message.id for message in check_site_url_for_deploy(None)]


@pytest.mark.parametrize(
    "url",
    ["http://localhost:8000", "https://localhost", "https://app.localhost", "https://127.0.0.1", "https://[::1]:8443"],
)
def test_a_loopback_site_url_outside_debug_is_warned(settings, url):
    settings.DEBUG = False
    settings.ACCOUNTS_SITE_URL = url

    [warning] = check_site_url_for_deploy(None)

    assert warning.id == "accounts.W020"
    assert "only this machine reaches" in warning.msg


def test_a_plain_http_site_url_outside_debug_is_warned(settings):
    settings.DEBUG = False
    settings.ACCOUNTS_SITE_URL = "http://accounts.example.com"

    [warning] = check_site_url_for_deploy(None)

    assert warning.id == "accounts.W020"
    assert "plain http" in warning.msg and "only this machine" not in warning.msg


def test_a_public_https_site_url_is_not_warned(settings):
    settings.DEBUG = False
    settings.ACCOUNTS_SITE_URL = "https://accounts.example.com"

    assert site_url_warnings() == []


def test_localhost_in_debug_is_development_and_not_warned(settings):
    settings.DEBUG = True
    settings.ACCOUNTS_SITE_URL = "http://localhost:8000"

    assert site_url_warnings() == []


def test_a_missing_site_url_is_left_to_e014(settings):
    settings.DEBUG = False
    settings.ACCOUNTS_SITE_URL = None

    assert site_url_warnings() == []


def test_the_warning_is_a_deployment_check_only(settings):
    settings.DEBUG = False
    settings.ACCOUNTS_SITE_URL = "http://localhost:8000"

    deploy = {message.id for message in checks.run_checks(include_deployment_checks=True, tags=["security"])}
    everyday = {message.id for message in checks.run_checks(tags=["security"])}

    assert "accounts.W020" in deploy
    assert "accounts.W020" not in everyday
