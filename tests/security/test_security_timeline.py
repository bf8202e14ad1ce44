"""The security timeline of issue 26: an event per login, password, address and factor
change, recovery code used and staff action, each with its time, address and browser,
written in the transaction of the change it records, expiring after
ACCOUNTS_SECURITY_EVENT_RETENTION and deleted with the account; the last 50 on the profile
and on the staff account page; one ``security_event`` signal per event."""

import time

import pytest
from django.test import Client

from accounts import dynamo, signals, store, timeline
from accounts.exceptions import StaleItem
from accounts.models import User
from accounts.tables import account_pk
from accounts.transactions.events import event_item
from tests.headless import APIClient
from tests.mail import link_in, mails_to, path_of
from tests.mfa import add_passkey, enable_totp, password_login, second_step
from tests.staff import boss, client_as, staff_client  # noqa: F401 (fixtures)
from tests.web import OTHER_PASSWORD, PASSWORD, login, signed_up_client

pytestmark = pytest.mark.dynamodb_local

FIREFOX = "Mozilla/5.0 (X11; Linux x86_64; rv:128.0) Gecko/20100101 Firefox/128.0"


def stored_events(account_id):
    """The raw event items of the account's partition, oldest first."""
    return dynamo.query_partition(account_pk(account_id), "EVENT#")


def kinds(account_id):
    return [raw["kind"]["S"] for raw in stored_events(account_id)]


def ada():
    return store.get_by_username("ada")


@pytest.fixture
def received():
    """The ``security_event`` signals sent during the test, as their events."""
    events = []

    def receive(sender, event, **kwargs):
        events.append(event)

    signals.security_event.connect(receive)
    yield events
    signals.security_event.disconnect(receive)


def test_a_login_is_recorded_with_its_time_address_and_browser(ddb):
    signed_up_client()
    before = time.time()

    login(Client(REMOTE_ADDR="203.0.113.7", HTTP_USER_AGENT=FIREFOX), "ada")

    last = stored_events(ada().id)[-1]
    assert last["kind"]["S"] == "login"
    assert last["address"]["S"] == "203.0.113.7" and last["user_agent"]["S"] == FIREFOX
    assert before - 1 <= int(last["at"]["N"]) / 1000 <= time.time() + 1


@pytest.mark.parametrize("client", ["app", "browser"])
def test_a_login_through_the_api_is_recorded(ddb, client):
    signed_up_client()
    recorded = kinds(ada().id)

    response = APIClient(client, Client(HTTP_USER_AGENT=FIREFOX)).login()

    assert response.status_code == 200
    assert kinds(ada().id) == [*recorded, "login"]
    assert stored_events(ada().id)[-1]["user_agent"]["S"] == FIREFOX


def test_a_wrong_password_records_no_login(ddb):
    signed_up_client()
    recorded = kinds(ada().id)

    login(Client(), "ada", OTHER_PASSWORD)

    assert kinds(ada().id) == recorded


def test_a_password_change_is_recorded(ddb, received):
    client = signed_up_client()
    data = {"old_password": PASSWORD, "new_password1": OTHER_PASSWORD, "new_password2": OTHER_PASSWORD}
    received.clear()

    client.post("/accounts/password/", data, REMOTE_ADDR="198.51.100.4")

    last = stored_events(ada().id)[-1]
    assert (last["kind"]["S"], last["address"]["S"]) == ("password_changed", "198.51.100.4")
    assert "actor" not in last
    assert [event.kind for event in received] == ["password_changed"]


def test_a_change_records_its_address_and_browser_without_the_unavailable_middleware(ddb, settings):
    # The origin travels with the change from the flow that has the request, so a host that
    # leaves accounts.middleware.UnavailableMiddleware out still records where it came from.
    settings.MIDDLEWARE = [name for name in settings.MIDDLEWARE if name != "accounts.middleware.UnavailableMiddleware"]
    client = signed_up_client()
    data = {"old_password": PASSWORD, "new_password1": OTHER_PASSWORD, "new_password2": OTHER_PASSWORD}

    client.post("/accounts/password/", data, REMOTE_ADDR="198.51.100.4", HTTP_USER_AGENT=FIREFOX)

    last = stored_events(ada().id)[-1]
    assert (last["kind"]["S"], last["address"]["S"], last["user_agent"]["S"]) == (
        "password_changed",
        "198.51.100.4",
        FIREFOX,
    )


