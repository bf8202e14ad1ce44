"""The login's limit on DynamoDB Local (issue 18): every spelling of a login counts on one
counter, concurrent guesses cannot outrun it, a refused guess hashes nothing, a busy
DynamoDB is a 503, and the owner's own browser (its device cookie) is never locked out."""

import contextlib
import threading
import time
from concurrent.futures import ThreadPoolExecutor

import botocore.awsrequest
import pytest
from django.contrib.auth.hashers import Argon2PasswordHasher, make_password
from django.core import signing
from django.test import Client, RequestFactory

from accounts import devices, dynamo, store
from accounts.tables import dynamodb_client, plain_client
from tests.mail import link_in, mails_to, path_of
from tests.web import OTHER_PASSWORD, PASSWORD, login, signup
from tests.web.test_ratelimit import refused

# What these tests count is Argon2 hashes: the real hasher, not the test settings' MD5.
pytestmark = [pytest.mark.dynamodb_local, pytest.mark.argon2]

NEW_PASSWORD = "Velvet-Compass-Orchard-5"


@pytest.fixture
def softy(ddb):
    account, _ = store.signup("softy@example.com", "bfkid", make_password(PASSWORD))
    return account


def from_address(number):
    """A browser of its own (no cookie) at its own address."""
    return Client(REMOTE_ADDR=f"198.51.100.{number}")


def guess_from_rotating_addresses(login_name, times=5):
    """``times`` wrong passwords, each from another address and browser; all must be checked."""
    answers = [login(from_address(number), login_name, OTHER_PASSWORD) for number in range(times)]
    assert [answer.status_code for answer in answers] == [200] * times


@contextlib.contextmanager
def hasher_calls():
    """Counts the Argon2 hashes computed meanwhile (verifications and the dummy hash)."""
    calls = []
    lock = threading.Lock()
    verify, encode = Argon2PasswordHasher.verify, Argon2PasswordHasher.encode

    def counting(original):
        def counted(self, *args, **kwargs):
            with lock:
                calls.append(original.__name__)
            return original(self, *args, **kwargs)

        return counted

    Argon2PasswordHasher.verify, Argon2PasswordHasher.encode = counting(verify), counting(encode)
    try:
        yield calls
    finally:
        Argon2PasswordHasher.verify, Argon2PasswordHasher.encode = verify, encode


# Point 2: keys are what the lock is keyed on.

SPELLINGS = [
    "bfkid",
    "BFKID",
    "bfki\u0307d",
    "softy@example.com",
    "softy@exam\u00adple.com",
    "softy@exam\u00ad\u00ad\u00adple.com",
    "softy@EXAMPLE\u3002COM",
]


@pytest.mark.parametrize("spelling", SPELLINGS)
def test_every_spelling_of_a_locked_login_is_locked(softy, spelling):
    guess_from_rotating_addresses("bfkid")

    assert refused(login(from_address(99), spelling))


def test_guesses_in_every_spelling_count_on_one_counter(softy):
    for number, spelling in enumerate(SPELLINGS[1:6]):
        assert login(from_address(number), spelling, OTHER_PASSWORD).status_code == 200

    assert refused(login(from_address(99), "bfkid"))


def test_spellings_of_a_name_nobody_holds_share_a_counter_too(ddb):
    guess_from_rotating_addresses("ghost@exam\u00adple.com")

    assert refused(login(from_address(99), "GHOST@example.com", OTHER_PASSWORD))


# Point 3: atomic counting, and a refused attempt hashes nothing.


def sixteen_at_once(send):
    barrier = threading.Barrier(16)

    def start(number):
        barrier.wait()
        return send(number)

    with ThreadPoolExecutor(max_workers=16) as pool:
        return list(pool.map(start, range(16)))


def test_16_concurrent_wrong_passwords_check_at_most_the_limit(softy, capsys):
    with hasher_calls() as hashed:
        answers = sixteen_at_once(lambda number: login(from_address(number), "bfkid", OTHER_PASSWORD))

    statuses = sorted(answer.status_code for answer in answers)
    with capsys.disabled():
        print(
            f"\n16 concurrent wrong passwords: {len(hashed)} hashed, {statuses.count(200)} checked, {statuses.count(429)} refused"
        )
    # The limit is 5 per account (5/5m/key): exactly 5 were checked, 11 refused unhashed.
    assert statuses == [200] * 5 + [429] * 11
    assert hashed == ["verify"] * 5


def test_16_concurrent_failures_from_one_address_check_at_most_its_limit(ddb):
    with hasher_calls() as hashed:
        answers = sixteen_at_once(lambda number: login(from_address(1), f"nobody{number}", OTHER_PASSWORD))

    statuses = sorted(answer.status_code for answer in answers)
    # 10 per address a minute (10/m/ip): the dummy hash of an unknown name runs 10 times.
    assert statuses == [200] * 10 + [429] * 6
    assert len(hashed) == 10


