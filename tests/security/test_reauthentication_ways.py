"""Reauthentication offers what the account has (issue 26) and a mailed code (issue 27), on
DynamoDB Local: a code of the authenticator app and a code mailed to the verified address
each make the session fresh once, refuse a wrong or replayed answer, count against a
limit (the app's codes against the second step's ``mfa_attempt``, the mailed ones against
``reauthenticate``), and are offered only to an account that has them; the API's
``auth/2fa/reauthenticate`` is the same flow."""

import re
import threading
import time

import pytest
from django.contrib.auth.hashers import make_password
from django.test import Client
from django.utils import translation

from accounts import store
from accounts.login_codes import flows as login_codes
from tests.headless import APIClient
from tests.mfa import code_of, enable_totp, password_login, second_step
from tests.mfa.test_mfa_reauthentication import REAUTHENTICATE, age
from tests.web import PASSWORD, login, signed_up_client
from tests.web.test_web_round_trips import counted

pytestmark = pytest.mark.dynamodb_local

TOTP_URL = "/accounts/mfa/reauthenticate/totp/"
SEND_URL = "/accounts/mfa/reauthenticate/code/send/"
CODE_URL = "/accounts/mfa/reauthenticate/code/"
SENSITIVE = "/accounts/email/"


def is_fresh(client):
    return client.get(SENSITIVE).status_code == 200


def next_code(secret):
    """A code of the step after the enrolment's (which the enrolment spent)."""
    return code_of(secret, time.time() + 30)


def stale_client_with_totp():
    client = signed_up_client()
    secret, _ = enable_totp(client)
    age(client, 301)
    return client, secret


def stale_client(*, verified=True):
    """A client logged in to an account made by the store, its proof too old."""
    store.signup("ada@example.com", "ada", make_password(PASSWORD), email_verified=verified)
    client = Client()
    assert login(client, "ada").status_code == 302
    age(client, 301)
    return client


def mailed_code(client, mailoutbox):
    mailoutbox.clear()
    response = client.post(f"{SEND_URL}?next={SENSITIVE}")
    assert response["Location"] == f"{CODE_URL}?next=%2Faccounts%2Femail%2F"
    return re.search(r"confirm it is you: (\w{8})", mailoutbox[-1].body).group(1)


def test_the_page_offers_the_authenticator_app_to_an_account_that_has_one(ddb):
    client, _ = stale_client_with_totp()

    page = client.get(f"{REAUTHENTICATE}?next={SENSITIVE}").content.decode()

    assert f'action="{TOTP_URL}?next={SENSITIVE}"' in page
    assert "Confirm with your authenticator app" in page


def test_a_totp_code_makes_it_fresh_and_goes_back(ddb):
    client, secret = stale_client_with_totp()

    response = client.post(f"{TOTP_URL}?next={SENSITIVE}", {"code": next_code(secret)})

    assert response["Location"] == SENSITIVE
    assert is_fresh(client)


def test_a_wrong_totp_code_is_refused(ddb):
    client, secret = stale_client_with_totp()
    wrong = "000000" if next_code(secret) != "000000" else "111111"

    response = client.post(TOTP_URL, {"code": wrong})

    assert response.status_code == 200
    assert response.context["totp_form"].has_error("code", "wrong_code")
    assert not is_fresh(client)


def test_a_totp_code_reauthenticates_once(ddb):
    client, secret = stale_client_with_totp()
    code = next_code(secret)
    client.post(TOTP_URL, {"code": code})
    age(client, 301)

    replay = client.post(TOTP_URL, {"code": code})

    assert replay.context["totp_form"].has_error("code", "already_used")
    assert not is_fresh(client)


def test_a_totp_code_used_to_log_in_cannot_reauthenticate(ddb):
    owner, secret = stale_client_with_totp()
    code = next_code(secret)
    browser = Client()
    password_login(browser)
    assert second_step(browser, code).status_code == 302
    age(browser, 301)

    replay = browser.post(TOTP_URL, {"code": code})

    assert replay.context["totp_form"].has_error("code", "already_used")
    assert not is_fresh(browser)


def test_the_enrolment_code_cannot_reauthenticate(ddb):
    client = signed_up_client()
    page = client.get("/accounts/mfa/totp/")
    secret = page.context["secret"]
    code = code_of(secret)
    client.post("/accounts/mfa/totp/", {"code": code})
    age(client, 301)

    replay = client.post(TOTP_URL, {"code": code})

    assert replay.context["totp_form"].has_error("code", "already_used")


