"""Passkeys through the API, for the app client (the session token carries the challenge): a
login with a passkey alone, a passkey as the second step of a password login, signing up
with a passkey, reauthenticating with one, and adding, renaming and removing them; and the
``Idempotency-Key`` of the changes of unique values (a passkey added, the address)."""

import json
import threading
import time
from concurrent.futures import ThreadPoolExecutor
from importlib import import_module

import pytest
from django.conf import settings as django_settings
from django.core import mail

from accounts import idempotency, store
from accounts.exceptions import StaleItem
from accounts.mfa import store as mfa_store
from accounts.transactions import running as transactions_running
from tests import authenticator
from tests.headless import APIClient
from tests.headless.test_headless_conformance import PASSKEY_SIGNUP_PENDING, conforms_to
from tests.headless_spec import allauth_spec
from tests.invariants import scan_everything, violations
from tests.mail import mails_to
from tests.mfa import ORIGIN, add_passkey
from tests.proxy import DROP_ANSWER
from tests.seeding import read_lock
from tests.web import signed_up_client

pytestmark = pytest.mark.dynamodb_local


@pytest.fixture
def passkey(ddb):
    """The passkey ``ada`` registered from the passkeys page."""
    credential, response = add_passkey(signed_up_client())
    assert response.status_code == 302
    return credential


def answer(credential, options, **get_options):
    return json.loads(
        authenticator.get(credential, options["data"]["request_options"]["publicKey"], ORIGIN, **get_options)
    )


def test_an_app_logs_in_with_a_passkey_alone(passkey):
    app = APIClient("app")
    options = app.get("auth/webauthn/login").json()

    logged_in = app.post("auth/webauthn/login", {"credential": answer(passkey, options)})

    assert logged_in.status_code == 200, logged_in.content
    assert logged_in.json()["data"]["user"]["username"] == "ada"
    assert app.get("auth/session").status_code == 200


def test_a_passkey_answer_sent_twice_logs_in_once(passkey):
    app = APIClient("app")
    options = app.get("auth/webauthn/login").json()
    credential = answer(passkey, options)
    challenge_token = app.token
    assert app.post("auth/webauthn/login", {"credential": credential}).status_code == 200

    replay = APIClient("app")
    replay.token = challenge_token

    assert replay.post("auth/webauthn/login", {"credential": credential}).status_code == 410


def test_a_forged_passkey_answer_is_a_400_on_credential(passkey):
    app = APIClient("app")
    app.get("auth/webauthn/login")

    refused = app.post("auth/webauthn/login", {"credential": {"id": "nope", "type": "public-key"}})

    assert refused.status_code == 400
    assert refused.json()["errors"][0]["param"] == "credential"


def test_a_password_login_of_an_account_with_a_passkey_waits_for_it_as_second_step(passkey):
    app = APIClient("app")
    pending = app.login("ada")
    assert pending.status_code == 401
    flow = next(flow for flow in pending.json()["data"]["flows"] if flow.get("is_pending"))
    assert flow == {"id": "mfa_authenticate", "is_pending": True, "types": ["webauthn"]}
    options = app.get("auth/webauthn/authenticate").json()

    second = app.post("auth/webauthn/authenticate", {"credential": answer(passkey, options, user_verified=False)})

    assert second.status_code == 200, second.content
    assert [method["method"] for method in second.json()["data"]["methods"]] == ["password", "mfa"]


# Signing up with a passkey, reauthenticating with one, and the account's passkeys.

OTHER_ORIGIN = "https://evil.example"


def create(options, origin=ORIGIN, **create_options):
    """A new credential answering creation ``options`` (an API answer): ``(credential, answer)``."""
    credential, created = authenticator.create(
        options["data"]["creation_options"]["publicKey"], origin, **create_options
    )
    return credential, json.loads(created)


@pytest.fixture
def passkey_signup(settings):
    settings.ACCOUNTS_PASSKEY_SIGNUP = True


def start_passkey_signup(app, email="ada@example.com", username="ada", **kwargs):
    started = app.post("auth/webauthn/signup", {"email": email, "username": username}, **kwargs)
    assert started.status_code == 401, started.content
    return started