def test_a_password_set_through_the_model_api_records_no_address_browser_or_actor(ddb):
    signed_up_client()
    user = User.from_account(ada())
    user.set_password(OTHER_PASSWORD)

    user.save()

    last = timeline.Event.from_raw(stored_events(ada().id)[-1])
    assert (last.kind, last.address, last.user_agent, last.actor) == ("password_changed", "", "", None)


def test_an_address_change_is_recorded_when_its_link_applies_it(ddb):
    client = signed_up_client()
    client.post("/accounts/email/", {"email": "lovelace@example.com", "password": PASSWORD})
    assert "email_changed" not in kinds(ada().id)

    client.post(path_of(link_in(mails_to("lovelace@example.com")[-1])))

    assert kinds(ada().id)[-1] == "email_changed"


def test_a_username_change_is_recorded(ddb):
    client = signed_up_client()

    client.post("/accounts/username/", {"username": "lovelace", "password": PASSWORD})

    assert kinds(store.get_by_username("lovelace").id)[-1] == "username_changed"


def test_a_refused_change_writes_no_event(ddb):
    signed_up_client("grace@example.com", "grace")
    client = signed_up_client()
    recorded = kinds(ada().id)

    response = client.post("/accounts/username/", {"username": "grace", "password": PASSWORD})

    assert response.context["form"].has_error("username")
    assert kinds(ada().id) == recorded


def test_a_cancelled_transaction_writes_no_event_and_sends_no_signal(ddb, received):
    signed_up_client()
    stale = ada()
    store.change_username(ada(), "lovelace")
    received.clear()

    with pytest.raises(StaleItem):
        store.set_password_hash(stale, "!other")

    assert "password_changed" not in kinds(stale.id)
    assert received == []


def test_the_authenticator_app_added_and_removed_are_recorded(ddb):
    client = signed_up_client()
    enable_totp(client)
    assert kinds(ada().id)[-1] == "totp_added"

    client.post("/accounts/mfa/totp/deactivate/")

    assert kinds(ada().id)[-1] == "totp_removed"


def test_a_passkey_added_and_removed_are_recorded(ddb):
    client = signed_up_client()
    credential, _ = add_passkey(client, "Laptop")
    assert kinds(ada().id)[-1] == "passkey_added"

    client.post(f"/accounts/mfa/passkeys/{credential.b64_id}/remove/")

    assert kinds(ada().id)[-1] == "passkey_removed"


def test_a_recovery_code_used_is_recorded_with_the_login_it_made(ddb, received):
    _, codes = enable_totp(signed_up_client())
    client = Client(HTTP_USER_AGENT=FIREFOX)
    password_login(client)
    received.clear()

    second_step(client, codes[0])

    assert kinds(ada().id)[-2:] in (["login", "recovery_code_used"], ["recovery_code_used", "login"])
    assert sorted(event.kind for event in received) == ["login", "recovery_code_used"]


def test_a_staff_change_names_the_staff_member(ddb, staff_client, boss):
    signed_up_client()

    staff_client.post(
        f"/staff/accounts/{ada().id}/password/", {"new_password1": OTHER_PASSWORD, "new_password2": OTHER_PASSWORD}
    )

    last = stored_events(ada().id)[-1]
    assert (last["kind"]["S"], last["actor"]["S"]) == ("password_changed", boss.id)
    page = staff_client.get(f"/staff/accounts/{ada().id}/").content.decode()
    assert f"by staff member {boss.id}" in page


def test_a_staff_flag_is_recorded_with_the_staff_member(ddb, staff_client, boss):
    signed_up_client()

    staff_client.post(f"/staff/accounts/{ada().id}/flags/", {"flag": "is_active", "value": "0"})

    last = stored_events(ada().id)[-1]
    assert (last["kind"]["S"], last["detail"]["S"], last["actor"]["S"]) == ("flag_changed", "is_active off", boss.id)