def test_totp_codes_count_against_the_second_step_limit(ddb, settings):
    settings.ACCOUNTS_RATE_LIMITS = {"mfa_attempt": "2/m/key"}
    client, secret = stale_client_with_totp()
    client.post(TOTP_URL, {"code": "000000"})
    client.post(TOTP_URL, {"code": "000001"})

    limited = client.post(TOTP_URL, {"code": next_code(secret)})

    assert limited.status_code == 429
    assert not is_fresh(client)


def test_an_account_without_the_app_is_not_offered_it_and_no_code_reauthenticates_it(ddb):
    client = signed_up_client()
    age(client, 301)

    page = client.get(REAUTHENTICATE).content.decode()
    typed = client.post(TOTP_URL, {"code": "123456"})

    assert TOTP_URL not in page and "authenticator app" not in page
    assert typed.context["totp_form"].has_error("code", "wrong_code")
    assert not is_fresh(client)


def test_a_mailed_code_makes_it_fresh_and_goes_back(ddb, mailoutbox):
    client = stale_client()
    assert "Email me a code" in client.get(REAUTHENTICATE).content.decode()
    code = mailed_code(client, mailoutbox)

    response = client.post(f"{CODE_URL}?next={SENSITIVE}", {"code": code.lower()})

    assert mailoutbox[-1].to == ["ada@example.com"]
    assert response["Location"] == SENSITIVE
    assert is_fresh(client)


def test_a_wrong_mailed_code_is_refused_and_a_code_has_three_tries(ddb, mailoutbox):
    client = stale_client()
    code = mailed_code(client, mailoutbox)
    wrong = [client.post(CODE_URL, {"code": "ABCDEFGH" if code != "ABCDEFGH" else "HGFEDCBA"}) for _ in range(3)]

    limited = client.post(CODE_URL, {"code": code})

    assert all(response.context["form"].has_error("code", "wrong_code") for response in wrong)
    assert limited.status_code == 429
    assert not is_fresh(client)


def test_wrong_codes_counted_after_a_right_one_was_read_stop_it_and_keep_the_session(ddb, mailoutbox, monkeypatch):
    client = stale_client()
    code = mailed_code(client, mailoutbox)
    cookie = client.cookies["sessionid"].value
    digest = login_codes.code_digest
    guessed = []

    def three_wrong_codes_meanwhile(code_id, typed):
        # The right code's request has read the code's tries (none yet): three wrong codes
        # from a copy of the session are counted before it writes.
        if not guessed:
            guessed.append(True)
            thread = threading.Thread(target=guess_three_times)
            thread.start()
            thread.join()
        return digest(code_id, typed)

    def guess_three_times():
        copy = Client()
        copy.cookies["sessionid"] = cookie
        guessed.extend(copy.post(CODE_URL, {"code": "ABCDEFGH"}).status_code for _ in range(3))

    monkeypatch.setattr(login_codes, "code_digest", three_wrong_codes_meanwhile)

    response = client.post(CODE_URL, {"code": code})

    assert guessed == [True, 200, 200, 200]
    assert response.status_code == 429
    assert not is_fresh(client)
    assert client.get(REAUTHENTICATE).status_code == 200, "refused, the session stays logged in"


def test_a_mailed_code_reauthenticates_once(ddb, mailoutbox):
    client = stale_client()
    code = mailed_code(client, mailoutbox)
    copied = client.cookies["sessionid"].value
    client.post(CODE_URL, {"code": code})

    replay = Client()
    replay.cookies["sessionid"] = copied
    age_of_copy = replay.post(CODE_URL, {"code": code})

    assert age_of_copy.status_code == 302 and "/accounts/login/" in age_of_copy["Location"]
    assert replay.get(SENSITIVE).status_code == 302
    assert is_fresh(client)