def sign_up_with_a_passkey(app, email="ada@example.com", username="ada"):
    """The whole passkey signup through the API: ``(credential, answer to the PUT)``."""
    start_passkey_signup(app, email, username)
    credential, created = create(app.get("auth/webauthn/signup").json())
    return credential, app.request("PUT", "auth/webauthn/signup", {"credential": created, "name": "Phone"})


def test_passkey_signup_answers_404_while_it_is_off(ddb):
    app = APIClient("app")

    assert app.post("auth/webauthn/signup", {"email": "ada@example.com", "username": "ada"}).status_code == 404
    assert app.get("auth/webauthn/signup").status_code == 404


def test_a_passkey_signup_starts_with_a_pending_flow_and_creates_the_account_with_its_passkey(ddb, passkey_signup):
    app = APIClient("app")
    started = start_passkey_signup(app)
    assert {"id": "mfa_signup_webauthn", "is_pending": True} in started.json()["data"]["flows"]
    assert conforms_to(allauth_spec(), PASSKEY_SIGNUP_PENDING, started.json())
    assert store.get_by_username("ada") is None

    options = app.get("auth/webauthn/signup").json()
    assert conforms_to(allauth_spec(), "WebAuthnCredentialCreationOptions", options["data"])
    credential, created = create(options)
    done = app.request("PUT", "auth/webauthn/signup", {"credential": created, "name": "Phone"})

    assert done.status_code == 200, done.content
    assert done.json()["data"]["user"]["has_usable_password"] is False
    assert done.json()["data"]["methods"][0]["type"] == "webauthn"
    ada = store.get_by_username("ada")
    assert ada.passkeys == {credential.b64_id}
    assert read_lock(f"UNIQ#WEBAUTHN#{credential.b64_id}") == (True, ada.PK)
    assert violations() == []


def test_a_passkey_signup_with_mandatory_verification_waits_for_the_mailbox(ddb, passkey_signup, settings):
    settings.ACCOUNTS_EMAIL_VERIFICATION = "mandatory"

    _, done = sign_up_with_a_passkey(APIClient("app"))

    assert done.status_code == 401
    assert {"id": "verify_email", "is_pending": True} in done.json()["data"]["flows"]
    assert len(mails_to("ada@example.com")) == 1


def test_passkey_signup_options_or_answer_without_a_pending_signup_are_409(ddb, passkey_signup):
    app = APIClient("app")

    assert app.get("auth/webauthn/signup").status_code == 409
    assert app.request("PUT", "auth/webauthn/signup", {"credential": {"id": "x"}}).status_code == 409


def test_a_replayed_passkey_signup_answer_creates_no_second_account(ddb, passkey_signup):
    app = APIClient("app")
    start_passkey_signup(app)
    pending_token = app.token
    _, created = create(app.get("auth/webauthn/signup").json())
    assert app.request("PUT", "auth/webauthn/signup", {"credential": created}).status_code == 200

    replay = APIClient("app")
    replay.token = pending_token
    replayed = replay.request("PUT", "auth/webauthn/signup", {"credential": created})

    # The signup's session ended with the login (a new session key): nothing is pending.
    assert replayed.status_code in (409, 410)
    assert app.request("PUT", "auth/webauthn/signup", {"credential": created}).status_code == 409
    assert len([raw for raw in scan_everything() if raw["SK"]["S"] == "PROFILE"]) == 1


def test_a_passkey_signup_answer_from_another_origin_is_refused_and_writes_nothing(ddb, passkey_signup):
    app = APIClient("app")
    start_passkey_signup(app)
    _, created = create(app.get("auth/webauthn/signup").json(), OTHER_ORIGIN)

    refused = app.request("PUT", "auth/webauthn/signup", {"credential": created})

    assert refused.status_code == 400
    assert refused.json()["errors"][0]["param"] == "credential"
    assert store.get_by_username("ada") is None


def test_a_passkey_signup_whose_address_was_taken_meanwhile_names_the_email(ddb, passkey_signup):
    app = APIClient("app")
    start_passkey_signup(app)
    _, created = create(app.get("auth/webauthn/signup").json())
    assert APIClient("app").signup("ADA@example.com", "lovelace").status_code == 200

    refused = app.request("PUT", "auth/webauthn/signup", {"credential": created})

    assert refused.status_code == 400
    assert [(error["param"], error["code"]) for error in refused.json()["errors"]] == [("email", "email_taken")]
    assert store.get_by_username("ada") is None


