"""Server-side sessions (``accounts.sessions``) on DynamoDB Local: a session ends on the
server, so a copied cookie is worth nothing after logout, a password change, a
deactivation or a deletion, and reactivating an account revives none of them."""

import time
from io import StringIO

import pytest
from django.contrib.sessions.backends.base import UpdateError
from django.core.management import call_command
from django.test import Client
from django.urls import reverse

from accounts import audit, dynamo, sessions, store
from accounts.tables import account_pk
from tests.staff import boss, client_as, make_account, staff_client  # noqa: F401 (fixtures)
from tests.web import OTHER_PASSWORD, PASSWORD, login, signed_up_client

pytestmark = pytest.mark.dynamodb_local

FIREFOX = "Mozilla/5.0 (X11; Linux x86_64; rv:128.0) Gecko/20100101 Firefox/128.0"
SAFARI_IPHONE = (
    "Mozilla/5.0 (iPhone; CPU iPhone OS 17_5 like Mac OS X) AppleWebKit/605.1.15 "
    "(KHTML, like Gecko) Version/17.5 Mobile/15E148 Safari/604.1"
)


def is_logged_in(client):
    return client.get("/accounts/profile/").status_code == 200


def replay(client):
    """A new browser holding a copy of ``client``'s session cookie."""
    copy = Client()
    copy.cookies[client.cookies["sessionid"].key] = client.cookies["sessionid"].value
    return copy


def session_items(account_id):
    return dynamo.query_partition(account_pk(account_id), sessions.SESSION_SORT_PREFIX)


def account_id_of(client):
    return client.cookies["sessionid"].value.rpartition(".")[0]


def test_the_session_lives_in_the_account_partition_with_its_expiry(ddb):
    client = signed_up_client()
    account_id = account_id_of(client)

    [item] = session_items(account_id)
    expiry = client.session.get_expiry_age()
    assert abs(int(item["expires"]["N"]) - (time.time() + expiry)) < 60
    assert store.get_account(account_id).username == "ada"


def test_a_cookie_copied_before_logout_is_anonymous_after_it(ddb):
    client = signed_up_client()
    copy = replay(client)
    assert is_logged_in(copy)

    client.post("/accounts/logout/")

    assert not is_logged_in(copy)
    assert session_items(account_id_of(copy)) == []


def test_a_password_change_ends_every_other_session_and_keeps_this_one(ddb):
    client = signed_up_client()
    other = Client()
    login(other, "ada")
    copy = replay(client)

    response = client.post(
        "/accounts/password/",
        {"old_password": PASSWORD, "new_password1": OTHER_PASSWORD, "new_password2": OTHER_PASSWORD},
    )

    assert response.status_code == 302
    assert is_logged_in(client)
    assert not is_logged_in(other)
    assert not is_logged_in(copy)
    assert len(session_items(account_id_of(client))) == 1


def test_deactivation_ends_the_sessions_and_reactivation_revives_none(staff_client):
    ada = make_account("ada@example.com", "ada")
    client = client_as(ada)
    copy = replay(client)
    assert is_logged_in(client)

    staff_client.post(reverse("staff:flag", args=[ada.id]), {"flag": "is_active", "value": "0"})
    staff_client.post(reverse("staff:flag", args=[ada.id]), {"flag": "is_active", "value": "1"})

    assert store.get_account(ada.id).is_active
    assert not is_logged_in(client)
    assert not is_logged_in(copy)
    assert session_items(ada.id) == []


def test_deleting_the_account_ends_its_sessions(ddb):
    client = signed_up_client()
    other = Client()
    login(other, "ada")
    account_id = account_id_of(client)

    client.post("/accounts/delete/", {"password": PASSWORD})

    assert session_items(account_id) == []
    assert not is_logged_in(other)


def test_an_expired_session_still_in_the_table_is_absent(ddb):
    client = signed_up_client()
    [item] = session_items(account_id_of(client))
    # DynamoDB deletes expired items days late: the item is there, its time is up.
    item["expires"] = {"N": str(int(time.time()) - 1)}
    dynamo.batch_write(puts=[item])

    assert not is_logged_in(client)


def test_a_session_ended_elsewhere_is_not_revived_by_its_own_save(ddb):
    client = signed_up_client()
    store_ = sessions.SessionStore(client.cookies["sessionid"].value)
    store_["cart"] = "tea"
    sessions.end_sessions(account_id_of(client))

    with pytest.raises(UpdateError):
        store_.save()
    assert session_items(account_id_of(client)) == []