def test_a_refused_attempt_runs_no_password_hasher(softy):
    guess_from_rotating_addresses("bfkid")

    with hasher_calls() as hashed:
        assert refused(login(from_address(99), "bfkid"))
        assert refused(login(from_address(99), "bfkid", OTHER_PASSWORD))

    assert hashed == []


# Point 5: a busy DynamoDB is an honest 503, never a 500, and nothing is checked unseen.


def error_answer(code):
    return {"Error": {"Code": code, "Message": "injected"}, "ResponseMetadata": {"HTTPStatusCode": 400}}


CONFLICT = {
    "Error": {"Code": "TransactionCanceledException", "Message": "Transaction cancelled"},
    "CancellationReasons": [{"Code": "TransactionConflict"}, {"Code": "TransactionConflict"}],
    "ResponseMetadata": {"HTTPStatusCode": 400},
}


@contextlib.contextmanager
def answering(client, operation, answer):
    """``client`` answers every ``operation`` with ``answer`` (a parsed error), unsent."""

    def handler(params, **kwargs):
        return botocore.awsrequest.AWSResponse(None, 400, {}, None), answer

    event = f"before-call.dynamodb.{operation}"
    client.meta.events.register(event, handler)
    try:
        yield
    finally:
        client.meta.events.unregister(event, handler)


@pytest.mark.parametrize("code", ["TransactionConflictException", "ThrottlingException"])
def test_a_counter_write_meeting_contention_is_a_503_and_checks_no_password(softy, code):
    # Every way a counter might be written (a transaction, an update) is contended.
    with (
        answering(dynamodb_client(), "TransactWriteItems", CONFLICT),
        answering(plain_client(), "UpdateItem", error_answer(code)),
        hasher_calls() as hashed,
    ):
        response = login(from_address(1), "bfkid", OTHER_PASSWORD)

    assert response.status_code == 503
    assert response["Retry-After"]
    # The attempt was not counted, so it was not checked either: no guess goes unseen.
    assert hashed == []
    assert login(from_address(1), "bfkid").status_code == 302


# Point 4: the owner is never locked out.


def owner_browser(login_name="bfkid"):
    """The owner's usual browser: it logged in before (and logged out)."""
    browser = from_address(7)
    assert login(browser, login_name).status_code == 302
    browser.post("/accounts/logout/")
    return browser


def test_five_guesses_from_rotating_addresses_do_not_stop_the_owners_browser(softy):
    owner = owner_browser()
    guess_from_rotating_addresses("bfkid")

    assert refused(login(from_address(99), "bfkid"))
    response = login(owner, "bfkid")

    assert response.status_code == 302
    assert owner.get("/accounts/profile/").context["user"].pk == softy.id


def test_the_owners_browser_stays_in_while_guesses_go_on(softy):
    owner = owner_browser()
    guess_from_rotating_addresses("bfkid")
    for number in range(3):
        assert refused(login(from_address(number), "bfkid", OTHER_PASSWORD))
        assert login(owner, "bfkid").status_code == 302
        owner.post("/accounts/logout/")
    # The owner's logins did not lift the lockout of the others.
    assert refused(login(from_address(99), "bfkid"))


def test_a_browser_without_the_cookie_is_limited(softy):
    owner_browser()
    guess_from_rotating_addresses("bfkid")

    assert refused(login(from_address(7), "bfkid"))


def test_the_owners_browser_counts_its_own_wrong_passwords_apart(softy):
    owner = owner_browser()
    for _ in range(5):
        assert login(owner, "bfkid", OTHER_PASSWORD).status_code == 200

    assert refused(login(owner, "bfkid"))
    # Its failures lock only itself: another browser still gets in.
    assert login(from_address(99), "bfkid").status_code == 302


def test_the_device_cookie_is_signed_httponly_lax_and_long_lived(softy):
    browser = Client()
    login(browser, "bfkid")

    cookie = browser.cookies[devices.COOKIE_NAME]
    assert cookie["httponly"] is True
    assert cookie["samesite"] == "Lax"
    assert int(cookie["max-age"]) >= 365 * 24 * 3600
    assert not cookie["secure"]
    assert softy.id in devices.trusted_accounts(login(browser, "bfkid").wsgi_request)


def test_the_device_cookie_is_secure_on_an_https_site(softy, settings):
    browser = Client()

    browser.post("/accounts/login/", {"username": "bfkid", "password": PASSWORD}, secure=True)

    assert browser.cookies[devices.COOKIE_NAME]["secure"] is True


def test_a_forged_or_foreign_device_cookie_trusts_nothing(softy):
    grace, _ = store.signup("grace@example.com", "grace", make_password(PASSWORD))
    graces_browser = from_address(8)
    login(graces_browser, "grace")
    graces_browser.post("/accounts/logout/")
    forged = from_address(9)
    forged.cookies[devices.COOKIE_NAME] = signing.dumps([[softy.id, "guessed"]], salt="another salt")
    guess_from_rotating_addresses("bfkid")

    assert refused(login(forged, "bfkid"))
    # Grace's browser is trusted for Grace, not for softy.
    assert refused(login(graces_browser, "bfkid"))
    assert login(graces_browser, "grace").status_code == 302
    # The cookie was not forged by changing what it names: a tampered one trusts nothing.
    graces_browser.post("/accounts/logout/")
    value = graces_browser.cookies[devices.COOKIE_NAME].value
    graces_browser.cookies[devices.COOKIE_NAME] = value.replace(value[3], "A" if value[3] != "A" else "B", 1)
    assert devices.trusted_accounts(graces_browser.get("/accounts/login/").wsgi_request) == {}


