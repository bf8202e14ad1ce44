"""Passkeys in a real browser: Debian's chromium with a virtual authenticator (the DevTools
protocol's WebAuthn domain, through a Playwright CDP session), against the live server on
DynamoDB Local. Without chromium this test fails, it does not skip.

It registers a passkey from the profile, logs out, logs in with the passkey alone (no
password typed: through the login page's autofill, then its "Sign in with a passkey"
button), and sees a second account's registration of the same credential id
refused: that browser's answer is rewritten on its way to carry the first account's
credential id and key (its attestation is "none", which proves nothing about where a
credential came from: only the credential id's lock stops it).
"""

import base64
import json
import re
from urllib.parse import parse_qs, urlencode

import pytest
from cryptography.hazmat.primitives.serialization import load_der_private_key

from accounts import store
from accounts.mfa import store as mfa_store
from tests import authenticator
from tests.browser.test_browser_e2e import PHONE, browser, fill_signup, transactional_db  # noqa: F401 (fixtures)
from tests.seeding import read_lock

pytestmark = [pytest.mark.browser, pytest.mark.dynamodb_local]

VIRTUAL_AUTHENTICATOR = {
    "protocol": "ctap2",
    "transport": "internal",
    "hasResidentKey": True,
    "hasUserVerification": True,
    "isUserVerified": True,
}


@pytest.fixture
def site(live_server, ddb, settings):
    """The live server, whose relying party is its own address (localhost: a domain)."""
    settings.ACCOUNTS_SITE_URL = live_server.url
    return live_server


def tab_with_authenticator(browser, site):  # noqa: F811 (the browser fixture)
    """A new browser context's tab with a virtual authenticator: ``(context, page, cdp, id)``."""
    context = browser.new_context(base_url=site.url, viewport=PHONE)
    context.set_default_timeout(15_000)
    page = context.new_page()
    cdp = context.new_cdp_session(page)
    cdp.send("WebAuthn.enable")
    added = cdp.send("WebAuthn.addVirtualAuthenticator", {"options": VIRTUAL_AUTHENTICATOR})
    return context, page, cdp, added["authenticatorId"]


def add_passkey(page, name):
    from playwright.sync_api import expect

    page.goto("/accounts/profile/")
    page.get_by_role("link", name="Passkeys", exact=True).click()
    page.fill("#id_name", name)
    page.get_by_role("button", name="Add a passkey").click()
    expect(page.locator(".messages")).to_contain_text(f"Your passkey “{name}” is added.")


def base64url(standard):
    return standard.replace("+", "-").replace("/", "_").rstrip("=")


def test_register_a_passkey_log_in_with_it_and_see_its_id_refused_to_another_account(browser, site):  # noqa: F811
    from playwright.sync_api import expect

    context, page, cdp, authenticator_id = tab_with_authenticator(browser, site)
    try:
        fill_signup(page, "ada@example.com", "ada")
        add_passkey(page, "Laptop")
        (exported,) = cdp.send("WebAuthn.getCredentials", {"authenticatorId": authenticator_id})["credentials"]
        credential_id = base64url(exported["credentialId"])
        ada = store.get_by_username("ada")
        assert ada.passkeys == {credential_id} and exported["isResidentCredential"]
        assert read_lock(f"UNIQ#WEBAUTHN#{credential_id}") == (True, ada.PK)
        expect(page.locator("table.passkeys")).to_contain_text("Laptop")

        # Logged out, the login page offers the passkey in the username's autofill
        # (conditional mediation), which the virtual authenticator accepts at once: logged
        # in, no password typed.
        page.get_by_role("button", name="Log out", exact=True).click()
        page.goto("/accounts/login/")
        expect(page).to_have_url(re.compile(r"/accounts/profile/$"))
        expect(page.locator(".messages")).to_contain_text("You are logged in as ada.")
        (used,) = mfa_store.passkeys_of(store.get_by_username("ada"))
        assert used.last_used is not None and used.sign_count == exported["signCount"] + 1

        # In a browser without autofill for passkeys, the button does it.
        page.add_init_script("PublicKeyCredential.isConditionalMediationAvailable = undefined;")
        page.get_by_role("button", name="Log out", exact=True).click()
        page.goto("/accounts/login/")
        expect(page.locator("#id_username")).to_have_attribute("autocomplete", "username")
        page.get_by_role("button", name="Sign in with a passkey").click()
        expect(page).to_have_url(re.compile(r"/accounts/profile/$"))
        expect(page.locator(".messages")).to_contain_text("You are logged in as ada.")
        assert mfa_store.passkeys_of(store.get_by_username("ada"))[0].sign_count == exported["signCount"] + 2
    finally:
        context.close()

    # Another browser, another account, whose registration is rewritten to claim ada's
    # credential id with ada's own key.
    context, page, cdp, _ = tab_with_authenticator(browser, site)
    try:
        fill_signup(page, "grace@example.com", "grace")
        key = load_der_private_key(base64.b64decode(exported["privateKey"]), password=None)

        def claim_adas_credential(route, request):
            form = {name: values[0] for name, values in parse_qs(request.post_data).items()}
            answer = json.loads(form["credential"])
            client_data = json.loads(authenticator.base64url_to_bytes(answer["response"]["clientDataJSON"]))
            options = {
                "rp": {"id": "localhost"},
                "user": {"id": authenticator.bytes_to_base64url(store.get_by_username("grace").id.encode())},
                "challenge": client_data["challenge"],
            }
            _, form["credential"] = authenticator.create(
                options, client_data["origin"], credential_id=authenticator.base64url_to_bytes(credential_id), key=key
            )
            route.continue_(post_data=urlencode(form))

        page.route(
            "**/accounts/mfa/passkeys/",
            lambda route, request: (
                claim_adas_credential(route, request) if request.method == "POST" else route.continue_()
            ),
        )
        page.goto("/accounts/mfa/passkeys/")
        page.fill("#id_name", "Not mine")
        page.get_by_role("button", name="Add a passkey").click()
        expect(page.locator(".errorlist")).to_contain_text("This passkey is already registered.")
        assert store.get_by_username("grace").passkeys is None
        assert read_lock(f"UNIQ#WEBAUTHN#{credential_id}") == (True, ada.PK)
    finally:
        context.close()
