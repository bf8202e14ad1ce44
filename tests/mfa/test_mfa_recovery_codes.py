"""Recovery codes on DynamoDB Local: ten shown once as a list, stored as digests, each
accepted once (even by 16 logins at the same instant), regenerated on demand, counted."""

import threading

import pytest
from django.test import Client

from accounts import store
from accounts.mfa import recovery_codes
from tests.mail import mails_to
from tests.mfa import enable_totp, password_login, second_step
from tests.web import signed_up_client

pytestmark = pytest.mark.dynamodb_local

RACERS = 16


def test_a_recovery_code_logs_in_once_and_the_owner_is_told(ddb):
    _, codes = enable_totp(signed_up_client())
    first, second = Client(), Client()
    password_login(first)
    password_login(second)

    accepted = second_step(first, codes[0].upper().replace("-", " "))
    replayed = second_step(second, codes[0])

    assert accepted["Location"] == "/accounts/profile/"
    assert replayed.status_code == 200 and replayed.context["form"].has_error("code")
    assert "_auth_user_id" not in second.session
    assert len(store.get_by_username("ada").recovery_codes) == 9
    (notice,) = [mail for mail in mails_to("ada@example.com") if "recovery code was used" in mail.subject]
    assert "Recovery codes left: 9." in notice.body


def test_sixteen_logins_racing_with_one_recovery_code_let_exactly_one_in(ddb):
    _, codes = enable_totp(signed_up_client())
    clients = [Client() for _ in range(RACERS)]
    for client in clients:
        password_login(client)
    barrier = threading.Barrier(RACERS)
    landed = []

    def use(client):
        barrier.wait()
        response = second_step(client, codes[3])
        if response.status_code == 200:
            (error,) = response.context["form"].errors.as_data()["code"]
            landed.append(error.code)
        else:
            landed.append(response.get("Location", response.status_code))

    threads = [threading.Thread(target=use, args=(client,)) for client in clients]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()

    # The others read the code before it was spent (their transaction is cancelled: back to
    # the login page) or after (the form again, "already used"): never "wrong code", never
    # counted against mfa_attempt, so never 429.
    assert landed.count("/accounts/profile/") == 1
    assert set(landed) <= {"/accounts/profile/", "/accounts/login/", "already_used"}
    assert len(store.get_by_username("ada").recovery_codes) == 9
    assert sum("_auth_user_id" in client.session for client in clients) == 1


def test_the_page_tells_how_many_are_left_and_new_ones_replace_the_old(ddb):
    client = signed_up_client()
    _, old = enable_totp(client)
    assert "Recovery codes left: 10." in client.get("/accounts/mfa/recovery-codes/").content.decode()

    response = client.post("/accounts/mfa/recovery-codes/")

    new = response.context["codes"]
    html = response.content.decode()
    assert html.count("<li><code>") == 10 and all(f"<li><code>{code}</code></li>" in html for code in new)
    assert store.get_by_username("ada").recovery_codes == recovery_codes.digests(store.get_by_username("ada").id, new)
    visitor = Client()
    password_login(visitor)
    assert second_step(visitor, old[0]).status_code == 200
    assert second_step(visitor, new[0])["Location"] == "/accounts/profile/"


def test_recovery_codes_need_a_second_factor_first(ddb):
    client = signed_up_client()

    page = client.get("/accounts/mfa/recovery-codes/").content.decode()

    assert "set up an authenticator app or a passkey first" in page
    assert "Make recovery codes" not in page
    assert client.post("/accounts/mfa/recovery-codes/").status_code == 302
    assert store.get_by_username("ada").recovery_codes is None


def test_codes_read_back_from_paper_match_their_digest():
    code = recovery_codes.generate()[0]

    assert recovery_codes.digest("id", f"  {code.upper()} ") == recovery_codes.digest("id", code.replace("-", ""))
    assert recovery_codes.digest("id", code) != recovery_codes.digest("other", code)
