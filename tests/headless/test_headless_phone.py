"""The API's phone operations as django-allauth's specification has them (``account/phone``,
``auth/phone/verify``, ``auth/phone/verify/resend``), its ``verify_phone`` pending flow, and
``config``, login, sign-up and login by code with a number; off, as allauth answers while
phone numbers are off."""

import time

import pytest
from django.contrib.auth.hashers import make_password

from accounts import store
from accounts.mfa.flows.reauthentication import AUTHENTICATED_AT_SESSION_KEY
from accounts.phones import store as phone_store
from accounts.sessions import SessionStore
from tests.headless import APIClient
from tests.headless import test_headless_conformance as conformance
from tests.headless.test_headless_conformance import site, transactional_db  # noqa: F401 (fixtures)
from tests.headless_spec import allauth_spec, conforms
from tests.phones import phone_lock_owner, with_number
from tests.sms import NUMBER, NUMBER_E164, OTHER, OTHER_E164, code_to, outbox, phone_site, texts_to, wrong_code  # noqa: F401
from tests.web import PASSWORD

pytestmark = pytest.mark.dynamodb_local


def flow_ids(response):
    return [flow["id"] for flow in response.json()["data"]["flows"]]


def pending(response):
    return [flow["id"] for flow in response.json()["data"]["flows"] if flow.get("is_pending")]


def signed_up(api, email="ada@example.com", phone=NUMBER):
    return api.post("auth/signup", {"email": email, "phone": phone, "password": PASSWORD})


def logged_in(email="ada@example.com"):
    api = APIClient()
    assert api.post("auth/login", {"email": email, "password": PASSWORD}).status_code == 200
    return api


@pytest.mark.parametrize("client", ["app", "browser"])
def test_without_phone_numbers_the_operations_answer_as_allauths_do_while_they_are_off(ddb, client):
    api = APIClient(client)

    assert api.get("account/phone").status_code == 401
    assert api.post("account/phone", {"phone": NUMBER}).status_code == 409
    assert api.post("auth/phone/verify", {"code": "ABCDEFGH"}).status_code == 409
    assert api.post("auth/phone/verify/resend").status_code == 409
    store.signup("ada@example.com", "ada", make_password(PASSWORD))
    api.login("ada")
    listed = api.get("account/phone")
    assert (listed.status_code, listed.json()["data"]) == (200, [])
    assert api.post("account/phone", {"phone": NUMBER}).status_code == 409


def test_config_lists_phone_among_the_login_methods_as_allauths(phone_site, settings):
    account = APIClient().get("config").json()["data"]["account"]
    assert (account["login_methods"], account["authentication_method"]) == (["email", "phone"], "email")

    settings.ACCOUNTS_LOGIN_METHODS = {"phone"}
    account = APIClient().get("config").json()["data"]["account"]
    assert account["login_methods"] == ["phone"]
    assert "authentication_method" not in account


def test_a_signup_with_a_number_is_pending_verify_phone_until_its_code_is_posted(phone_site):
    api = APIClient()

    response = signed_up(api)

    assert response.status_code == 401
    assert pending(response) == ["verify_phone"]
    assert conforms("Unauthenticated", response.json(), "responses")
    assert api.get("account/phone").status_code == 401
    code = code_to(NUMBER_E164)
    refused = api.post("auth/phone/verify", {"code": wrong_code(code)})
    assert refused.status_code == 400
    assert refused.json()["errors"] == [{"message": "Incorrect code.", "code": "incorrect_code", "param": "code"}]

    verified = api.post("auth/phone/verify", {"code": code})

    assert verified.status_code == 200
    assert conforms("AuthenticatedResponse", verified.json())
    listed = api.get("account/phone")
    assert listed.json()["data"] == [{"phone": NUMBER_E164, "verified": True}]
    assert conforms("PhoneNumbersResponse", listed.json())
    assert api.post("auth/phone/verify", {"code": code}).status_code == 409


