"""Trusted browsers (``ACCOUNTS_MFA_TRUST_ENABLED``, django-allauth's ``MFA_TRUST_ENABLED``):
the second step's checkbox trusts the browser, whose later logins of that account skip the
second step for ``ACCOUNTS_MFA_TRUST_COOKIE_AGE``. The trust is the account's alone and dies
with the password (nothing an intruder set up survives the owner's new password), with any
change of the authenticators, with its age, and with any edit of its cookie."""

import re
import time

import pytest
from django.core import signing
from django.test import Client

from accounts.mfa import trust
from tests import authenticator
from tests.mfa import ORIGIN, add_passkey, code_of, enable_totp, options, password_login, second_step
from tests.web import OTHER_PASSWORD, PASSWORD, login, signed_up_client

pytestmark = pytest.mark.dynamodb_local

SECOND_STEP = "/accounts/mfa/authenticate/"


@pytest.fixture
def trust_on(settings):
    settings.ACCOUNTS_MFA_TRUST_ENABLED = True


@pytest.fixture
def owner(ddb):
    """``ada``'s logged-in browser, with the authenticator app on: ``(client, secret)``."""
    client = signed_up_client()
    secret, _ = enable_totp(client)
    return client, secret


def log_in_trusting(browser, secret, name="ada", password=PASSWORD, *, trusted=True, step=1):
    """Log in with the password and a code, ticking "trust this browser" (or not)."""
    assert login(browser, name, password)["Location"] == SECOND_STEP
    data = {"code": code_of(secret, at=time.time() + 30 * step), **({"trust": "on"} if trusted else {})}
    done = browser.post(SECOND_STEP, data)
    assert done.status_code == 302 and done["Location"] != "/accounts/login/", done
    browser.post("/accounts/logout/")
    return done


def assert_trusted(browser, name="ada"):
    """This browser's password login of ``name`` skips the second step (then logs out)."""
    assert password_login(browser, name)["Location"] == "/accounts/profile/"
    browser.post("/accounts/logout/")


def test_the_second_step_offers_the_checkbox_only_when_trust_is_on(owner, settings):
    visitor = Client()
    password_login(visitor)
    assert "trust" not in visitor.get(SECOND_STEP).context["form"].fields

    settings.ACCOUNTS_MFA_TRUST_ENABLED = True
    page = visitor.get(SECOND_STEP)

    assert "trust" in page.context["form"].fields
    assert 'name="trust"' in page.content.decode()


def test_a_trusted_browser_skips_the_second_step_at_its_next_logins(owner, trust_on):
    _, secret = owner
    browser = Client()
    done = log_in_trusting(browser, secret)
    cookie = done.cookies[trust.COOKIE_NAME]
    assert cookie["httponly"] and cookie["samesite"] == "Lax"
    assert int(cookie["max-age"]) == 14 * 24 * 3600

    again = password_login(browser)

    assert again["Location"] == "/accounts/profile/"
    assert browser.get("/accounts/profile/").status_code == 200


def test_an_untrusted_browser_and_one_that_did_not_tick_still_get_the_second_step(owner, trust_on):
    _, secret = owner
    declined = Client()
    log_in_trusting(declined, secret, trusted=False)

    assert trust.COOKIE_NAME not in declined.cookies
    assert password_login(declined)["Location"] == SECOND_STEP
    assert password_login(Client())["Location"] == SECOND_STEP


def test_a_password_change_ends_the_trust_of_every_browser(owner, trust_on):
    client, secret = owner
    intruder = Client()
    log_in_trusting(intruder, secret)
    assert password_login(intruder)["Location"] == "/accounts/profile/"
    intruder.post("/accounts/logout/")

    changed = client.post(
        "/accounts/password/",
        {"old_password": PASSWORD, "new_password1": OTHER_PASSWORD, "new_password2": OTHER_PASSWORD},
    )
    assert changed.status_code == 302

    assert login(intruder, "ada", OTHER_PASSWORD)["Location"] == SECOND_STEP


def new_authenticator_app(client):
    client.post("/accounts/mfa/totp/deactivate/")
    enable_totp(client)


def new_recovery_codes(client):
    assert client.post("/accounts/mfa/recovery-codes/").status_code == 200


