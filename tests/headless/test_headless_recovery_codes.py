"""Recovery codes shown as django-allauth shows them (``account/authenticators/recovery-codes``):
the set made with the authenticator app, or made anew, is readable (``unused_codes``) by the
session that generated it for ``ACCOUNTS_MFA_RECOVERY_CODES_DISPLAY_TIMEOUT``, and by nothing
else: not another session of the account, not that session after a password change, not the
table (the codes are stored as digests, the session keeps them sealed). ``last_used_at`` says
when one was last used."""

import time

import pytest
from django.test import Client

from accounts import dynamo, store
from accounts.mfa import shown_codes
from tests.headless import APIClient
from tests.headless_spec import conforms
from tests.mfa import code_of, enable_totp
from tests.web import OTHER_PASSWORD, PASSWORD, signed_up_client

pytestmark = pytest.mark.dynamodb_local

OPERATION = "account/authenticators/recovery-codes"


def logged_in_app():
    """An app logged in to ``ada`` (signed up on the pages)."""
    signed_up_client()
    app = APIClient("app")
    assert app.login("ada").status_code == 200
    return app


def turn_on_totp(api):
    """Turn the authenticator app on through the API; returns its secret."""
    secret = api.get("account/authenticators/totp").json()["meta"]["secret"]
    activated = api.post("account/authenticators/totp", {"code": code_of(secret)})
    assert activated.status_code == 200, activated.content
    assert activated.json()["meta"]["recovery_codes_generated"] is True
    return secret


def recovery_codes(api):
    response = api.get(OPERATION)
    assert response.status_code == 200, response.content
    return response.json()["data"]


def every_stored_text():
    """Every item of the table, as text (a test-only Scan)."""
    items = dynamo.call("scan", TableName=dynamo.table_name(), ConsistentRead=True)["Items"]
    return repr(items)


def test_the_codes_made_with_the_app_are_shown_to_the_session_that_turned_it_on(ddb):
    app = logged_in_app()
    turn_on_totp(app)

    data = recovery_codes(app)

    assert data["type"] == "recovery_codes"
    assert (data["total_code_count"], data["unused_code_count"]) == (10, 10)
    assert len(data["unused_codes"]) == 10 and len(set(data["unused_codes"])) == 10
    assert data["last_used_at"] is None and data["created_at"] > time.time() - 60
    # They are the account's codes: one of them finishes a login.
    other = APIClient("app")
    assert other.login("ada").status_code == 401
    assert other.post("auth/2fa/authenticate", {"code": data["unused_codes"][3]}).status_code == 200


def test_another_session_of_the_account_sees_how_many_are_left_but_no_code(ddb):
    app = logged_in_app()
    secret = turn_on_totp(app)
    other = APIClient("app")
    other.login("ada")
    assert other.post("auth/2fa/authenticate", {"code": code_of(secret, at=time.time() + 30)}).status_code == 200

    data = recovery_codes(other)

    assert data["unused_codes"] == []
    assert (data["total_code_count"], data["unused_code_count"]) == (10, 10)


def test_the_codes_are_not_shown_once_the_display_timeout_passed(ddb, settings, monkeypatch):
    settings.ACCOUNTS_MFA_RECOVERY_CODES_DISPLAY_TIMEOUT = 600
    app = logged_in_app()
    turn_on_totp(app)
    assert len(recovery_codes(app)["unused_codes"]) == 10

    later = time.time() + 601
    monkeypatch.setattr(shown_codes, "time", type("Clock", (), {"time": staticmethod(lambda: later)}))

    assert recovery_codes(app)["unused_codes"] == []
    assert recovery_codes(app)["unused_code_count"] == 10


def test_a_used_code_is_no_longer_shown_and_last_used_at_says_when(ddb):
    app = logged_in_app()
    turn_on_totp(app)
    codes = recovery_codes(app)["unused_codes"]
    before = time.time()
    other = APIClient("app")
    other.login("ada")
    assert other.post("auth/2fa/authenticate", {"code": codes[0]}).status_code == 200

    data = recovery_codes(app)

    assert data["unused_codes"] == codes[1:]
    assert (data["total_code_count"], data["unused_code_count"]) == (10, 9)
    assert before - 1 <= data["last_used_at"] <= time.time() + 1
    assert conforms("RecoveryCodes", app.get(OPERATION).json(), "responses")
    listed = next(item for item in app.get("account/authenticators").json()["data"] if item["type"] == "recovery_codes")
    assert listed["last_used_at"] == data["last_used_at"] and "unused_codes" not in listed


def test_new_codes_are_shown_and_the_old_ones_no_longer(ddb):
    app = logged_in_app()
    turn_on_totp(app)
    old = recovery_codes(app)["unused_codes"]

    made = app.post(OPERATION)

    assert made.status_code == 200, made.content
    new = made.json()["data"]["unused_codes"]
    assert len(new) == 10 and not set(new) & set(old)
    assert recovery_codes(app)["unused_codes"] == new


def test_a_password_change_makes_the_shown_codes_unreadable(ddb):
    app = logged_in_app()
    turn_on_totp(app)
    assert recovery_codes(app)["unused_codes"]

    changed = app.post("account/password/change", {"current_password": PASSWORD, "new_password": OTHER_PASSWORD})
    assert changed.status_code == 200, changed.content

    assert recovery_codes(app)["unused_codes"] == []


def test_codes_shown_on_the_page_are_readable_by_the_same_browser_through_the_api(ddb):
    client = signed_up_client()
    _, shown = enable_totp(client)

    data = recovery_codes(APIClient("browser", django_client=client))

    assert data["unused_codes"] == shown


def test_the_table_holds_no_code_in_a_readable_form(ddb):
    app = logged_in_app()
    turn_on_totp(app)
    codes = recovery_codes(app)["unused_codes"]

    stored = every_stored_text()

    for code in codes:
        assert code not in stored and code.replace("-", "") not in stored


def test_a_copy_of_the_sealed_codes_in_another_session_reads_nothing(ddb):
    app = logged_in_app()
    turn_on_totp(app)
    account = store.get_by_username("ada")
    engine = Client().session.__class__
    own = engine(app.token)
    assert shown_codes.readable(own, account)
    other = APIClient("app")
    other.login("ada")
    copy = engine(other.token)
    copy[shown_codes.SESSION_KEY] = own[shown_codes.SESSION_KEY]

    assert shown_codes.readable(copy, account) is None


def test_a_recovery_code_reauthenticates_once_as_allauths_reauthentication_takes_them(ddb, settings, mailoutbox):
    app = logged_in_app()
    turn_on_totp(app)
    code = recovery_codes(app)["unused_codes"][0]
    settings.ACCOUNTS_REAUTHENTICATION_TIMEOUT = 0
    asked = app.get(OPERATION)
    assert asked.status_code == 401
    flow = next(flow for flow in asked.json()["data"]["flows"] if flow["id"] == "mfa_reauthenticate")
    assert flow["types"] == ["recovery_codes", "totp"]
    mailoutbox.clear()

    proved = app.post("auth/2fa/reauthenticate", {"code": code})

    assert proved.status_code == 200, proved.content
    assert proved.json()["data"]["methods"][-1]["type"] == "recovery_codes"
    assert proved.json()["data"]["methods"][-1]["reauthenticated"] is True
    assert len(store.get_by_username("ada").recovery_codes) == 9
    assert [message.to for message in mailoutbox] == [["ada@example.com"]]
    again = app.post("auth/2fa/reauthenticate", {"code": code})
    assert again.status_code == 400
    assert again.json()["errors"][0]["code"] == "incorrect_code"