def test_with_the_address_to_prove_the_verified_number_leads_to_verify_email(phone_site, settings, mailoutbox):
    settings.ACCOUNTS_EMAIL_VERIFICATION = "mandatory"
    api = APIClient()
    signed_up(api)
    assert mailoutbox == []  # the number first, as allauth's stages go

    verified = api.post("auth/phone/verify", {"code": code_to(NUMBER_E164)})

    assert verified.status_code == 401
    assert pending(verified) == ["verify_email"]
    assert [message.to for message in mailoutbox] == [["ada@example.com"]]


def test_the_last_wrong_code_ends_the_flow(phone_site):
    api = APIClient()
    signed_up(api)
    code = code_to(NUMBER_E164)

    answers = [api.post("auth/phone/verify", {"code": wrong_code(code)}).status_code for _ in range(3)]

    assert answers == [400, 400, 400]
    assert api.post("auth/phone/verify", {"code": code}).status_code == 409
    assert pending(api.get("auth/session")) == []


def test_resend_is_allowed_as_the_setting_says_and_the_old_code_dies(phone_site, settings):
    api = APIClient()
    signed_up(api)
    assert api.post("auth/phone/verify/resend").status_code == 409  # allauth's default: no resend
    old = code_to(NUMBER_E164)
    settings.ACCOUNTS_PHONE_VERIFICATION_SUPPORTS_RESEND = True
    settings.ACCOUNTS_RATE_LIMITS = {"verify_phone": False}

    answers = [api.post("auth/phone/verify/resend").status_code for _ in range(3)]

    assert answers == [200, 200, 409]
    assert len(texts_to(NUMBER_E164)) == 3
    assert api.post("auth/phone/verify", {"code": old}).status_code == 400
    assert api.post("auth/phone/verify", {"code": code_to(NUMBER_E164)}).status_code == 200


def test_a_signup_may_change_its_number_before_its_code_as_the_setting_says(phone_site, settings):
    api = APIClient()
    signed_up(api)
    assert api.post("account/phone", {"phone": OTHER}).status_code == 409  # allauth's default: no change
    settings.ACCOUNTS_PHONE_VERIFICATION_SUPPORTS_CHANGE = True

    changed = api.post("account/phone", {"phone": OTHER})

    assert changed.status_code == 202
    assert changed.json()["data"] == [{"phone": OTHER_E164, "verified": False}]
    assert conforms("PhoneNumberChangeResponse", changed.json())
    assert store.get_by_email("ada@example.com").phone == OTHER_E164
    assert api.post("auth/phone/verify", {"code": code_to(OTHER_E164)}).status_code == 200
    assert phone_lock_owner(OTHER_E164) == store.get_by_email("ada@example.com").PK


def test_a_signed_in_change_of_number_is_202_then_verified_by_its_code(phone_site):
    account = with_number()
    api = logged_in()

    asked = api.post("account/phone", {"phone": OTHER})

    assert asked.status_code == 202
    assert asked.json() == {"status": 202, "data": [{"phone": OTHER_E164, "verified": False}]}
    assert api.get("account/phone").json()["data"] == [{"phone": NUMBER_E164, "verified": True}]
    verified = api.post("auth/phone/verify", {"code": code_to(OTHER_E164)})
    assert verified.status_code == 200
    assert api.get("account/phone").json()["data"] == [{"phone": OTHER_E164, "verified": True}]
    assert (phone_lock_owner(NUMBER_E164), phone_lock_owner(OTHER_E164)) == (None, account.PK)


def test_a_signed_in_change_needs_a_fresh_proof(phone_site):
    with_number()
    api = logged_in()
    session = SessionStore(api.token)
    session[AUTHENTICATED_AT_SESSION_KEY] = time.time() - 3600
    session.save()

    refused = api.post("account/phone", {"phone": OTHER})

    assert refused.status_code == 401
    assert flow_ids(refused) == ["reauthenticate", "reauthenticate_by_code"]
    assert texts_to(OTHER_E164) == []