def test_two_requests_that_read_one_mailed_code_reauthenticate_once(ddb, mailoutbox, monkeypatch):
    client = stale_client()
    code = mailed_code(client, mailoutbox)
    cookie = client.cookies["sessionid"].value
    # Both requests have read the session that holds the code before either writes.
    both_read = threading.Barrier(2, timeout=20)
    digest = login_codes.code_digest

    def judged_together(code_id, typed):
        both_read.wait()
        return digest(code_id, typed)

    monkeypatch.setattr(login_codes, "code_digest", judged_together)
    answers = []

    def send():
        browser = Client()
        browser.cookies["sessionid"] = cookie
        answers.append(browser.post(f"{CODE_URL}?next={SENSITIVE}", {"code": code}))

    threads = [threading.Thread(target=send) for _ in range(2)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()

    assert sorted(answer["Location"] for answer in answers) == [
        SENSITIVE,
        f"{REAUTHENTICATE}?next=%2Faccounts%2Femail%2F",
    ]


def test_mailed_codes_count_against_the_reauthenticate_limit(ddb, settings, mailoutbox):
    settings.ACCOUNTS_RATE_LIMITS = {"reauthenticate": "2/m/user"}
    client = stale_client()
    code = mailed_code(client, mailoutbox)
    client.post(CODE_URL, {"code": "ABCDEFGH"})
    client.post(CODE_URL, {"code": "ABCDEFGJ"})

    limited = client.post(CODE_URL, {"code": code})

    assert limited.status_code == 429
    assert not is_fresh(client)


def test_an_unverified_address_is_not_offered_a_code_and_gets_none(ddb, mailoutbox):
    client = stale_client(verified=False)
    mailoutbox.clear()

    page = client.get(REAUTHENTICATE).content.decode()
    response = client.post(SEND_URL)

    assert "Email me a code" not in page
    assert response["Location"].startswith(REAUTHENTICATE)
    assert mailoutbox == []
    assert client.get(CODE_URL)["Location"].startswith(REAUTHENTICATE)


def test_the_api_reauthenticates_with_a_totp_code_once(ddb):
    client, secret = stale_client_with_totp()
    code = next_code(secret)
    api = APIClient("browser", client)

    first = api.post("auth/2fa/reauthenticate", {"code": code})
    age(client, 301)
    replay = api.post("auth/2fa/reauthenticate", {"code": code})

    assert first.status_code == 200
    assert replay.status_code == 400 and replay.json()["errors"][0]["code"] == "incorrect_code"
    assert not is_fresh(client)


@pytest.mark.parametrize("language", ["ja", "tr", "fr"])
def test_the_new_ways_and_their_mail_speak_the_language(ddb, mailoutbox, language):
    client, _ = stale_client_with_totp()
    with translation.override(language):
        button = translation.gettext("Confirm with your authenticator app")
        subject = translation.gettext("Your code to confirm it is you on %(site)s") % {"site": ""}

    page = client.get(REAUTHENTICATE, HTTP_ACCEPT_LANGUAGE=language).content.decode()
    client.post(SEND_URL, HTTP_ACCEPT_LANGUAGE=language)

    assert button != "Confirm with your authenticator app" and button in page
    assert subject.strip() in mailoutbox[-1].subject


def test_a_code_asked_for_past_the_mail_limit_leaves_the_mailed_one_valid(ddb, settings, mailoutbox):
    settings.ACCOUNTS_RATE_LIMITS = {"mail": "1/m/key"}
    client = stale_client()
    code = mailed_code(client, mailoutbox)

    again = client.post(f"{SEND_URL}?next={SENSITIVE}")
    response = client.post(f"{CODE_URL}?next={SENSITIVE}", {"code": code})

    assert again["Location"] == f"{REAUTHENTICATE}?next=%2Faccounts%2Femail%2F"
    assert len(mailoutbox) == 1
    assert response["Location"] == SENSITIVE


def test_a_totp_code_costs_its_count_and_its_step(proxy):
    client, secret = stale_client_with_totp()

    response, requests = counted(proxy, lambda: client.post(TOTP_URL, {"code": next_code(secret)}))

    assert response.status_code == 302
    # The session's read (with the account), the account's read with its mfa_attempt
    # counters, the step spent with the counters checked, and the session's save (its proof
    # recorded). A right code counts nothing.
    assert requests == {"BatchGetItem": 2, "TransactWriteItems": 1, "PutItem": 1}


def test_a_mailed_code_costs_its_counts_and_one_transaction(proxy, mailoutbox):
    client = stale_client()
    code = mailed_code(client, mailoutbox)

    response, requests = counted(proxy, lambda: client.post(CODE_URL, {"code": code}))

    assert response.status_code == 302
    # The session's read (with the account), the try's count against reauthenticate, the
    # code's tries read, and ONE transaction: the new session, the one holding the code
    # deleted, the tries checked (with the session slot it keeps).
    assert requests == {"BatchGetItem": 2, "UpdateItem": 1, "TransactWriteItems": 1}
