"""Verification and password reset by a mailed code through the API, as allauth's
``ACCOUNT_EMAIL_VERIFICATION_BY_CODE_ENABLED`` and ``ACCOUNT_PASSWORD_RESET_BY_CODE_ENABLED``
(its React app's VerifyEmailByCode and ConfirmPasswordResetCode screens), on DynamoDB Local:
a code (``XXXX-XXXX``, any case, dash or not) works in the session that asked, once, within
its minutes, after at most three tries; a wrong one is counted; the right one's transaction
checks its tries under their limit."""

import pytest

from accounts import email_codes, ratelimit, store
from accounts.sessions import SessionStore
from tests.headless import APIClient
from tests.headless_spec import conforms
from tests.mail import code_in, mails_to
from tests.protocol.test_guards_stale_reads import before_attempt
from tests.web import OTHER_PASSWORD, PASSWORD, signed_up_client

pytestmark = pytest.mark.dynamodb_local

NEW_PASSWORD = "Quartz-Meadow-Falcon-9"


def code_in_mail(address):
    """The code of the last mail to ``address``."""
    return code_in(mails_to(address)[-1])


def pending_ids(response):
    return [flow["id"] for flow in response.json()["data"]["flows"] if flow.get("is_pending")]


def wrong(code):
    """A code of the same format that is not ``code``."""
    return "BBBB-BBBB" if code != "BBBB-BBBB" else "CCCC-CCCC"


@pytest.fixture
def by_code(ddb, settings, mailoutbox):
    settings.ACCOUNTS_EMAIL_VERIFICATION = "mandatory"
    settings.ACCOUNTS_EMAIL_VERIFICATION_BY_CODE_ENABLED = True
    settings.ACCOUNTS_PASSWORD_RESET_BY_CODE_ENABLED = True
    return settings


# Verification by code.


@pytest.mark.parametrize("client", ["app", "browser"])
def test_a_sign_up_is_verified_with_the_code_mailed_to_its_session(by_code, client):
    api = APIClient(client)
    signed_up = api.signup()
    code = code_in_mail("ada@example.com")

    shown = api.get("auth/email/verify", headers={"X-Email-Verification-Key": code})
    verified = api.post("auth/email/verify", {"key": code.replace("-", "").lower()})

    assert signed_up.status_code == 401
    assert pending_ids(signed_up) == ["verify_email"]
    assert "/accounts/verify/" not in mails_to("ada@example.com")[-1].body
    assert shown.status_code == 200
    assert shown.json()["data"]["email"] == "ada@example.com"
    assert conforms("EmailVerificationInfo", shown.json(), "responses")
    assert verified.status_code == 200
    assert verified.json()["data"]["user"]["username"] == "ada"
    assert store.is_verified(store.get_by_username("ada"))


def test_config_says_codes_are_on(by_code):
    account = APIClient("app").get("config").json()["data"]["account"]

    assert account["email_verification_by_code_enabled"] is True
    assert account["password_reset_by_code_enabled"] is True


def test_a_code_is_of_the_session_that_asked(by_code):
    APIClient("app").signup()
    code = code_in_mail("ada@example.com")

    elsewhere = APIClient("app").post("auth/email/verify", {"key": code})

    assert elsewhere.status_code == 409
    assert not store.is_verified(store.get_by_username("ada"))


def test_three_wrong_codes_end_the_code_and_a_new_one_works(by_code):
    api = APIClient("app")
    api.signup()
    code = code_in_mail("ada@example.com")

    answers = [api.post("auth/email/verify", {"key": wrong(code)}) for _ in range(3)]
    right_too_late = api.post("auth/email/verify", {"key": code})
    resent = api.post("auth/email/verify/resend")
    new = code_in_mail("ada@example.com")

    assert [answer.status_code for answer in answers] == [400, 400, 400]
    assert [answer.json()["errors"][0]["code"] for answer in answers] == [
        "incorrect_code",
        "incorrect_code",
        "too_many_attempts",
    ]
    assert right_too_late.status_code == 409
    assert not store.is_verified(store.get_by_username("ada"))
    assert resent.status_code == 200
    assert api.post("auth/email/verify", {"key": new}).status_code == 200
    assert store.is_verified(store.get_by_username("ada"))


def test_a_login_of_an_unverified_account_mails_that_session_a_code(by_code):
    APIClient("app").signup()
    api = APIClient("app")

    # By its username: an unverified sign-up holds no address yet (only its own browser
    # finds it by its address).
    logged_in = api.login("ada")
    code = code_in_mail("ada@example.com")

    assert logged_in.status_code == 401
    assert pending_ids(logged_in) == ["verify_email"]
    # Its right password was typed in this session: verifying goes on with that login.
    assert api.post("auth/email/verify", {"key": code}).status_code == 200


