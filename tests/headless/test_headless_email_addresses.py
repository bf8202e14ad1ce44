"""``account/email`` with several addresses per account (``ACCOUNTS_MAX_EMAIL_ADDRESSES`` above
1), as django-allauth answers it with ``ACCOUNT_CHANGE_EMAIL = False`` (its React app's
ChangeEmail screen): GET lists every address, POST adds one (its link into the app, or a
code to this session, for ``auth/email/verify``), PUT mails its proof again, PATCH makes it
primary, DELETE removes it; allauth's bodies, statuses and error codes, on DynamoDB Local."""

from urllib.parse import unquote, urlsplit

import pytest

from accounts import store
from tests.engine.test_engine import locks
from tests.headless import APIClient
from tests.headless_spec import conforms
from tests.mail import code_in, link_in, mails_to
from tests.web import PASSWORD

pytestmark = pytest.mark.dynamodb_local

ADA = "ada@example.com"
WORK = "ada@work.example"
HOME = "ada@home.example"
APP_CONFIRM = "/account/verify-email/{key}"


@pytest.fixture
def several(ddb, settings, mailoutbox):
    """Three addresses an account; links into the app; one addition a minute is not the
    point here (tests/web/test_flows_email_addresses.py counts them)."""
    settings.ACCOUNTS_MAX_EMAIL_ADDRESSES = 3
    settings.ACCOUNTS_HEADLESS_FRONTEND_URLS = {
        "account_confirm_email": APP_CONFIRM,
        "account_reset_password": "/account/password/reset",
    }
    settings.ACCOUNTS_RATE_LIMITS = {"change_email": "10/m/user"}
    return settings


@pytest.fixture
def ada(several):
    """ada, logged in through the app client, her address verified."""
    api = APIClient("app")
    assert api.signup().status_code == 200
    return api


def put(api, data):
    return api.request("PUT", "account/email", data)


def patch(api, data):
    return api.request("PATCH", "account/email", data)


def key_mailed_to(email):
    """The key of the last link mailed to ``email``, which leads into the app."""
    link = link_in(mails_to(email)[-1])
    assert link.startswith("http://testserver/account/verify-email/"), link
    return unquote(urlsplit(link).path.removeprefix("/account/verify-email/"))


def added(api, email):
    """Add ``email`` and verify it with its mailed key."""
    assert api.post("account/email", {"email": email}).status_code == 200
    assert api.post("auth/email/verify", {"key": key_mailed_to(email)}).status_code == 200


def ada_has(*others, waiting=()):
    """Whether ada's account holds ``ada@example.com`` as its primary, ``others`` verified
    beside it and ``waiting`` waiting for their proof."""
    account = store.get_by_email(ADA)
    return (
        account.email == ADA
        and set(account.email_addresses or ()) == set(others)
        and set(account.unverified_emails or ()) == set(waiting)
    )


def errors_of(response):
    return [(error.get("param"), error["code"]) for error in response.json()["errors"]]


@pytest.mark.parametrize("client", ["app", "browser"])
def test_post_adds_an_address_listed_unverified_as_allauth_lists_it(several, client):
    api = APIClient(client)
    api.signup()

    asked = api.post("account/email", {"email": WORK})
    listed = api.get("account/email")

    expected = [
        {"email": ADA, "primary": True, "verified": True},
        {"email": WORK, "primary": False, "verified": False},
    ]
    assert asked.status_code == 200
    assert asked.json()["data"] == listed.json()["data"] == expected
    assert conforms("EmailAddresses", listed.json(), "responses")
    assert store.get_by_email(ADA).unverified_emails == {WORK}


def test_the_added_addresss_mailed_key_verifies_it_through_auth_email_verify(ada):
    ada.post("account/email", {"email": WORK})
    key = key_mailed_to(WORK)

    shown = ada.get("auth/email/verify", headers={"X-Email-Verification-Key": key})
    done = ada.post("auth/email/verify", {"key": key})

    assert shown.status_code == 200
    assert shown.json()["data"]["email"] == WORK
    assert shown.json()["data"]["user"]["username"] == "ada"
    assert conforms("EmailVerificationInfo", shown.json(), "responses")
    assert done.status_code == 200
    assert done.json()["data"]["user"]["email"] == ADA
    assert ada.get("account/email").json()["data"][1] == {"email": WORK, "primary": False, "verified": True}
    account = store.get_by_email(ADA)
    assert locks()[f"UNIQ#EMAIL#{WORK}"] == account.PK