def test_a_session_that_expired_while_a_request_ran_is_not_revived_by_its_save(ddb):
    client = signed_up_client()
    store_ = sessions.SessionStore(client.cookies["sessionid"].value)
    store_["cart"] = "tea"
    [item] = session_items(account_id_of(client))
    item["expires"] = {"N": str(int(time.time()) - 1)}  # its time ran out; TTL deletes it later
    dynamo.batch_write(puts=[item])

    with pytest.raises(UpdateError):
        store_.save()
    [still_expired] = session_items(account_id_of(client))
    assert int(still_expired["expires"]["N"]) < time.time()
    assert not is_logged_in(client)


def test_profile_lists_the_sessions_with_browser_and_logs_out_the_others(ddb):
    client = signed_up_client()
    Client(HTTP_USER_AGENT=FIREFOX).post("/accounts/login/", {"username": "ada", "password": PASSWORD})
    phone = Client(HTTP_USER_AGENT=SAFARI_IPHONE)
    login(phone, "ada")

    page = client.get("/accounts/profile/")

    listed = page.context["sessions"]
    assert len(listed) == 3
    assert [info.current for info in listed].count(True) == 1
    html = page.content.decode()
    assert "Firefox on Linux" in html and "Safari on iOS" in html

    client.post("/accounts/sessions/logout-others/")

    assert is_logged_in(client)
    assert not is_logged_in(phone)
    assert len(session_items(account_id_of(client))) == 1


def test_staff_page_lists_the_sessions_and_ends_them_all(staff_client):
    ada = make_account("ada@example.com", "ada")
    client = client_as(ada)
    client_as(ada)

    page = staff_client.get(reverse("staff:account", args=[ada.id]))
    assert len(page.context["sessions"]) == 2

    staff_client.post(reverse("staff:end_sessions", args=[ada.id]))

    assert not is_logged_in(client)
    assert session_items(ada.id) == []
    assert is_logged_in(staff_client)


def test_last_seen_is_refreshed_once_the_touch_interval_passed(ddb, settings, count_requests):
    client = signed_up_client()
    [before] = session_items(account_id_of(client))
    settings.ACCOUNTS_SESSION_TOUCH_INTERVAL = 0
    time.sleep(1.05)
    count_requests.reset()

    client.get("/")

    assert dict(count_requests.counts) == {"BatchGetItem": 1, "PutItem": 1}
    [after] = session_items(account_id_of(client))
    assert int(after["last_seen"]["N"]) > int(before["last_seen"]["N"])
    assert after["created"] == before["created"]


def test_the_audit_and_backfill_ignore_session_items(ddb):
    client = signed_up_client()
    login(Client(), "ada")
    anonymous = sessions.SessionStore()
    anonymous["cart"] = "tea"
    anonymous.save()
    assert len(session_items(account_id_of(client))) == 2

    report = audit.run_audit()
    assert report.consistent, report.findings
    assert report.accounts == 1
    out = StringIO()
    call_command("accounts_backfill", stdout=out, stderr=StringIO())
    assert out.getvalue().splitlines() == ["1 accounts, 3 locks already there.", "Created 0 lock(s)."]
    assert len(session_items(account_id_of(client))) == 2


def test_signed_cookie_sessions_still_work(ddb, settings):
    settings.SESSION_ENGINE = "django.contrib.sessions.backends.signed_cookies"
    client = signed_up_client()

    page = client.get("/accounts/profile/")

    assert page.status_code == 200
    assert "sessions" not in page.context
    assert client.post("/accounts/sessions/logout-others/").status_code == 302


@pytest.mark.parametrize(
    ("user_agent", "described"),
    [
        (FIREFOX, "Firefox on Linux"),
        (SAFARI_IPHONE, "Safari on iOS"),
        (
            "Mozilla/5.0 (Windows NT 10.0; Win64; x64) AppleWebKit/537.36 (KHTML, like Gecko) "
            "Chrome/126.0.0.0 Safari/537.36 Edg/126.0.0.0",
            "Edge on Windows",
        ),
        (
            "Mozilla/5.0 (Macintosh; Intel Mac OS X 10_15_7) AppleWebKit/537.36 (KHTML, like Gecko) "
            "Chrome/126.0.0.0 Safari/537.36",
            "Chrome on macOS",
        ),
        ("curl/8.5.0", ""),
        ("", ""),
    ],
)
def test_describe_user_agent(user_agent, described):
    assert sessions.describe_user_agent(user_agent) == described


