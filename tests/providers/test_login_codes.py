"""Login by a mailed code, on DynamoDB Local: a code logs in once, within its ten minutes, in
the browser that asked, after at most three tries; the second factor still applies; and
asking tells nothing about who has an account."""

import re
import threading
import time

import pytest
from django.test import Client

from accounts import store
from accounts.login_codes import flows
from tests.mfa import code_of, enable_totp, second_step
from tests.web import signed_up_client

pytestmark = pytest.mark.dynamodb_local
REQUEST, CONFIRM = "/accounts/code/", "/accounts/code/confirm/"


def ask(client, login, mailoutbox):
    mailoutbox.clear()
    response = client.post(REQUEST, {"login": login})
    assert response["Location"] == CONFIRM
    if not mailoutbox:
        return None
    return re.search(r"log in: (\w{8})", mailoutbox[-1].body).group(1)


def test_a_mailed_code_logs_in(ddb, mailoutbox):
    signed_up_client()
    client = Client()
    code = ask(client, "ada@example.com", mailoutbox)
    assert all(character in flows.ALPHABET for character in code) and len(code) == 8

    response = client.post(CONFIRM, {"code": code.lower()})

    assert response.status_code == 302
    assert client.session["_auth_user_id"] == store.get_by_username("ada").id


def test_the_login_page_offers_email_me_a_code(ddb):
    assert "Email me a code" in Client().get("/accounts/login/").content.decode()


def test_a_used_code_is_refused(ddb, mailoutbox):
    signed_up_client()
    client = Client()
    code = ask(client, "ada", mailoutbox)
    stolen_session = client.cookies["sessionid"].value
    client.post(CONFIRM, {"code": code})

    replay = Client()
    replay.cookies["sessionid"] = stolen_session
    response = replay.post(CONFIRM, {"code": code})

    assert "_auth_user_id" not in replay.session
    assert response["Location"] == REQUEST


def test_sixteen_concurrent_uses_of_one_code_let_one_in(ddb, mailoutbox):
    signed_up_client()
    asker = Client()
    code = ask(asker, "ada", mailoutbox)
    session_key = asker.cookies["sessionid"].value
    clients = [Client() for _ in range(16)]
    for client in clients:
        client.cookies["sessionid"] = session_key
    barrier = threading.Barrier(16)
    answers = [None] * 16

    def use(index):
        barrier.wait()
        answers[index] = clients[index].post(CONFIRM, {"code": code})

    threads = [threading.Thread(target=use, args=(index,)) for index in range(16)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()

    signed_in = [client for client in clients if "_auth_user_id" in client.session]
    assert len(signed_in) == 1
    assert [answer.status_code for answer in answers].count(302) == 16


def test_an_expired_code_is_refused(ddb, mailoutbox, monkeypatch):
    signed_up_client()
    client = Client()
    code = ask(client, "ada", mailoutbox)
    later = time.time() + flows.CODE_SECONDS + 1
    monkeypatch.setattr(flows.time, "time", lambda: later)

    response = client.post(CONFIRM, {"code": code})

    assert response["Location"] == REQUEST
    assert "_auth_user_id" not in client.session


def test_three_wrong_tries_end_the_code(ddb, mailoutbox, settings):
    settings.ACCOUNTS_RATE_LIMITS = {"login_failed": "100/m/ip,100/5m/key"}
    signed_up_client()
    client = Client()
    code = ask(client, "ada", mailoutbox)
    for _ in range(flows.MAX_TRIES):
        assert client.post(CONFIRM, {"code": "WRONGCOD"}).context["form"].has_error("code", "wrong_code")

    response = client.post(CONFIRM, {"code": code})

    assert response.status_code == 429
    assert "_auth_user_id" not in client.session


def test_the_second_factor_still_applies_after_a_code(ddb, mailoutbox):
    owner = signed_up_client()
    secret, _ = enable_totp(owner)
    client = Client()
    code = ask(client, "ada", mailoutbox)

    response = client.post(CONFIRM, {"code": code})

    assert response["Location"] == "/accounts/mfa/authenticate/"
    assert "_auth_user_id" not in client.session
    second_step(client, code_of(secret, at=time.time() + 30))
    assert client.session["_auth_user_id"] == store.get_by_username("ada").id


def test_asking_for_an_unknown_name_answers_as_for_a_known_one(ddb, mailoutbox):
    signed_up_client()
    known, unknown = Client(), Client()
    answers = [known.post(REQUEST, {"login": "ada"}), unknown.post(REQUEST, {"login": "nobody"})]

    assert [(answer.status_code, answer["Location"]) for answer in answers] == [(302, CONFIRM)] * 2
    assert sorted(unknown.session[flows.SESSION_KEY]) == sorted(known.session[flows.SESSION_KEY])
    assert unknown.post(CONFIRM, {"code": "ABCDEFGH"}).context["form"].has_error("code", "wrong_code")
