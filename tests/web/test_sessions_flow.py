"""The sessions flow (accounts.internal.flows.sessions), which the profile page and the
API's auth/sessions share: it lists the account's sessions and ends them by id, never
another account's, and ending the current one logs this request out after the others."""

import pytest
from django.conf import settings
from django.test import Client, RequestFactory

from accounts import sessions, store
from accounts.internal.flows import sessions as sessions_flow
from accounts.models import User
from tests.web import login, signed_up_client

pytestmark = pytest.mark.dynamodb_local


def key_of(client):
    return client.cookies[settings.SESSION_COOKIE_NAME].value


def request_of(client, account):
    """A request of ``client``'s browser, as the views see it (its session and user)."""
    request = RequestFactory().post("/")
    request.session = sessions.SessionStore(key_of(client))
    request.user = User.from_account(account)
    return request


def id_of(account, client):
    return next(info.id for info in sessions.list_sessions(account.id, key_of(client)) if info.current)


def is_logged_in(client):
    return client.get("/accounts/profile/").status_code == 200


@pytest.fixture
def browsers(ddb):
    """Three logged-in browsers of ada, and bob's."""
    first = signed_up_client()
    second, third = Client(), Client()
    login(second, "ada")
    login(third, "ada")
    bob = signed_up_client("bob@example.com", "bob")
    return first, second, third, bob


def test_the_list_has_every_session_of_the_account_the_current_one_marked(browsers):
    first, second, third, _ = browsers
    ada = store.get_by_username("ada")

    listed = sessions_flow.list_sessions(request_of(first, ada))

    assert {info.id for info in listed} == {id_of(ada, client) for client in (first, second, third)}
    assert [info.id for info in listed if info.current] == [id_of(ada, first)]


def test_ending_by_id_ends_the_accounts_sessions_named_and_never_another_accounts(browsers):
    first, second, third, bob_browser = browsers
    ada, bob = store.get_by_username("ada"), store.get_by_username("bob")

    ended = sessions_flow.end_sessions(request_of(first, ada), {id_of(ada, second), id_of(bob, bob_browser)})

    assert ended.ended == 1 and not ended.logged_out
    assert {info.id for info in ended.remaining} == {id_of(ada, first), id_of(ada, third)}
    assert [is_logged_in(client) for client in (first, second, third, bob_browser)] == [True, False, True, True]


def test_ending_the_current_session_with_another_ends_both_and_logs_out(browsers):
    first, second, third, _ = browsers
    ada = store.get_by_username("ada")
    request = request_of(first, ada)

    ended = sessions_flow.end_sessions(request, {id_of(ada, first), id_of(ada, second)})

    assert ended.ended == 2 and ended.logged_out and ended.remaining == []
    assert not request.user.is_authenticated
    assert [is_logged_in(client) for client in (first, second, third)] == [False, False, True]


def test_ending_the_others_keeps_only_the_current_session(browsers):
    first, second, third, bob_browser = browsers
    ada = store.get_by_username("ada")

    assert sessions_flow.end_other_sessions(request_of(first, ada)) == 2

    assert [is_logged_in(client) for client in (first, second, third, bob_browser)] == [True, False, False, True]
