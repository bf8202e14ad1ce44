"""The pending ``mfa_authenticate`` flow and its ``types``, as django-allauth reports them
after every kind of first step (a password, a mailed code, a provider's ID token), for
accounts with an authenticator app, recovery codes, passkeys and combinations; a passkey
login has no second step. allauth lists the types in the order of its ``Authenticator.Type``
(``recovery_codes``, ``totp``, ``webauthn``), and its React app opens the first one: an empty
list is a dead end there ("Unknown path for flow")."""

import json
import re
import time

import pytest

from accounts import store
from accounts.providers import oidc
from accounts.providers import store as provider_store
from tests import authenticator
from tests.headless import APIClient
from tests.mfa import ORIGIN, add_passkey, code_of, enable_totp
from tests.oidc_forger import CLIENT_ID, PROVIDER_ID, ForgedProvider
from tests.web import signed_up_client

pytestmark = pytest.mark.dynamodb_local

# The routes of allauth's React app for the flow (examples/react-spa/frontend/src/auth/routing.js):
# ``mfa_authenticate`` is routed only with a type.
REACT_APP_TYPES = {"totp", "recovery_codes", "webauthn"}


def pending_flows(response):
    return [flow for flow in response.json()["data"]["flows"] if flow.get("is_pending")]


def the_second_step(response):
    """The one pending flow of a 401 answer: ``mfa_authenticate``, with types the app can open."""
    assert response.status_code == 401, response.content
    (flow,) = pending_flows(response)
    assert flow["id"] == "mfa_authenticate"
    assert flow["types"] and flow["types"][0] in REACT_APP_TYPES
    return flow


def code_login(api, mailoutbox, email="ada@example.com"):
    """Log in by a mailed code: ask for it, then confirm it; the answer to the confirmation."""
    mailoutbox.clear()
    assert api.post("auth/code/request", {"email": email}).status_code == 401
    code = re.search(r"log in: (\w{8})", mailoutbox[-1].body).group(1)
    return api.post("auth/code/confirm", {"code": code})


def passkey_answer(credential, options, **get_options):
    public_key = options["data"]["request_options"]["publicKey"]
    return json.loads(authenticator.get(credential, public_key, ORIGIN, **get_options))


@pytest.fixture
def totp_account(ddb):
    """``ada`` with the authenticator app on (and the recovery codes it came with)."""
    secret, codes = enable_totp(signed_up_client())
    return secret, codes


@pytest.mark.parametrize("client", ["app", "browser"])
def test_a_password_login_with_the_app_on_waits_for_recovery_codes_or_totp_in_allauths_order(totp_account, client):
    flow = the_second_step(APIClient(client).login("ada"))

    assert flow == {"id": "mfa_authenticate", "is_pending": True, "types": ["recovery_codes", "totp"]}


@pytest.mark.parametrize("client", ["app", "browser"])
def test_a_code_login_with_the_app_on_waits_for_the_second_factor_with_its_types(totp_account, mailoutbox, client):
    secret, _ = totp_account
    api = APIClient(client)

    flow = the_second_step(code_login(api, mailoutbox))

    assert flow["types"] == ["recovery_codes", "totp"]
    assert api.get("auth/session").status_code == 401
    assert the_second_step(api.get("auth/session")) == flow
    done = api.post("auth/2fa/authenticate", {"code": code_of(secret, at=time.time() + 30)})
    assert done.status_code == 200, done.content
    assert [method["method"] for method in done.json()["data"]["methods"]] == ["code", "mfa"]


def test_a_code_login_with_the_app_on_can_finish_with_a_recovery_code(totp_account, mailoutbox):
    _, codes = totp_account
    api = APIClient("app")
    the_second_step(code_login(api, mailoutbox))

    done = api.post("auth/2fa/authenticate", {"code": codes[0]})

    assert done.status_code == 200, done.content
    assert done.json()["data"]["methods"][-1] == {**done.json()["data"]["methods"][-1], "type": "recovery_codes"}


def test_a_login_with_a_passkey_only_waits_for_webauthn(ddb, mailoutbox):
    add_passkey(signed_up_client())

    assert the_second_step(APIClient("app").login("ada"))["types"] == ["webauthn"]
    assert the_second_step(code_login(APIClient("app"), mailoutbox))["types"] == ["webauthn"]


def test_a_login_with_a_passkey_and_recovery_codes_lists_both(ddb):
    client = signed_up_client()
    add_passkey(client)
    assert client.post("/accounts/mfa/recovery-codes/").status_code == 200

    assert the_second_step(APIClient("app").login("ada"))["types"] == ["recovery_codes", "webauthn"]


def test_a_login_with_the_app_and_a_passkey_lists_all_three_types(ddb, mailoutbox):
    client = signed_up_client()
    enable_totp(client)
    add_passkey(client)

    expected = ["recovery_codes", "totp", "webauthn"]
    assert the_second_step(APIClient("app").login("ada"))["types"] == expected
    assert the_second_step(code_login(APIClient("browser"), mailoutbox))["types"] == expected


def test_recovery_codes_all_used_are_still_listed_as_allauth_lists_its_authenticator(totp_account):
    _, codes = totp_account
    account = store.get_by_username("ada")
    store.update_account(account, recovery_codes=None, used_recovery_codes=set(account.recovery_codes))

    assert the_second_step(APIClient("app").login("ada"))["types"] == ["recovery_codes", "totp"]


def test_a_passkey_login_has_no_second_step_even_with_the_app_on(ddb):
    client = signed_up_client()
    enable_totp(client)
    credential, _ = add_passkey(client)
    app = APIClient("app")
    options = app.get("auth/webauthn/login").json()

    logged_in = app.post("auth/webauthn/login", {"credential": passkey_answer(credential, options)})

    assert logged_in.status_code == 200, logged_in.content
    assert "flows" not in logged_in.json()["data"]


@pytest.fixture
def forged(settings, ddb):
    with ForgedProvider() as provider:
        settings.ACCOUNTS_OIDC_PROVIDERS = [provider.setting(app_client_ids=["site-ios"])]
        oidc.forget_cached_documents()
        yield provider
        oidc.forget_cached_documents()


def test_a_provider_token_login_with_the_app_on_waits_for_the_second_factor_with_its_types(forged):
    enable_totp(signed_up_client())
    provider_store.link(store.get_by_username("ada"), forged.issuer, "forged-subject")
    body = {
        "provider": PROVIDER_ID,
        "process": "login",
        # The app client accepts the audiences of the provider's app_client_ids only.
        "token": {"client_id": "site-ios", "id_token": forged.sign(forged.claims(None, aud="site-ios"))},
    }

    flow = the_second_step(APIClient("app").post("auth/provider/token", body))

    assert flow["types"] == ["recovery_codes", "totp"]
