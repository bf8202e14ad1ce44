"""``auth/provider/redirect``'s ``callback_url`` is where the provider's callback sends the
browser back: a path of this site, or a URL of the site's own origin (scheme, host AND port:
``ACCOUNTS_SITE_URL``'s, else the request's), or of one of ``CSRF_TRUSTED_ORIGINS`` (as
django-allauth's ``is_safe_url``). Never an ``http://`` downgrade of an ``https`` site, nor
another port of its host, nor another host ``ALLOWED_HOSTS`` lists."""

import pytest

from tests.headless import APIClient
from tests.oidc import PROVIDER_ID, oidc_provider, oidc_site  # noqa: F401  (fixtures)

pytestmark = pytest.mark.dynamodb_local
REDIRECT = "/_allauth/browser/v1/auth/provider/redirect"


def redirect_with(callback_url, **request):
    api = APIClient("browser")
    return api.http.post(REDIRECT, {"provider": PROVIDER_ID, "callback_url": callback_url}, **request)


def assert_refused(response):
    assert response.status_code == 400, response
    assert response.json()["errors"][0]["param"] == "callback_url"


def assert_accepted(response, oidc_site):
    assert response.status_code == 302, response.content
    assert response["Location"].startswith(oidc_site.issuer)


def test_a_path_of_the_site_is_accepted(oidc_site):
    assert_accepted(redirect_with("/app/account/provider/callback"), oidc_site)


def test_a_url_of_the_sites_own_origin_is_accepted(oidc_site):
    assert_accepted(redirect_with("http://testserver/app/account/provider/callback"), oidc_site)


def test_an_http_downgrade_of_an_https_site_is_refused(oidc_site, settings):
    settings.ACCOUNTS_SITE_URL = "https://testserver"

    assert_refused(redirect_with("http://testserver/app/account/provider/callback", secure=True))
    assert_accepted(redirect_with("https://testserver/app/account/provider/callback", secure=True), oidc_site)


def test_another_port_of_the_sites_host_is_refused(oidc_site, settings):
    settings.ACCOUNTS_SITE_URL = "http://testserver:8000"
    on_port = {"HTTP_HOST": "testserver:8000"}

    assert_refused(redirect_with("http://testserver/app/account/provider/callback", **on_port))
    assert_refused(redirect_with("http://testserver:8443/app/account/provider/callback", **on_port))
    assert_accepted(redirect_with("http://testserver:8000/app/account/provider/callback", **on_port), oidc_site)


def test_without_a_site_url_the_requests_own_origin_is_the_sites(oidc_site, settings):
    settings.ACCOUNTS_SITE_URL = None
    on_port = {"HTTP_HOST": "testserver:8000"}

    assert_accepted(redirect_with("http://testserver:8000/app", **on_port), oidc_site)
    assert_refused(redirect_with("http://testserver/app", **on_port))
    assert_refused(redirect_with("https://testserver:8000/app", **on_port))


def test_another_host_of_allowed_hosts_is_refused(oidc_site, settings):
    settings.ALLOWED_HOSTS = [*settings.ALLOWED_HOSTS, "accounts.example.com"]

    assert_refused(redirect_with("http://accounts.example.com/app"))
    assert_refused(redirect_with("http://localhost/app"))


def test_an_origin_of_csrf_trusted_origins_is_accepted_with_its_scheme_and_port_only(oidc_site, settings):
    settings.CSRF_TRUSTED_ORIGINS = ["https://app.example.com", "https://*.spa.example.com"]

    assert_accepted(redirect_with("https://app.example.com/account/provider/callback"), oidc_site)
    assert_accepted(redirect_with("https://tenant.spa.example.com/callback"), oidc_site)
    assert_refused(redirect_with("http://app.example.com/account/provider/callback"))
    assert_refused(redirect_with("https://app.example.com:8443/account/provider/callback"))
    assert_refused(redirect_with("https://spa.example.com.evil.example/callback"))
    assert_refused(redirect_with("https://evilspa.example.com/callback"))


@pytest.mark.parametrize(
    "url",
    [
        "https://evil.example/steal",
        "//evil.example/steal",
        "/\\evil.example/steal",
        "http://testserver@evil.example/steal",
        "http://evil.example\\@testserver/steal",
        "javascript:alert(1)",
        "http://testserver/app\n",
        "",
    ],
)
def test_a_url_another_site_could_read_is_refused(oidc_site, url):
    assert_refused(redirect_with(url))