def test_the_key_verifies_from_another_browser_and_logs_nobody_in(ada):
    ada.post("account/email", {"email": WORK})

    done = APIClient("browser").post("auth/email/verify", {"key": key_mailed_to(WORK)})

    assert done.status_code == 401
    assert store.get_by_email(WORK).id == store.get_by_email(ADA).id


def test_a_used_key_answers_as_a_used_verification_key(ada):
    ada.post("account/email", {"email": WORK})
    key = key_mailed_to(WORK)
    assert ada.post("auth/email/verify", {"key": key}).status_code == 200

    shown = ada.get("auth/email/verify", headers={"X-Email-Verification-Key": key})

    assert shown.status_code == 400
    assert errors_of(shown) == [("key", "invalid")]
    assert ada_has(WORK)


def test_without_the_apps_page_the_link_leads_to_the_sites_page(ada, settings):
    settings.ACCOUNTS_HEADLESS_FRONTEND_URLS = {}

    ada.post("account/email", {"email": WORK})

    assert urlsplit(link_in(mails_to(WORK)[-1])).path.startswith("/accounts/email/verify/")


def test_the_notice_to_the_other_addresses_leads_to_the_apps_reset_page(ada):
    ada.post("account/email", {"email": WORK})

    (notice,) = mails_to(ADA)[-1:]
    assert link_in(notice) == "http://testserver/account/password/reset"


def test_post_refusals_are_allauths_errors_on_email(ada, several):
    APIClient("app").signup("bob@example.com", "bob")
    added(ada, WORK)

    taken = ada.post("account/email", {"email": "BOB@example.com"})
    own = ada.post("account/email", {"email": "ADA@work.example"})
    ada.post("account/email", {"email": HOME})
    full = ada.post("account/email", {"email": "ada@third.example"})
    invalid = ada.post("account/email", {"email": "not an address"})

    assert errors_of(taken) == [("email", "email_taken")]
    assert errors_of(own) == [("email", "duplicate_email")]
    assert errors_of(full) == [("email", "max_email_addresses")]
    assert full.json()["errors"][0]["message"] == "You cannot add more than 3 email addresses."
    assert errors_of(invalid) == [("email", "invalid")]
    assert {taken.status_code, own.status_code, full.status_code, invalid.status_code} == {400}
    assert conforms("ErrorResponse", taken.json())


def test_an_idempotency_key_sent_again_adds_once_and_mails_once(ada):
    headers = {"Idempotency-Key": "5b0c2a1e-6a5c-4e3b-9f57-0d8f6c3e2a11"}

    first = ada.post("account/email", {"email": WORK}, headers=headers)
    again = ada.post("account/email", {"email": WORK}, headers=headers)

    assert first.status_code == again.status_code == 200
    assert again.json()["data"] == first.json()["data"]
    assert len(mails_to(WORK)) == 1
    assert ada_has(waiting=[WORK])


def test_patch_makes_a_verified_address_primary(ada):
    added(ada, WORK)

    made = patch(ada, {"email": "ADA@WORK.example", "primary": True})

    assert made.status_code == 200
    assert made.json()["data"] == [
        {"email": WORK, "primary": True, "verified": True},
        {"email": ADA, "primary": False, "verified": True},
    ]
    assert store.get_by_email(ADA).email == WORK
    assert ada.get("auth/session").json()["data"]["user"]["email"] == WORK


def test_patch_refusals_are_allauths_errors(ada):
    ada.post("account/email", {"email": WORK})

    unverified = patch(ada, {"email": WORK, "primary": True})
    unknown = patch(ada, {"email": "someone@example.org", "primary": True})
    not_primary = patch(ada, {"email": ADA, "primary": False})
    missing = patch(ada, {})

    assert errors_of(unverified) == [("email", "unverified_primary_email")]
    assert errors_of(unknown) == [("email", "unknown_email")]
    assert errors_of(not_primary) == [("primary", "required")]
    assert sorted(errors_of(missing)) == [("email", "required"), ("primary", "required")]
    assert store.get_by_email(ADA).email == ADA