def test_a_logged_in_account_verifies_its_own_address_with_a_code(by_code):
    by_code.ACCOUNTS_EMAIL_VERIFICATION = "optional"
    api = APIClient("app")
    assert api.signup().status_code == 200

    verified = api.post("auth/email/verify", {"key": code_in_mail("ada@example.com")})

    assert verified.status_code == 200
    assert api.get("account/email").json()["data"] == [{"email": "ada@example.com", "primary": True, "verified": True}]


def test_a_code_dies_with_a_new_password(by_code):
    api = APIClient("app")
    api.signup()
    code = code_in_mail("ada@example.com")
    ada = store.get_by_username("ada")
    from accounts.models import User

    user = User.from_account(ada)
    user.set_password(NEW_PASSWORD)
    user.save()

    refused = api.post("auth/email/verify", {"key": code})

    assert refused.status_code == 400
    assert not store.is_verified(store.get_by_username("ada"))


def test_wrong_tries_counted_after_the_right_codes_read_stop_it(by_code):
    api = APIClient("app")
    api.signup()
    code = code_in_mail("ada@example.com")

    with before_attempt(1, three_wrong_tries(api, email_codes.VERIFY_EMAIL)):
        refused = api.post("auth/email/verify", {"key": code})

    # Three wrong codes counted between this request's read of the tries and its
    # transaction: the transaction's check of the tries refuses it, and nothing is verified.
    assert refused.status_code == 400
    assert refused.json()["errors"][0]["code"] == "too_many_attempts"
    assert not store.is_verified(store.get_by_username("ada"))


def three_wrong_tries(api, purpose):
    """Count three wrong tries of the code ``api``'s session waits for (``purpose``), as other
    requests of that session would."""
    found = email_codes.pending(SessionStore(api.token), purpose)
    counter = ratelimit.Counter(f"{purpose.name}_code", email_codes.TRIES_RULE, found.code_id)
    return lambda: ratelimit.count_attempt("guess", [counter, counter, counter])


# An email change by code.


def test_an_email_change_is_confirmed_with_the_code_mailed_to_the_new_address(by_code):
    by_code.ACCOUNTS_EMAIL_VERIFICATION = "none"
    api = APIClient("app")
    api.signup()

    asked = api.post("account/email", {"email": "lovelace@example.com"})
    code = code_in_mail("lovelace@example.com")
    done = api.post("auth/email/verify", {"key": code})

    assert asked.json()["data"][1] == {"email": "lovelace@example.com", "primary": False, "verified": False}
    assert done.status_code == 200
    assert done.json()["data"]["user"]["email"] == "lovelace@example.com"
    assert store.get_by_email("lovelace@example.com").username == "ada"
    assert api.post("auth/email/verify", {"key": code}).status_code == 409


def test_a_code_of_a_change_replaced_by_a_newer_one_never_applies(by_code, monkeypatch):
    by_code.ACCOUNTS_EMAIL_VERIFICATION = "none"
    by_code.ACCOUNTS_RATE_LIMITS = False
    api = APIClient("app")
    api.signup()
    api.post("account/email", {"email": "lovelace@example.com"})
    code = code_in_mail("lovelace@example.com")
    as_read = store.get_by_username("ada")
    newer = APIClient("app")
    newer.token = api.token

    def replace_the_change():
        # Stamped with the `updated` this request read (two servers' clocks can agree), so
        # that only the change's nonce, which the newer request replaced, can refuse it.
        with monkeypatch.context() as same_tick:
            same_tick.setattr(store, "utcnow", lambda: as_read.updated)
            assert newer.post("account/email", {"email": "countess@example.com"}).status_code == 200

    # A newer request (another tab) replaces the change between this request's read of the
    # account and its transaction.
    with before_attempt(1, replace_the_change):
        refused = api.post("auth/email/verify", {"key": code})

    assert refused.status_code == 400
    assert store.get_by_username("ada").email == "ada@example.com"
    assert store.get_by_email("lovelace@example.com") is None


# Password reset by code.


def reset_asked():
    """ada (verified) asks for a reset code through the app client: ``(client, code)``."""
    signed_up_client()
    store.verify_email(store.get_by_username("ada"))
    api = APIClient("app")
    assert api.post("auth/password/request", {"email": "ada@example.com"}).status_code == 401
    return api, code_in_mail("ada@example.com")