def test_a_passkey_signup_is_counted_against_the_signup_limit(ddb, passkey_signup, settings):
    settings.ACCOUNTS_RATE_LIMITS = {"signup": "1/m/ip"}
    start_passkey_signup(APIClient("app"))

    limited = APIClient("app").post("auth/webauthn/signup", {"email": "grace@example.com", "username": "grace"})

    assert limited.status_code == 429
    assert int(limited["Retry-After"]) > 0


@pytest.fixture
def app_with_passkey(ddb):
    """An app logged in to ``ada`` (with a password), who added a passkey through the API:
    ``(app, credential)``."""
    app = APIClient("app")
    assert app.signup().status_code == 200
    credential, created = create(app.get("account/authenticators/webauthn").json())
    added = app.post("account/authenticators/webauthn", {"credential": created, "name": "Laptop"})
    assert added.status_code == 200, added.content
    return app, credential


def age(app, seconds=10**6):
    """Make the app session's last proof of identity ``seconds`` old."""
    session = import_module(django_settings.SESSION_ENGINE).SessionStore(app.token)
    session["accounts_authenticated_at"] = int(time.time()) - seconds
    session.save()


def reauthentication_answer(app, credential, **get_options):
    return answer(credential, app.get("auth/webauthn/reauthenticate").json(), **get_options)


def test_an_app_reauthenticates_with_its_passkey_and_may_then_add_another(app_with_passkey):
    app, credential = app_with_passkey
    age(app)
    assert app.get("account/authenticators/webauthn").status_code == 401

    fresh = app.post("auth/webauthn/reauthenticate", {"credential": reauthentication_answer(app, credential)})

    assert fresh.status_code == 200, fresh.content
    assert fresh.json()["data"]["methods"][-1] == {
        **fresh.json()["data"]["methods"][-1],
        "type": "webauthn",
        "reauthenticated": True,
    }
    assert app.get("account/authenticators/webauthn").status_code == 200


def test_a_replayed_reauthentication_answer_is_refused(app_with_passkey):
    app, credential = app_with_passkey
    proof = reauthentication_answer(app, credential)
    assert app.post("auth/webauthn/reauthenticate", {"credential": proof}).status_code == 200
    age(app)

    replayed = app.post("auth/webauthn/reauthenticate", {"credential": proof})

    assert replayed.status_code == 400
    assert replayed.json()["errors"][0]["param"] == "credential"
    assert app.get("account/authenticators/webauthn").status_code == 401


def test_a_reauthentication_answer_from_another_origin_is_refused(app_with_passkey):
    app, credential = app_with_passkey
    age(app)
    options = app.get("auth/webauthn/reauthenticate").json()["data"]["request_options"]["publicKey"]
    forged = json.loads(authenticator.get(credential, options, OTHER_ORIGIN))

    refused = app.post("auth/webauthn/reauthenticate", {"credential": forged})

    assert refused.status_code == 400
    assert app.get("account/authenticators/webauthn").status_code == 401


def test_another_accounts_passkey_does_not_reauthenticate(app_with_passkey):
    _, ada_credential = app_with_passkey
    grace = APIClient("app")
    assert grace.signup("grace@example.com", "grace").status_code == 200
    age(grace)

    refused = grace.post("auth/webauthn/reauthenticate", {"credential": reauthentication_answer(grace, ada_credential)})

    assert refused.status_code == 400
    assert grace.get("account/authenticators/webauthn").status_code == 401


def test_reauthentication_with_a_passkey_needs_a_session(ddb):
    assert APIClient("app").get("auth/webauthn/reauthenticate").status_code == 401
    assert APIClient("app").post("auth/webauthn/reauthenticate", {"credential": {}}).status_code == 401


@pytest.mark.parametrize(
    ("method", "body"),
    [("GET", None), ("POST", {"credential": {}}), ("PUT", {"id": 1, "name": "x"}), ("DELETE", {"authenticators": [1]})],
)
def test_every_change_of_passkeys_needs_a_fresh_proof(app_with_passkey, method, body):
    app, _ = app_with_passkey
    age(app)

    refused = app.request(method, "account/authenticators/webauthn", body)

    assert refused.status_code == 401
    flows = refused.json()["data"]["flows"]
    assert flows == [
        {"id": "reauthenticate"},
        {"id": "reauthenticate_by_code", "recipients": [{"email": "ada@example.com"}]},
        {"id": "mfa_reauthenticate", "types": ["webauthn"]},
    ]
    assert len(store.get_by_username("ada").passkeys) == 1


