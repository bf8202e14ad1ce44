"""Reauthentication by a mailed code in the API (``auth/reauthenticate/code/request``,
``.../confirm``, ``.../resend``), as django-allauth 65.22.1 answers them, on DynamoDB Local:
the 401 of a sensitive operation offers ``reauthenticate_by_code`` with its recipients, a
mailed code makes the session fresh once, a wrong code is refused and counted, a resent
code replaces the old one, and the feature answers 403 while
``ACCOUNTS_REAUTHENTICATION_BY_CODE_ENABLED`` is off (the page no longer offers it either)."""

import re

import pytest
from django.contrib.auth.hashers import make_password
from django.test import Client

from accounts import store
from accounts.login_codes import flows as login_codes
from tests.headless import APIClient
from tests.headless_spec import conforms
from tests.mail import mails_to
from tests.web import PASSWORD, login

pytestmark = pytest.mark.dynamodb_local

ADA = "ada@example.com"
REQUEST, CONFIRM, RESEND = (f"auth/reauthenticate/code/{each}" for each in ("request", "confirm", "resend"))
# A sensitive operation (a fresh proof first) that changes nothing on an account without
# an authenticator app.
SENSITIVE = "account/authenticators/totp"
BY_CODE = {"id": "reauthenticate_by_code", "recipients": [{"email": ADA}]}


def stale_session(settings, client="browser", *, verified=True):
    """An API client logged in to ``ada``, whose proof no longer counts as fresh
    (``ACCOUNTS_REAUTHENTICATION_TIMEOUT`` 0 until :func:`fresh_enough`)."""
    store.signup(ADA, "ada", make_password(PASSWORD), email_verified=verified)
    api = APIClient(client)
    assert api.login("ada").status_code == 200
    settings.ACCOUNTS_REAUTHENTICATION_TIMEOUT = 0
    return api


def fresh_enough(settings):
    """The default timeout again: a proof from now on counts as fresh."""
    settings.ACCOUNTS_REAUTHENTICATION_TIMEOUT = 300


def flows_of(response):
    return response.json()["data"]["flows"]


def mailed_code():
    """The code of the last reauthentication mail to ada."""
    return re.search(r"confirm it is you: (\w{8})", mails_to(ADA)[-1].body).group(1)


def reauthenticated_by_code(api):
    """Whether the session's methods hold a reauthentication by code."""
    return any(method["method"] == "code" for method in api.get("auth/session").json()["data"]["methods"])


def requested(api):
    """Ask for a code by the API; returns the code mailed."""
    before = len(mails_to(ADA))
    response = api.post(REQUEST, {"email": ADA})
    assert response.json() == {"status": 200}, response.content
    assert len(mails_to(ADA)) == before + 1
    return mailed_code()


@pytest.mark.parametrize("client", ["app", "browser"])
def test_a_mailed_code_makes_the_session_fresh_for_a_sensitive_operation(ddb, settings, client):
    api = stale_session(settings, client)

    asked = api.delete(SENSITIVE)
    assert asked.status_code == 401
    assert flows_of(asked) == [{"id": "reauthenticate"}, BY_CODE]
    assert conforms("ReauthenticationResponse", asked.json())

    code = requested(api)
    pending = api.delete(SENSITIVE)
    assert flows_of(pending) == [{"id": "reauthenticate"}, {**BY_CODE, "is_pending": True}]
    assert conforms("ReauthenticationResponse", pending.json())

    fresh_enough(settings)
    proved = api.post(CONFIRM, {"code": code})

    assert proved.status_code == 200, proved.content
    assert conforms("AuthenticatedResponse", proved.json())
    last = proved.json()["data"]["methods"][-1]
    assert {key: last[key] for key in ("method", "email", "reauthenticated")} == {
        "method": "code",
        "email": ADA,
        "reauthenticated": True,
    }
    assert api.delete(SENSITIVE).json() == {"status": 200}
    # Used once: the code is no longer pending.
    assert api.post(CONFIRM, {"code": code}).json() == {"status": 409}


def test_a_wrong_code_is_refused_in_allauths_shape_and_counted_against_the_codes_tries(ddb, settings):
    api = stale_session(settings)
    code = requested(api)
    wrong = "A" * len(code) if code != "A" * len(code) else "B" * len(code)

    refusals = [api.post(CONFIRM, {"code": wrong}) for _ in range(login_codes.MAX_TRIES)]

    for refused in refusals:
        assert refused.status_code == 400
        assert conforms("ErrorResponse", refused.json())
        (error,) = refused.json()["errors"]
        assert (error["code"], error["param"]) == ("incorrect_code", "code")
    # Past the code's tries even the right code is refused (counted, not judged aloud).
    past = api.post(CONFIRM, {"code": code})
    assert past.status_code == 429
    assert past.json()["errors"][0]["code"] == "rate_limited"
    assert not reauthenticated_by_code(api)