@pytest.mark.parametrize("client", ["app", "browser"])
def test_a_password_is_reset_with_the_code_mailed_to_the_session(by_code, client):
    signed_up_client(password=PASSWORD)
    store.verify_email(store.get_by_username("ada"))
    api = APIClient(client)

    asked = api.post("auth/password/request", {"email": "ada@example.com"})
    code = code_in_mail("ada@example.com")
    shown = api.get("auth/password/reset", headers={"X-Password-Reset-Key": code})
    reset = api.post("auth/password/reset", {"key": code, "password": NEW_PASSWORD})

    assert asked.status_code == 401
    assert pending_ids(asked) == ["password_reset_by_code"]
    assert shown.status_code == 200
    assert shown.json()["data"]["user"]["username"] == "ada"
    assert conforms("PasswordResetInfo", shown.json(), "responses")
    assert reset.status_code == 401
    assert pending_ids(reset) == []
    assert APIClient("app").login("ada", NEW_PASSWORD).status_code == 200
    assert APIClient("app").login("ada", PASSWORD).status_code == 400


def test_an_unknown_address_gets_the_same_answer_and_no_code_works(by_code):
    api = APIClient("app")

    asked = api.post("auth/password/request", {"email": "nobody@example.com"})
    guessed = api.get("auth/password/reset", headers={"X-Password-Reset-Key": "BCDF-GHJK"})

    assert asked.status_code == 401
    assert pending_ids(asked) == ["password_reset_by_code"]
    assert mails_to("nobody@example.com") == []
    assert guessed.status_code == 400
    assert guessed.json()["errors"][0]["code"] == "incorrect_code"


def test_a_reset_code_works_once(by_code):
    api, code = reset_asked()
    assert api.post("auth/password/reset", {"key": code, "password": NEW_PASSWORD}).status_code == 401

    again = api.post("auth/password/reset", {"key": code, "password": OTHER_PASSWORD})

    assert again.status_code == 409
    assert APIClient("app").login("ada", NEW_PASSWORD).status_code == 200


def test_two_uses_of_one_reset_code_at_once_set_one_password(by_code):
    api, code = reset_asked()
    same_session = APIClient("app")
    same_session.token = api.token

    # The other use commits between this request's read of the account and its transaction.
    with before_attempt(1, lambda: same_session.post("auth/password/reset", {"key": code, "password": NEW_PASSWORD})):
        second = api.post("auth/password/reset", {"key": code, "password": OTHER_PASSWORD})

    assert second.status_code != 401
    assert APIClient("app").login("ada", NEW_PASSWORD).status_code == 200
    assert APIClient("app").login("ada", OTHER_PASSWORD).status_code == 400


def test_three_wrong_reset_codes_end_it(by_code):
    api, code = reset_asked()

    answers = [api.get("auth/password/reset", headers={"X-Password-Reset-Key": wrong(code)}) for _ in range(3)]
    too_late = api.post("auth/password/reset", {"key": code, "password": NEW_PASSWORD})

    assert [answer.status_code for answer in answers] == [400, 400, 400]
    assert too_late.status_code == 409
    assert APIClient("app").login("ada", PASSWORD).status_code == 200


def test_wrong_reset_tries_counted_after_the_right_codes_read_stop_it(by_code):
    api, code = reset_asked()
    assert api.get("auth/password/reset", headers={"X-Password-Reset-Key": code}).status_code == 200

    with before_attempt(1, three_wrong_tries(api, email_codes.RESET_PASSWORD)):
        refused = api.post("auth/password/reset", {"key": code, "password": NEW_PASSWORD})

    assert refused.status_code == 400
    assert APIClient("app").login("ada", PASSWORD).status_code == 200


def test_a_reset_code_expires_after_allauths_three_minutes(by_code, monkeypatch):
    api, code = reset_asked()
    later = email_codes.time.time() + email_codes.RESET_PASSWORD.seconds + 1
    monkeypatch.setattr(email_codes.time, "time", lambda: later)

    assert api.get("auth/password/reset", headers={"X-Password-Reset-Key": code}).status_code == 409


def test_with_codes_on_a_reset_link_key_is_not_accepted(by_code):
    signed_up_client()
    from accounts.models import User
    from accounts.password_reset import reset_link_parts

    key = ":".join(reset_link_parts(User.from_account(store.get_by_username("ada"))))

    assert APIClient("app").get("auth/password/reset", headers={"X-Password-Reset-Key": key}).status_code == 409