@pytest.mark.parametrize("change", [new_authenticator_app, add_passkey, new_recovery_codes])
def test_any_change_of_the_authenticators_ends_the_trust(owner, trust_on, change):
    client, secret = owner
    browser = Client()
    log_in_trusting(browser, secret)
    assert_trusted(browser)

    change(client)

    assert password_login(browser)["Location"] == SECOND_STEP


def test_a_trust_is_of_one_account_only(owner, trust_on):
    _, secret = owner
    other = signed_up_client("bob@example.com", "bob")
    enable_totp(other)
    browser = Client()
    log_in_trusting(browser, secret)
    assert_trusted(browser)

    assert password_login(browser, "bob")["Location"] == SECOND_STEP


def test_a_trust_ends_with_its_age(owner, settings, trust_on, monkeypatch):
    settings.ACCOUNTS_MFA_TRUST_COOKIE_AGE = 3600
    _, secret = owner
    browser = Client()
    log_in_trusting(browser, secret)
    assert_trusted(browser)

    later = time.time() + 3601
    monkeypatch.setattr(trust, "time", type("Clock", (), {"time": staticmethod(lambda: later)}))

    assert password_login(browser)["Location"] == SECOND_STEP


def test_an_edited_or_made_up_cookie_is_no_trust(owner, trust_on):
    _, secret = owner
    browser = Client()
    log_in_trusting(browser, secret)
    assert_trusted(browser)
    value = browser.cookies[trust.COOKIE_NAME].value
    browser.cookies[trust.COOKIE_NAME] = value[:-2] + ("A" if value[-2] != "A" else "B") + value[-1]
    assert password_login(browser)["Location"] == SECOND_STEP
    browser.post("/accounts/logout/")

    forged = signing.dumps([["0" * 64, int(time.time())]], salt="another.salt")
    browser.cookies[trust.COOKIE_NAME] = forged

    assert password_login(browser)["Location"] == SECOND_STEP


def test_with_trust_turned_off_a_trusted_browser_gets_the_second_step_again(owner, settings, trust_on):
    _, secret = owner
    browser = Client()
    log_in_trusting(browser, secret)
    assert_trusted(browser)

    settings.ACCOUNTS_MFA_TRUST_ENABLED = False

    assert password_login(browser)["Location"] == SECOND_STEP


def test_a_code_login_from_a_trusted_browser_skips_the_second_step(owner, trust_on, mailoutbox):
    _, secret = owner
    browser = Client()
    log_in_trusting(browser, secret)
    mailoutbox.clear()
    browser.post("/accounts/code/", {"login": "ada@example.com"})
    code = re.search(r"log in: (\w{8})", mailoutbox[-1].body).group(1)

    confirmed = browser.post("/accounts/code/confirm/", {"code": code})

    assert confirmed.status_code == 302 and confirmed["Location"] != SECOND_STEP
    assert browser.get("/accounts/profile/").status_code == 200


def test_the_second_step_still_works_after_a_wrong_code_with_the_checkbox(owner, trust_on):
    _, secret = owner
    browser = Client()
    password_login(browser)
    wrong = f"{(int(code_of(secret, at=time.time() + 30)) + 1) % 10**6:06d}"
    assert browser.post(SECOND_STEP, {"code": wrong, "trust": "on"}).status_code == 200

    done = second_step(browser, code_of(secret, at=time.time() + 30))

    assert done["Location"] == "/accounts/profile/"
    assert trust.COOKIE_NAME not in done.cookies


def test_the_passkey_second_step_offers_the_checkbox_and_trusts_the_browser(ddb, trust_on):
    credential, _ = add_passkey(signed_up_client())
    browser = Client()
    assert password_login(browser)["Location"] == SECOND_STEP
    page = browser.get(SECOND_STEP).content.decode()
    passkey_form = page[page.index('action="/accounts/mfa/authenticate/passkey/"') :]
    assert 'name="trust"' in passkey_form[: passkey_form.index("</form>")]
    answer = authenticator.get(credential, options(browser, "second_factor"), ORIGIN)

    done = browser.post("/accounts/mfa/authenticate/passkey/", {"credential": answer, "trust": "on"})

    assert done["Location"] == "/accounts/profile/"
    assert trust.COOKIE_NAME in done.cookies
    browser.post("/accounts/logout/")
    assert_trusted(browser)