def test_an_added_passkey_is_listed_and_holds_its_lock(app_with_passkey):
    app, credential = app_with_passkey

    listed = app.get("account/authenticators").json()["data"]

    (passkey,) = [entry for entry in listed if entry["type"] == "webauthn"]
    assert passkey["name"] == "Laptop" and isinstance(passkey["id"], int)
    ada = store.get_by_username("ada")
    assert read_lock(f"UNIQ#WEBAUTHN#{credential.b64_id}") == (True, ada.PK)


def test_a_replayed_registration_answer_adds_nothing(app_with_passkey):
    app, _ = app_with_passkey
    _, created = create(app.get("account/authenticators/webauthn").json())
    assert app.post("account/authenticators/webauthn", {"credential": created}).status_code == 200

    replayed = app.post("account/authenticators/webauthn", {"credential": created})

    assert replayed.status_code == 400
    assert replayed.json()["errors"][0]["param"] == "credential"
    assert len(store.get_by_username("ada").passkeys) == 2


def test_a_registration_answer_from_another_origin_adds_nothing(app_with_passkey):
    app, _ = app_with_passkey
    _, created = create(app.get("account/authenticators/webauthn").json(), OTHER_ORIGIN)

    refused = app.post("account/authenticators/webauthn", {"credential": created})

    assert refused.status_code == 400
    assert len(store.get_by_username("ada").passkeys) == 1


def test_a_credential_another_account_registered_is_refused_by_its_lock(app_with_passkey):
    _, ada_credential = app_with_passkey
    grace = APIClient("app")
    assert grace.signup("grace@example.com", "grace").status_code == 200
    options = grace.get("account/authenticators/webauthn").json()
    _, created = create(options, credential_id=ada_credential.id, key=ada_credential.key)

    refused = grace.post("account/authenticators/webauthn", {"credential": created})

    assert refused.status_code == 400
    assert refused.json()["errors"][0] == {
        **refused.json()["errors"][0],
        "code": "passkey_taken",
        "param": "credential",
    }
    assert not store.get_by_username("grace").passkeys
    assert read_lock(f"UNIQ#WEBAUTHN#{ada_credential.b64_id}") == (True, store.get_by_username("ada").PK)


def test_a_passkey_is_renamed(app_with_passkey):
    app, _ = app_with_passkey
    (listed,) = [entry for entry in app.get("account/authenticators").json()["data"] if entry["type"] == "webauthn"]

    renamed = app.request("PUT", "account/authenticators/webauthn", {"id": listed["id"], "name": "Work laptop"})

    assert renamed.status_code == 200, renamed.content
    assert renamed.json()["data"]["name"] == "Work laptop"
    assert [passkey.name for passkey in mfa_store.passkeys_of(store.get_by_username("ada"))] == ["Work laptop"]


def test_renaming_a_passkey_of_no_one_is_a_400_on_id(app_with_passkey):
    app, _ = app_with_passkey

    refused = app.request("PUT", "account/authenticators/webauthn", {"id": 12345, "name": "Mine"})

    assert refused.status_code == 400 and refused.json()["errors"][0]["param"] == "id"


def test_a_removed_passkey_releases_its_lock(app_with_passkey):
    app, credential = app_with_passkey
    (listed,) = [entry for entry in app.get("account/authenticators").json()["data"] if entry["type"] == "webauthn"]

    removed = app.delete("account/authenticators/webauthn", {"authenticators": [listed["id"]]})

    assert removed.status_code == 200, removed.content
    assert not store.get_by_username("ada").passkeys
    assert read_lock(f"UNIQ#WEBAUTHN#{credential.b64_id}")[0] is False
    assert violations() == []