def test_the_device_cookie_lasts_its_age_after_the_last_login(softy, settings, monkeypatch):
    settings.ACCOUNTS_DEVICE_COOKIE_AGE = 3600
    browser = owner_browser()
    assert int(browser.cookies[devices.COOKIE_NAME]["max-age"]) == 3600
    with monkeypatch.context() as earlier:
        earlier.setattr(
            signing.TimestampSigner, "timestamp", lambda signer: signing.b62_encode(int(time.time()) - 3601)
        )
        stale = signing.dumps([[softy.id, "nonce"]], salt=devices.SALT, compress=True)
    fresh = signing.dumps([[softy.id, "nonce"]], salt=devices.SALT, compress=True)
    request = RequestFactory().get("/")

    request.COOKIES[devices.COOKIE_NAME] = stale
    assert devices.trusted_accounts(request) == {}
    request.COOKIES[devices.COOKIE_NAME] = fresh
    assert devices.trusted_accounts(request) == {softy.id: "nonce"}


def test_a_completed_password_reset_clears_the_failure_counters(softy):
    guess_from_rotating_addresses("bfkid")
    assert refused(login(from_address(99), "bfkid"))

    Client().post("/accounts/password/reset/", {"email": "softy@example.com"})
    path = path_of(link_in(mails_to("softy@example.com")[-1]))
    browser = Client()
    form_page = browser.get(path, follow=True)
    done = browser.post(form_page.redirect_chain[-1][0], {"new_password1": NEW_PASSWORD, "new_password2": NEW_PASSWORD})
    assert done.status_code == 302

    assert login(from_address(99), "bfkid", NEW_PASSWORD).status_code == 302


def test_failures_behind_one_office_address_do_not_stop_a_colleague_with_a_device_cookie(softy):
    colleague = owner_browser()
    office = 7
    for number in range(10):
        assert login(from_address(office), f"nobody{number}", OTHER_PASSWORD).status_code == 200

    assert refused(login(from_address(office), "bfkid"))
    assert login(colleague, "bfkid").status_code == 302


# Point 12: the unverified address right after sign-up.


@pytest.fixture
def signed_up_unverified(ddb, settings):
    settings.ACCOUNTS_EMAIL_VERIFICATION = "mandatory"
    browser = Client()
    assert signup(browser, "ada@example.com", "ada")["Location"] == "/accounts/verify/sent/"
    return browser


def test_the_sign_up_browser_logging_in_by_email_is_told_to_confirm_and_not_counted(signed_up_unverified):
    answers = [login(signed_up_unverified, "ada@example.com") for _ in range(7)]

    assert [answer.status_code for answer in answers] == [200] * 7
    for answer in answers:
        assert answer.context["form"].has_error("__all__", "unverified")
        assert 'action="/accounts/verify/sent/"' in answer.content.decode()
    # Not one failure was counted: the limit (5 per account) still lets a wrong password be checked.
    wrong = login(signed_up_unverified, "ada@example.com", OTHER_PASSWORD)
    assert wrong.status_code == 200
    assert wrong.context["form"].has_error("__all__", "invalid_login")


def test_a_stranger_cannot_tell_an_unverified_sign_up_from_no_account(signed_up_unverified):
    stranger = login(Client(), "ada@example.com")
    nobody = login(Client(), "nobody@example.com")

    for answer in (stranger, nobody):
        assert answer.status_code == 200
        assert answer.context["form"].has_error("__all__", "invalid_login")
        assert 'action="/accounts/verify/sent/"' not in answer.content.decode()


def test_unverified_right_password_by_username_is_not_counted_as_a_failure(signed_up_unverified):
    for _ in range(6):
        assert login(Client(), "ada").context["form"].has_error("__all__", "unverified")


def test_the_sign_up_browser_typing_another_address_is_told_nothing_more(signed_up_unverified):
    response = login(signed_up_unverified, "other@example.com")

    assert response.context["form"].has_error("__all__", "invalid_login")


def test_a_verified_account_is_found_by_its_lock_only_never_through_the_sign_up_session(signed_up_unverified):
    account = store.verify_email(store.get_by_username("ada"))
    # Damage: the verified account's email lock is gone (staff's audit would repair it).
    dynamo.call(
        "delete_item", TableName=dynamo.table_name(), Key=dynamo.key(store.login_lock_key("ada@example.com"), "LOCK")
    )

    response = login(signed_up_unverified, "ada@example.com")

    assert account.email_verified
    assert response.context["form"].has_error("__all__", "invalid_login")