def test_delete_removes_an_address_and_frees_it_at_once(ada):
    added(ada, WORK)

    removed = ada.delete("account/email", {"email": WORK})

    assert removed.status_code == 200
    assert removed.json()["data"] == [{"email": ADA, "primary": True, "verified": True}]
    assert f"UNIQ#EMAIL#{WORK}" not in locks()
    bob = APIClient("app")
    bob.signup("bob@example.com", "bob")
    assert bob.post("account/email", {"email": WORK}).status_code == 200


def test_delete_of_an_address_waiting_for_its_key_ends_the_key(ada):
    ada.post("account/email", {"email": WORK})
    key = key_mailed_to(WORK)
    assert ada_has(waiting=[WORK])

    assert ada.delete("account/email", {"email": WORK}).status_code == 200

    assert ada.post("auth/email/verify", {"key": key}).status_code == 400
    assert store.get_by_email(WORK) is None


def test_delete_refusals_are_allauths_errors(ada):
    added(ada, WORK)

    primary = ada.delete("account/email", {"email": ADA})
    unknown = ada.delete("account/email", {"email": "someone@example.org"})

    assert errors_of(primary) == [("email", "cannot_remove_primary_email")]
    assert errors_of(unknown) == [("email", "unknown_email")]
    assert [address["email"] for address in ada.get("account/email").json()["data"]] == [ADA, WORK]


def test_put_mails_the_waiting_addresss_key_again(ada):
    ada.post("account/email", {"email": WORK})
    first = key_mailed_to(WORK)

    resent = put(ada, {"email": WORK})

    assert resent.status_code == 200
    assert len(mails_to(WORK)) == 2
    assert ada.post("auth/email/verify", {"key": first}).status_code == 200
    assert ada_has(WORK)


def test_put_answers_403_when_nothing_is_sent_and_400_for_an_unknown_address(ada):
    ada.post("account/email", {"email": WORK})
    assert put(ada, {"email": WORK}).status_code == 200

    too_soon = put(ada, {"email": WORK})
    verified = put(ada, {"email": ADA})
    unknown = put(ada, {"email": "someone@example.org"})

    assert too_soon.status_code == 403
    assert verified.status_code == 403
    assert errors_of(unknown) == [("email", "unknown_email")]
    assert len(mails_to(WORK)) == 2
    assert ada_has(waiting=[WORK])


def test_adding_making_primary_and_removing_ask_for_a_fresh_proof(ada, settings):
    added(ada, WORK)
    settings.ACCOUNTS_REAUTHENTICATION_TIMEOUT = 0

    answers = {
        "POST": ada.post("account/email", {"email": HOME}),
        "PATCH": patch(ada, {"email": WORK, "primary": True}),
        "DELETE": ada.delete("account/email", {"email": WORK}),
    }

    for response in answers.values():
        assert response.status_code == 401
        assert [flow["id"] for flow in response.json()["data"]["flows"]] == ["reauthenticate", "reauthenticate_by_code"]
    assert ada.get("account/email").status_code == 200
    assert ada.post("auth/reauthenticate", {"password": PASSWORD}).status_code == 200
    settings.ACCOUNTS_REAUTHENTICATION_TIMEOUT = 300
    assert ada.delete("account/email", {"email": WORK}).status_code == 200


def test_a_visitor_gets_the_login_flows(several):
    answer = APIClient("app").get("account/email")

    assert answer.status_code == 401
    assert "login" in [flow["id"] for flow in answer.json()["data"]["flows"]]


def test_login_with_a_verified_other_address_and_not_with_a_waiting_one(ada):
    added(ada, WORK)
    ada.post("account/email", {"email": HOME})

    by_other = APIClient("browser").login("ADA@work.example")
    by_waiting = APIClient("browser").login(HOME)

    assert by_other.status_code == 200
    assert by_other.json()["data"]["user"]["email"] == ADA
    assert by_waiting.status_code == 400


def test_config_says_what_allauths_says_with_several_addresses(several):
    config = APIClient("app").get("config").json()

    # allauth's config says nothing of ACCOUNT_MAX_EMAIL_ADDRESSES nor ACCOUNT_CHANGE_EMAIL.
    assert set(config["data"]["account"]) == {
        "login_methods",
        "authentication_method",
        "is_open_for_signup",
        "email_verification_by_code_enabled",
        "login_by_code_enabled",
        "password_reset_by_code_enabled",
    }
    assert conforms("ConfigurationResponse", config)