def test_the_last_passkey_of_an_account_without_a_password_is_not_removed(ddb, passkey_signup):
    app = APIClient("app")
    credential, done = sign_up_with_a_passkey(app)
    assert done.status_code == 200
    (listed,) = [entry for entry in app.get("account/authenticators").json()["data"] if entry["type"] == "webauthn"]

    refused = app.delete("account/authenticators/webauthn", {"authenticators": [listed["id"]]})

    assert refused.status_code == 400
    assert refused.json()["errors"][0]["code"] == "last_way_in"
    assert store.get_by_username("ada").passkeys == {credential.b64_id}


def test_of_two_passkeys_of_an_account_without_a_password_both_at_once_are_not_removed(ddb, passkey_signup):
    app = APIClient("app")
    sign_up_with_a_passkey(app)
    _, created = create(app.get("account/authenticators/webauthn").json())
    assert app.post("account/authenticators/webauthn", {"credential": created}).status_code == 200
    ids = [entry["id"] for entry in app.get("account/authenticators").json()["data"] if entry["type"] == "webauthn"]

    refused = app.delete("account/authenticators/webauthn", {"authenticators": ids})

    assert refused.status_code == 400
    assert len(store.get_by_username("ada").passkeys) == 2


def test_an_unverified_account_may_not_add_a_passkey(ddb, settings):
    settings.ACCOUNTS_EMAIL_VERIFICATION = "optional"
    app = APIClient("app")
    assert app.signup().status_code == 200

    assert app.get("account/authenticators/webauthn").status_code == 409
    assert app.post("account/authenticators/webauthn", {"credential": {}}).status_code == 409


# Idempotency-Key on changes of unique values: the first answer, one change.


def test_a_passkey_registration_resent_with_its_idempotency_key_gets_the_first_answer_and_adds_once(app_with_passkey):
    app, _ = app_with_passkey
    mail.outbox.clear()
    _, created = create(app.get("account/authenticators/webauthn").json())
    key = {"Idempotency-Key": "add-phone-1"}
    first = app.post("account/authenticators/webauthn", {"credential": created, "name": "Phone"}, headers=key)

    resent = app.post("account/authenticators/webauthn", {"credential": created, "name": "Phone"}, headers=key)

    assert first.status_code == 200, first.content
    assert resent.status_code == 200, resent.content
    assert resent.json() == first.json()
    assert len(store.get_by_username("ada").passkeys) == 2
    assert len(mails_to("ada@example.com")) == 1


def test_an_email_change_resent_with_its_idempotency_key_gets_the_first_answer_and_changes_once(ddb):
    app = APIClient("app")
    assert app.signup().status_code == 200
    mail.outbox.clear()
    key = {"Idempotency-Key": "move-to-lovelace"}
    first = app.post("account/email", {"email": "lovelace@example.com"}, headers=key)
    pending = store.get_by_username("ada").pending_nonce

    resent = app.post("account/email", {"email": "lovelace@example.com"}, headers=key)

    assert first.status_code == 200, first.content
    assert resent.json() == first.json()
    # The first link still works: the resend wrote no new nonce and mailed nothing.
    assert store.get_by_username("ada").pending_nonce == pending
    assert len(mails_to("lovelace@example.com")) == 1


def test_an_email_change_of_an_unverified_account_resent_with_its_key_changes_it_once(ddb, settings):
    settings.ACCOUNTS_EMAIL_VERIFICATION = "optional"
    app = APIClient("app")
    assert app.signup().status_code == 200
    mail.outbox.clear()
    key = {"Idempotency-Key": "typo-fix"}
    first = app.post("account/email", {"email": "lovelace@example.com"}, headers=key)

    resent = app.post("account/email", {"email": "lovelace@example.com"}, headers=key)

    assert first.status_code == 200, first.content
    assert resent.json() == first.json()
    assert store.get_by_username("ada").email == "lovelace@example.com"
    assert len(mails_to("lovelace@example.com")) == 1
    assert violations() == []


def test_an_email_change_with_a_new_key_is_a_new_change(ddb, settings):
    settings.ACCOUNTS_RATE_LIMITS = False
    app = APIClient("app")
    assert app.signup().status_code == 200
    mail.outbox.clear()
    app.post("account/email", {"email": "lovelace@example.com"}, headers={"Idempotency-Key": "one"})

    app.post("account/email", {"email": "lovelace@example.com"}, headers={"Idempotency-Key": "two"})

    assert len(mails_to("lovelace@example.com")) == 2