def test_a_login_beyond_the_session_limit_ends_the_least_recently_seen(ddb, settings):
    settings.ACCOUNTS_MAX_SESSIONS = 3
    settings.ACCOUNTS_SESSION_TOUCH_INTERVAL = 0
    first = signed_up_client()
    second, third = Client(), Client()
    login(second, "ada")
    time.sleep(1.05)  # "last seen" is in whole seconds: second is now strictly the oldest
    login(third, "ada")
    time.sleep(1.05)
    assert is_logged_in(first)  # now the most recently seen (its "last seen" was refreshed)

    fourth = Client()
    login(fourth, "ada")

    assert len(session_items(account_id_of(first))) == 3
    assert not is_logged_in(second)
    assert [is_logged_in(client) for client in (first, third, fourth)] == [True, True, True]


def test_a_login_ends_at_most_so_many_sessions_after_the_limit_was_lowered(ddb, settings, monkeypatch):
    settings.ACCOUNTS_MAX_SESSIONS = None
    client = signed_up_client()
    for _ in range(4):
        login(Client(), "ada")
    settings.ACCOUNTS_MAX_SESSIONS = 1
    monkeypatch.setattr(sessions, "MAX_ENDED_BY_A_LOGIN", 2)

    login(Client(), "ada")

    # 5 sessions and a new one: 2 ended with it (its write stays small); the next logins end
    # the rest.
    assert len(session_items(account_id_of(client))) == 4


def test_without_a_session_limit_logins_add_sessions(ddb, settings):
    settings.ACCOUNTS_MAX_SESSIONS = None
    client = signed_up_client()
    for _ in range(4):
        login(Client(), "ada")

    assert len(session_items(account_id_of(client))) == 5


@pytest.fixture
def deleted_session_keys(monkeypatch):
    """Every session key deleted on the wire, in order (a key twice: a wasted write)."""
    deleted = []
    batch_write, call = dynamo.batch_write, dynamo.call

    def recording_batch_write(puts=(), deletes=()):
        # A deletion's batch also deletes the account's security events: not sessions.
        deleted.extend((key["PK"]["S"], key["SK"]["S"]) for key in deletes if not key["SK"]["S"].startswith("EVENT#"))
        return batch_write(puts=puts, deletes=deletes)

    def recording_call(operation, **params):
        if operation == "delete_item":
            deleted.append((params["Key"]["PK"]["S"], params["Key"]["SK"]["S"]))
        return call(operation, **params)

    monkeypatch.setattr(dynamo, "batch_write", recording_batch_write)
    monkeypatch.setattr(dynamo, "call", recording_call)
    return deleted


@pytest.mark.parametrize(
    "url, data",
    [
        (
            "/accounts/password/",
            {"old_password": PASSWORD, "new_password1": OTHER_PASSWORD, "new_password2": OTHER_PASSWORD},
        ),
        ("/accounts/delete/", {"password": PASSWORD}),
    ],
)
def test_a_password_change_or_a_deletion_deletes_each_session_once(ddb, deleted_session_keys, url, data):
    client = signed_up_client()
    for _ in range(2):
        login(Client(), "ada")
    sessions_before = {(raw["PK"]["S"], raw["SK"]["S"]) for raw in session_items(account_id_of(client))}
    deleted_session_keys.clear()

    assert client.post(url, data).status_code == 302

    assert sorted(deleted_session_keys) == sorted(sessions_before)


def test_without_a_session_limit_a_password_change_deletes_each_session_once(ddb, settings, deleted_session_keys):
    # Without the limit the new key's write is a batch, not a slot's transaction: the old
    # key, ended with the others, is left out of it only because the flow told its session.
    settings.ACCOUNTS_MAX_SESSIONS = None
    client = signed_up_client()
    login(Client(), "ada")
    sessions_before = {(raw["PK"]["S"], raw["SK"]["S"]) for raw in session_items(account_id_of(client))}
    deleted_session_keys.clear()

    data = {"old_password": PASSWORD, "new_password1": OTHER_PASSWORD, "new_password2": OTHER_PASSWORD}
    assert client.post("/accounts/password/", data).status_code == 302

    assert sorted(deleted_session_keys) == sorted(sessions_before)
    assert is_logged_in(client)