def test_sessions_ended_by_staff_are_recorded_with_the_staff_member(ddb, staff_client, boss, received):
    signed_up_client()
    received.clear()

    staff_client.post(f"/staff/accounts/{ada().id}/sessions/end/")

    last = stored_events(ada().id)[-1]
    assert (last["kind"]["S"], last["actor"]["S"]) == ("sessions_ended", boss.id)
    assert [event.kind for event in received] == ["sessions_ended"]


def test_the_retention_setting_sets_each_event_to_expire(ddb, settings):
    settings.ACCOUNTS_SECURITY_EVENT_RETENTION = 3600
    client = signed_up_client()

    client.post("/accounts/username/", {"username": "lovelace", "password": PASSWORD})

    last = stored_events(store.get_by_username("lovelace").id)[-1]
    assert int(last["expires"]["N"]) == int(last["at"]["N"]) // 1000 + 3600


def test_events_last_a_year_by_default(ddb):
    signed_up_client()

    last = stored_events(ada().id)[-1]
    assert int(last["expires"]["N"]) == int(last["at"]["N"]) // 1000 + 365 * 24 * 3600


def test_the_events_are_deleted_with_the_account(ddb):
    client = signed_up_client()
    client.post("/accounts/username/", {"username": "lovelace", "password": PASSWORD})
    account_id = store.get_by_username("lovelace").id
    assert stored_events(account_id)

    client.post("/accounts/delete/", {"password": PASSWORD})

    assert stored_events(account_id) == []


def seed_events(account_id, count):
    """``count`` login events of the account, a second apart from a minute on (newer than any
    the test wrote itself), the newest last."""
    start_ms = int(time.time() * 1000) + 60_000
    items = [
        event_item(account_pk(account_id), "login", address=f"192.0.2.{n}", at_ms=start_ms + n * 1000)
        for n in range(count)
    ]
    dynamo.batch_write(puts=items)


def test_the_profile_shows_the_last_50_events_newest_first(ddb):
    client = signed_up_client()
    seed_events(ada().id, 60)

    events = client.get("/accounts/profile/").context["events"]

    assert len(events) == timeline.SHOWN == 50
    assert [event.at for event in events] == sorted((event.at for event in events), reverse=True)
    assert events[0].address == "192.0.2.59" and events[-1].address == "192.0.2.10"


def test_the_staff_account_page_shows_the_last_50_events(ddb, staff_client):
    signed_up_client()
    seed_events(ada().id, 60)

    events = staff_client.get(f"/staff/accounts/{ada().id}/").context["events"]

    assert len(events) == 50 and events[0].address == "192.0.2.59"


def test_reads_of_the_partition_skip_the_events(ddb):
    signed_up_client()
    seed_events(ada().id, 60)

    _, others = store.read_partition(ada().id)

    assert others and not any(raw["SK"]["S"].startswith("EVENT#") for raw in others)


def test_an_expired_event_is_not_shown(ddb):
    client = signed_up_client()
    item = event_item(account_pk(ada().id), "password_changed")
    item["expires"] = {"N": str(int(time.time()) - 10)}
    dynamo.batch_write(puts=[item])

    events = client.get("/accounts/profile/").context["events"]

    assert "password_changed" not in [event.kind for event in events]


def test_the_signal_is_sent_once_per_event(ddb, received):
    client = signed_up_client()
    received.clear()

    login(Client(), "ada")
    client.post("/accounts/username/", {"username": "lovelace", "password": PASSWORD})

    assert [event.kind for event in received] == ["login", "username_changed"]
    assert len(stored_events(received[0].account_id)) == len(kinds(received[0].account_id))


def test_a_hash_upgrade_at_login_records_no_password_change(ddb, settings):
    settings.PASSWORD_HASHERS = ["django.contrib.auth.hashers.MD5PasswordHasher"]
    signed_up_client()
    settings.PASSWORD_HASHERS = [
        "django.contrib.auth.hashers.PBKDF2PasswordHasher",
        "django.contrib.auth.hashers.MD5PasswordHasher",
    ]

    login(Client(), "ada")

    assert ada().password.startswith("pbkdf2")
    assert "password_changed" not in kinds(ada().id)


def test_an_owner_acting_on_a_staff_page_of_their_own_account_names_no_actor(ddb, boss):
    client_as(boss).post(f"/staff/accounts/{boss.id}/username/", {"username": "chief"})

    assert "actor" not in stored_events(boss.id)[-1]