def test_concurrent_email_changes_with_one_idempotency_key_make_one_change(ddb, settings):
    # Without limits: the change_email limit would answer the twins 429 before they write.
    settings.ACCOUNTS_RATE_LIMITS = False
    app = APIClient("app")
    assert app.signup().status_code == 200
    mail.outbox.clear()
    barrier = threading.Barrier(4)

    def send(_):
        barrier.wait()
        twin = APIClient("app")
        twin.token = app.token
        return twin.post("account/email", {"email": "lovelace@example.com"}, headers={"Idempotency-Key": "race"})

    with ThreadPoolExecutor(4) as pool:
        answers = list(pool.map(send, range(4)))

    assert [answer.status_code for answer in answers] == [200] * 4, [answer.content for answer in answers]
    assert len(mails_to("lovelace@example.com")) == 1


def test_an_email_change_whose_answer_was_lost_is_resent_with_its_key_and_made_once(proxy, settings):
    settings.ACCOUNTS_RATE_LIMITS = False
    app = APIClient("app")
    assert app.signup().status_code == 200
    key = {"Idempotency-Key": "lost-answer"}
    proxy.fail("TransactWriteItems", DROP_ANSWER)
    lost = app.post("account/email", {"email": "lovelace@example.com"}, headers=key)
    proxy.heal()
    changed = store.get_by_username("ada")

    resent = app.post("account/email", {"email": "lovelace@example.com"}, headers=key)

    # Committed, but no answer came back: the client only knows the outcome is unknown.
    assert lost.status_code == 503 and lost.json()["errors"][0]["code"] == "outcome_unknown"
    assert changed.pending_email == "lovelace@example.com"
    assert resent.status_code == 200, resent.content
    assert store.get_by_username("ada").pending_nonce == changed.pending_nonce


def test_a_change_sent_with_an_idempotency_key_carries_it_as_its_client_request_token(ddb, monkeypatch):
    sent = []
    original = transactions_running.run

    def spy(transaction):
        sent.append(transaction.token)
        return original(transaction)

    monkeypatch.setattr(transactions_running, "run", spy)
    app = APIClient("app")
    assert app.signup().status_code == 200
    sent.clear()

    app.post("account/email", {"email": "lovelace@example.com"}, headers={"Idempotency-Key": "token-please"})

    ada = store.get_by_username("ada")
    key = idempotency.ClientKey(key="token-please", operation="email:POST", caller=f"account:{ada.id}", fingerprint="")
    assert sent == [idempotency.change_for("email", ada.id, key).token]


def test_a_rename_never_recreates_a_passkey_removed_meanwhile(app_with_passkey):
    _, credential = app_with_passkey
    (passkey,) = mfa_store.passkeys_of(store.get_by_username("ada"))
    mfa_store.remove_passkey(store.get_by_username("ada"), credential.b64_id)

    with pytest.raises(StaleItem):
        mfa_store.rename_passkey(store.get_by_username("ada"), passkey, "Ghost")

    assert not [raw for raw in scan_everything() if raw["SK"]["S"].startswith("WEBAUTHN#")]


def test_each_passkey_reauthentication_counts_against_the_reauthenticate_limit(app_with_passkey, settings):
    app, credential = app_with_passkey
    settings.ACCOUNTS_RATE_LIMITS = {"reauthenticate": "1/m/user"}
    assert app.post("auth/webauthn/reauthenticate", {"credential": {"id": "forged"}}).status_code == 400

    limited = app.post("auth/webauthn/reauthenticate", {"credential": reauthentication_answer(app, credential)})

    assert limited.status_code == 429
    assert int(limited["Retry-After"]) > 0


@pytest.mark.parametrize(
    "operation", ["auth/webauthn/signup", "auth/webauthn/reauthenticate", "account/authenticators/webauthn"]
)
def test_a_json_body_nested_20000_deep_is_a_400(app_with_passkey, passkey_signup, operation):
    app, _ = app_with_passkey
    nested = '{"credential": ' + "[" * 20000 + "]" * 20000 + "}"

    response = app.http.generic(
        "POST", app.url(operation), nested, content_type="application/json", headers={"X-Session-Token": app.token}
    )

    assert response.status_code == 400
    assert response.json()["errors"][0]["code"] == "invalid"
