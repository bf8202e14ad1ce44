"""Ending other sessions through the API needs a fresh proof, as the page does (issue 35,
finding 2), on DynamoDB Local: a stolen session whose proof is old cannot log its owner out
everywhere; it is answered allauth's 401 with the flows that renew the proof."""

import time

import pytest

from accounts.sessions import SessionStore
from tests.headless import APIClient
from tests.web import PASSWORD, signed_up_client

pytestmark = pytest.mark.dynamodb_local


def logged_in_twice():
    """Ada's app session (``thief``, its proof 301 s old) and another of hers (``owner``)."""
    signed_up_client()
    owner, thief = APIClient("app"), APIClient("app")
    assert owner.login().status_code == 200
    assert thief.login().status_code == 200
    return owner, thief


def age(api, seconds):
    """Make the proof of the app session of ``api`` ``seconds`` old."""
    session = SessionStore(api.token)
    session["accounts_authenticated_at"] = int(time.time()) - seconds
    session.save()


def own_id(api):
    """The id of the session of ``api``, as ``auth/sessions`` lists it."""
    return next(session["id"] for session in api.get("auth/sessions").json()["data"] if session["is_current"])


def test_a_stale_session_cannot_end_the_other_sessions(ddb):
    owner, thief = logged_in_twice()
    age(thief, 301)

    response = thief.delete("auth/sessions", {"sessions": [own_id(owner)]})

    assert response.status_code == 401
    body = response.json()
    assert body["meta"]["is_authenticated"] is True
    assert {"id": "reauthenticate"} in body["data"]["flows"]
    assert owner.get("auth/session").status_code == 200


def test_after_reauthenticating_it_ends_them(ddb):
    owner, thief = logged_in_twice()
    age(thief, 301)
    assert thief.post("auth/reauthenticate", {"password": PASSWORD}).status_code == 200

    response = thief.delete("auth/sessions", {"sessions": [own_id(owner)]})

    assert response.status_code == 200
    assert owner.get("auth/session").status_code == 410


def test_a_stale_session_may_still_end_itself(ddb):
    owner, thief = logged_in_twice()
    age(thief, 301)

    response = thief.delete("auth/sessions", {"sessions": [own_id(thief)]})

    assert response.status_code == 401
    assert response.json()["meta"]["is_authenticated"] is False
    assert owner.get("auth/session").status_code == 200