@pytest.mark.parametrize(
    ("typed", "code"),
    [(NUMBER, "same_as_current"), ("+44 7911 123456", "phone_taken"), ("12345", "invalid_phone"), ("", "required")],
)
def test_a_number_refused_names_the_phone_param(phone_site, typed, code):
    with_number()
    with_number("bob@example.com", OTHER)
    api = logged_in()

    refused = api.post("account/phone", {"phone": typed})

    assert refused.status_code == 400
    assert [(error["code"], error["param"]) for error in refused.json()["errors"]] == [(code, "phone")]
    assert conforms("ErrorResponse", refused.json())


def test_login_by_number_and_password(phone_site):
    account = with_number()

    answer = APIClient().post("auth/login", {"phone": "+81 90 1234 5678", "password": PASSWORD})

    assert answer.status_code == 200
    assert answer.json()["data"]["user"]["id"] == account.id
    assert APIClient().post("auth/login", {"phone": OTHER, "password": PASSWORD}).status_code == 400


def test_login_by_a_code_texted_to_the_number(phone_site):
    account = with_number()
    api = APIClient()

    requested = api.post("auth/code/request", {"phone": "+81 90-1234-5678"})

    assert requested.status_code == 401
    assert pending(requested) == ["login_by_code"]
    (text,) = texts_to(NUMBER_E164)
    assert text.kwargs == {"login": True}
    assert store.get_account(account.id).phone_verified is True
    confirmed = api.post("auth/code/confirm", {"code": text.code})
    assert confirmed.status_code == 200
    assert confirmed.json()["data"]["methods"][-1]["phone"] == NUMBER_E164


def test_a_login_code_for_a_number_nobody_verified_texts_no_code(phone_site):
    with_number(verified=False)
    api = APIClient()

    requested = api.post("auth/code/request", {"phone": NUMBER})

    assert requested.status_code == 401
    assert [text.kind for text in outbox] == ["unknown_account"]


@pytest.fixture
def phone_live_site(site, settings):
    """The conformance run's live site (tests/headless/test_headless_conformance.py), with
    phone numbers on: the default fields and a number, logging in by any of the three."""
    settings.ACCOUNTS_SIGNUP_FIELDS = ["email*", "username*", "phone", "password1*", "password2*"]
    settings.ACCOUNTS_LOGIN_METHODS = {"email", "username", "phone"}
    settings.ACCOUNTS_ADAPTER = "tests.sms.SmsAdapter"
    return site


@pytest.mark.slow  # schemathesis' examples against a live server
def test_every_response_of_the_phone_operations_with_phone_numbers_on_conforms_to_allauths_spec(phone_live_site):
    # The live site's account (ada, signed up by the fixture) with a verified number.
    phone_store.set_phone(store.get_by_email("ada@example.com"), NUMBER_E164, verified=True)
    assert phone_lock_owner(NUMBER_E164) is not None
    operations, figures = conformance.conformance_run(
        phone_live_site, {"account/phone", "auth/phone/verify", "auth/phone/verify/resend"}
    )

    assert len(operations) == 4
    assert figures["cases"] >= 4 * 2 * 2
    assert not figures["failures"], "\n".join(sorted(figures["failures"]))


def test_a_login_waiting_for_its_numbers_code_may_not_change_the_number(phone_site, settings):
    settings.ACCOUNTS_PHONE_VERIFICATION_SUPPORTS_CHANGE = True
    with_number(verified=False)
    api = APIClient()

    waiting = api.post("auth/login", {"email": "ada@example.com", "password": PASSWORD})

    assert pending(waiting) == ["verify_phone"]
    assert api.post("account/phone", {"phone": OTHER}).status_code == 409
    assert store.get_by_email("ada@example.com").phone == NUMBER_E164