def test_a_wrong_code_counts_against_the_accounts_reauthenticate_limit(ddb, settings):
    settings.ACCOUNTS_RATE_LIMITS = {"reauthenticate": "2/m/user"}
    api = stale_session(settings)
    code = requested(api)

    assert api.post(CONFIRM, {"code": "WRONGWRO"}).status_code == 400
    assert api.post(CONFIRM, {"code": "WRONGWRO"}).status_code == 400

    assert api.post(CONFIRM, {"code": code}).status_code == 429
    assert not reauthenticated_by_code(api)


def test_a_resent_code_replaces_the_old_one(ddb, settings):
    api = stale_session(settings)
    old = requested(api)

    resent = api.post(RESEND)

    assert resent.json() == {"status": 200}
    new = mailed_code()
    assert new != old
    fresh_enough(settings)
    refused = api.post(CONFIRM, {"code": old})
    assert refused.status_code == 400
    assert refused.json()["errors"][0]["code"] == "incorrect_code"
    assert api.post(CONFIRM, {"code": new}).status_code == 200
    assert api.delete(SENSITIVE).status_code == 200


def test_a_code_is_resent_a_bounded_number_of_times(ddb, settings):
    api = stale_session(settings)
    requested(api)

    answers = [api.post(RESEND).json() for _ in range(login_codes.MAX_RESENDS + 1)]

    assert answers == [{"status": 200}] * login_codes.MAX_RESENDS + [{"status": 409}]
    assert len(mails_to(ADA)) == 1 + login_codes.MAX_RESENDS


def test_confirming_or_resending_without_a_code_asked_for_is_a_conflict(ddb, settings):
    api = stale_session(settings)

    assert api.post(CONFIRM, {"code": "ABCDEFGH"}).json() == {"status": 409}
    assert api.post(RESEND).json() == {"status": 409}
    assert mails_to(ADA) == []


def test_a_request_names_the_accounts_verified_address_only(ddb, settings):
    api = stale_session(settings)

    answers = {
        "other": api.post(REQUEST, {"email": "grace@example.com"}),
        "phone": api.post(REQUEST, {"phone": "+15555550100"}),
        "none": api.post(REQUEST, {}),
        "both": api.post(REQUEST, {"email": ADA, "phone": "+15555550100"}),
    }

    errors = {name: [(e["code"], e.get("param")) for e in answer.json()["errors"]] for name, answer in answers.items()}
    assert errors == {
        "other": [("unknown_email", "email")],
        "phone": [("unknown_phone", "phone")],
        "none": [("required", None)],
        "both": [("select_only_one", None)],
    }
    assert {answer.status_code for answer in answers.values()} == {400}
    assert mails_to(ADA) == []
    # Any spelling of the address is the address.
    assert api.post(REQUEST, {"email": "Ada@Example.com"}).json() == {"status": 200}


def test_an_account_without_a_verified_address_is_not_offered_a_code(ddb, settings):
    api = stale_session(settings, verified=False)

    asked = api.delete(SENSITIVE)

    assert asked.status_code == 401
    assert "reauthenticate_by_code" not in [flow["id"] for flow in flows_of(asked)]
    assert api.post(REQUEST, {"email": ADA}).json()["errors"][0]["code"] == "unknown_email"
    assert mails_to(ADA) == []


def test_while_off_the_flow_is_not_offered_and_the_operations_answer_403(ddb, settings):
    settings.ACCOUNTS_REAUTHENTICATION_BY_CODE_ENABLED = False
    api = stale_session(settings)

    asked = api.delete(SENSITIVE)

    assert flows_of(asked) == [{"id": "reauthenticate"}]
    for operation in (REQUEST, CONFIRM, RESEND):
        assert api.post(operation, {"email": ADA}).json() == {"status": 403}
    assert mails_to(ADA) == []
    # The page agrees: no "Email me a code".
    page = Client()
    assert login(page, "ada").status_code == 302
    assert "/accounts/mfa/reauthenticate/code/send/" not in page.get("/accounts/mfa/reauthenticate/").content.decode()


@pytest.mark.parametrize("client", ["app", "browser"])
@pytest.mark.parametrize("operation", [REQUEST, CONFIRM, RESEND])
def test_anonymous_calls_answer_401_with_the_login_flows(ddb, client, operation):
    response = APIClient(client).post(operation, {"email": ADA, "code": "ABCDEFGH"})

    assert response.status_code == 401
    assert response.json()["meta"] == {"is_authenticated": False}
    assert flows_of(response)[0] == {"id": "login"}
    assert conforms("AuthenticationResponse", response.json())


def test_a_code_mailed_before_the_feature_was_turned_off_no_longer_works(ddb, settings):
    api = stale_session(settings)
    code = requested(api)
    settings.ACCOUNTS_REAUTHENTICATION_BY_CODE_ENABLED = False

    # The page, in the same browser session as the API's request.
    page = api.http.post("/accounts/mfa/reauthenticate/code/", {"code": code})

    # Sent back to ask anew ("expired"), not on to the profile as a right code is.
    assert page.status_code == 302
    assert page["Location"].startswith("/accounts/mfa/reauthenticate/?")
