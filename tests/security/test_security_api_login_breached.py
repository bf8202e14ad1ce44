"""An API login with a breached password says so, as the page warns (issue 35, finding 12),
on DynamoDB Local: the login goes on and its answer carries ``meta.warnings``
(``password_breached``), which allauth's clients ignore (its ``meta`` allows more properties);
a password of no breach gets none."""

import pytest
from django.test import Client

from accounts import breached_passwords
from tests.headless import APIClient
from tests.headless_spec import conforms
from tests.mfa import enable_totp
from tests.security.test_passwords_breached import BREACHED, NOT_BREACHED, RangeServer
from tests.web import login, signup

pytestmark = pytest.mark.dynamodb_local

WARNING = {"code": "password_breached", "message": str(breached_passwords.LOGIN_WARNING)}


@pytest.fixture
def breached_source(settings):
    """A range API knowing :data:`BREACHED`, set once the accounts were made with it."""

    def start():
        server = RangeServer(BREACHED)
        settings.ACCOUNTS_BREACHED_PASSWORDS = server.url
        servers.append(server)

    servers = []
    yield start
    for server in servers:
        server.close()


@pytest.mark.parametrize("client", ["app", "browser"])
def test_an_api_login_with_a_breached_password_succeeds_and_is_warned(ddb, breached_source, client):
    signup(Client(), password=BREACHED)
    breached_source()

    response = APIClient(client).login("ada", BREACHED)

    assert response.status_code == 200
    body = response.json()
    assert body["meta"]["is_authenticated"] is True
    assert body["meta"]["warnings"] == [WARNING]
    assert conforms("AuthenticatedByPassword", body, kind="responses")


def test_a_login_pending_its_second_factor_is_warned_too(ddb, breached_source):
    browser = Client()
    signup(browser, password=BREACHED)
    browser.get("/accounts/profile/")
    enable_totp(browser)
    breached_source()

    response = APIClient("app").login("ada", BREACHED)

    assert response.status_code == 401
    assert response.json()["meta"]["warnings"] == [WARNING]


def test_an_api_login_with_a_password_of_no_breach_is_not_warned(ddb, breached_source):
    signup(Client(), password=NOT_BREACHED)
    breached_source()

    response = APIClient("app").login("ada", NOT_BREACHED)

    assert response.status_code == 200
    assert "warnings" not in response.json()["meta"]


def test_a_wrong_breached_password_gets_no_warning(ddb, breached_source):
    signup(Client(), password=NOT_BREACHED)
    breached_source()

    response = APIClient("app").login("ada", BREACHED)

    assert response.status_code == 400
    assert "warnings" not in response.json().get("meta", {})
    assert login(Client(), "ada", NOT_BREACHED).status_code == 302
