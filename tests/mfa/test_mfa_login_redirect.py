"""Where a login lands is one decision, the same after a second step as after the password
alone: a safe ``next``, else the adapter's ``get_login_redirect_url``."""

import time

import pytest
from django.test import Client

from accounts.adapter import DefaultAccountAdapter
from accounts.mfa import totp
from tests.mfa import code_of, enable_totp, second_step
from tests.web import PASSWORD, signed_up_client

pytestmark = pytest.mark.dynamodb_local


class DashboardAdapter(DefaultAccountAdapter):
    def get_login_redirect_url(self, request):
        return "/dashboard/"


@pytest.fixture
def dashboard_adapter(settings):
    settings.ACCOUNTS_ADAPTER = f"{__name__}.DashboardAdapter"


def _next_code(secret):
    # The next time step's code: the enrolment spent the current one.
    return code_of(secret, at=time.time() + totp.STEP_SECONDS)


def test_password_login_lands_where_the_adapter_says(ddb, dashboard_adapter):
    signed_up_client()

    response = Client().post("/accounts/login/", {"username": "ada", "password": PASSWORD})

    assert response["Location"] == "/dashboard/"


def test_password_and_totp_login_lands_where_the_adapter_says(ddb, dashboard_adapter):
    secret, _ = enable_totp(signed_up_client())
    client = Client()
    staged = client.post("/accounts/login/", {"username": "ada", "password": PASSWORD})
    assert staged["Location"] == "/accounts/mfa/authenticate/"

    response = second_step(client, _next_code(secret))

    assert response.status_code == 302
    assert response["Location"] == "/dashboard/"


@pytest.mark.parametrize(
    ("next_url", "landing"),
    [("/accounts/mfa/totp/", "/accounts/mfa/totp/"), ("https://evil.example/", "/dashboard/")],
    ids=["this-site", "another-site"],
)
def test_password_and_totp_login_honours_a_next_of_this_site_only(ddb, dashboard_adapter, next_url, landing):
    secret, _ = enable_totp(signed_up_client())
    client = Client()
    client.post(f"/accounts/login/?next={next_url}", {"username": "ada", "password": PASSWORD})

    response = second_step(client, _next_code(secret))

    assert response["Location"] == landing
