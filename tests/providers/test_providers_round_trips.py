"""Requests of a provider sign-in, counted by the proxy in front of DynamoDB Local (as
tests/web/test_web_round_trips.py counts the other flows), and the provider's own HTTP calls.

Goal (issue 27): a provider login of a known identity at most 3 requests to DynamoDB: the
session holding the state, read with the identity's lock in one BatchGetItem; the account's
partition (the account and its sessions); one transaction writing the new session and
deleting the one that held the state. The provider is asked for the tokens and the UserInfo
claims only: its discovery document and JWKS are cached.
"""

import pytest
from django.test import Client

from tests.oidc import (  # noqa: F401
    CALLBACK_PATH,
    begin_at_site,
    callback_query,
    oidc_provider,
    oidc_site,
    provider_login,
    sign_in_at_provider,
)
from tests.web.test_web_round_trips import counted

pytestmark = pytest.mark.dynamodb_local


def test_a_provider_login_of_a_known_identity_is_three_requests(oidc_site, proxy):
    first = Client()
    provider_login(first, "alice")
    first.post("/accounts/providers/signup/", {"email": "alice@example.com", "username": "alice"})
    client = Client()
    back = sign_in_at_provider(begin_at_site(client), "alice", "http://testserver" + CALLBACK_PATH)

    asked = {path: oidc_site.calls(path) for path in ("/token", "/me", "/jwks", "/.well-known/openid-configuration")}

    response, requests = counted(proxy, lambda: client.get(CALLBACK_PATH, callback_query(back)))

    assert response.status_code == 302 and "_auth_user_id" in client.session
    assert requests == {"BatchGetItem": 1, "Query": 1, "TransactWriteItems": 1}
    assert {path: oidc_site.calls(path) - count for path, count in asked.items()} == {
        "/token": 1,
        "/me": 1,
        "/jwks": 0,
        "/.well-known/openid-configuration": 0,
    }


def test_starting_a_provider_login_writes_one_session_counted_against_the_anonymous_limit(oidc_site, proxy):
    _, requests = counted(proxy, lambda: begin_at_site(Client()))

    # The anonymous session keeping the state, and its count against
    # ACCOUNTS_ANONYMOUS_SESSION_LIMIT (no limit of its own pays for it): nothing else.
    assert requests == {"UpdateItem": 1, "PutItem": 1}