# With codes instead of links (ACCOUNTS_EMAIL_VERIFICATION_BY_CODE_ENABLED).


@pytest.fixture
def by_code(several):
    several.ACCOUNTS_EMAIL_VERIFICATION_BY_CODE_ENABLED = True
    return several


@pytest.mark.parametrize("client", ["app", "browser"])
def test_with_codes_the_added_address_gets_a_code_this_session_types(by_code, client):
    api = APIClient(client)
    api.signup()
    asked = api.post("account/email", {"email": WORK})
    code = code_in(mails_to(WORK)[-1])

    shown = api.get("auth/email/verify", headers={"X-Email-Verification-Key": code})
    done = api.post("auth/email/verify", {"key": code.lower().replace("-", "")})

    assert asked.status_code == 200
    assert asked.json()["data"][1] == {"email": WORK, "primary": False, "verified": False}
    assert "http" not in mails_to(WORK)[-1].body
    assert shown.status_code == 200
    assert shown.json()["data"]["email"] == WORK
    assert done.status_code == 200
    assert api.get("account/email").json()["data"][1] == {"email": WORK, "primary": False, "verified": True}


def test_with_codes_a_code_verifies_once_and_nowhere_else(by_code):
    ada = APIClient("app")
    ada.signup()
    ada.post("account/email", {"email": WORK})
    code = code_in(mails_to(WORK)[-1])
    elsewhere = APIClient("app")
    elsewhere.login("ada")

    assert elsewhere.post("auth/email/verify", {"key": code}).status_code == 409
    assert ada.post("auth/email/verify", {"key": code}).status_code == 200
    assert ada.post("auth/email/verify", {"key": code}).status_code == 409
    assert ada_has(WORK)


def test_with_codes_a_wrong_code_is_counted_and_the_third_ends_it(by_code):
    ada = APIClient("app")
    ada.signup()
    ada.post("account/email", {"email": WORK})
    code = code_in(mails_to(WORK)[-1])
    wrong = "BBBB-BBBB" if code != "BBBB-BBBB" else "CCCC-CCCC"

    tries = [ada.post("auth/email/verify", {"key": wrong}) for _ in range(3)]

    assert [errors_of(each) for each in tries[:2]] == [[("key", "incorrect_code")]] * 2
    assert errors_of(tries[2]) == [("key", "too_many_attempts")]
    assert ada.post("auth/email/verify", {"key": code}).status_code == 409
    assert ada_has(waiting=[WORK])


def test_with_codes_removing_the_address_ends_its_code(by_code):
    ada = APIClient("app")
    ada.signup()
    ada.post("account/email", {"email": WORK})
    code = code_in(mails_to(WORK)[-1])
    ada.delete("account/email", {"email": WORK})

    refused = ada.post("auth/email/verify", {"key": code})

    assert refused.status_code == 400
    assert store.get_by_email(WORK) is None


def test_with_codes_put_mails_a_new_code_that_replaces_the_first(by_code):
    ada = APIClient("app")
    ada.signup()
    ada.post("account/email", {"email": WORK})
    first = code_in(mails_to(WORK)[-1])

    assert put(ada, {"email": WORK}).status_code == 200
    second = code_in(mails_to(WORK)[-1])

    if first != second:
        assert errors_of(ada.post("auth/email/verify", {"key": first})) == [("key", "incorrect_code")]
    assert ada.post("auth/email/verify", {"key": second}).status_code == 200
    assert ada_has(WORK)


def test_with_codes_a_new_password_ends_the_code(by_code):
    ada = APIClient("app")
    ada.signup()
    ada.post("account/email", {"email": WORK})
    code = code_in(mails_to(WORK)[-1])
    changed = ada.post("account/password/change", {"current_password": PASSWORD, "new_password": "Quartz-Meadow-9"})
    assert changed.status_code == 200

    refused = ada.post("auth/email/verify", {"key": code})

    assert errors_of(refused) == [("key", "invalid")]
    assert ada_has(waiting=[WORK])
