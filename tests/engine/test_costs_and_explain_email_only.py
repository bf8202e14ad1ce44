"""``accounts_cost`` and ``accounts_explain`` on a site without usernames
(``ACCOUNTS_SIGNUP_FIELDS = ["email*", "password1*"]``): its flows move no username lock and
have no username change, on paper and on the wire."""

import json

import pytest
from django.core.management import CommandError
from django.test import Client

from accounts import costs, store
from tests.engine.test_explain_command import explain, send, table_items
from tests.mail import link_in, mails_to, path_of
from tests.signup_fields import EMAIL_ONLY_FIELDS, EMAIL_ONLY_METHODS
from tests.staff import run_command
from tests.web import PASSWORD


@pytest.fixture
def email_only(settings):
    """A site without usernames (no table: the costs are computed)."""
    settings.ACCOUNTS_SIGNUP_FIELDS = EMAIL_ONLY_FIELDS
    settings.ACCOUNTS_LOGIN_METHODS = EMAIL_ONLY_METHODS


def transaction_items(flow_name):
    [transaction] = [
        request for request in costs.flow_named(flow_name).requests if request.operation == "TransactWriteItems"
    ]
    return transaction.items


def test_the_flows_move_no_username_lock_and_have_no_username_change(email_only):
    assert "username change" not in [flow.name for flow in costs.flows()]
    assert transaction_items("signup") == ("unverified account",)
    assert transaction_items("verification link") == ("account", "lock", "security event")
    assert transaction_items("deletion") == ("account", "lock", "staff registry entry (absent)")


def test_by_default_the_flows_are_todays():
    assert transaction_items("signup") == ("unverified account", "expiring lock", "expiring lock")
    assert transaction_items("username change") == ("account", "lock", "lock", "lock", "lock", "security event")
    assert transaction_items("deletion") == ("account", "lock", "lock", "lock", "staff registry entry (absent)")


def test_a_stored_account_is_stored_without_its_two_username_locks(settings):
    default = costs.month(daily_users=0, accounts=1000).storage_gb
    lock = costs.item_size(costs.sample_items()["lock"]) + costs.ITEM_OVERHEAD_BYTES
    settings.ACCOUNTS_SIGNUP_FIELDS = EMAIL_ONLY_FIELDS
    settings.ACCOUNTS_LOGIN_METHODS = EMAIL_ONLY_METHODS

    saved_per_account = (default - costs.month(daily_users=0, accounts=1000).storage_gb) * 1e9 / 1000
    # Two locks and the username of the account item (a session's size moves by a few
    # bytes, its signed data holding a random key: no lock's size).
    assert saved_per_account > 1.5 * lock


def test_the_command_lists_no_username_change(email_only):
    _, out, _ = run_command("accounts_cost")

    assert "signup" in out and "username change" not in out


def sign_up(client):
    page = client.get("/accounts/signup/")
    token = page.context["form"]["token"].value()
    return client.post("/accounts/signup/", {"email": "ada@example.com", "password1": PASSWORD, "token": token})


@pytest.mark.dynamodb_local
@pytest.mark.parametrize("name", ["signup", "verification link", "deletion"])
def test_each_flows_requests_are_those_the_code_sends(email_only, proxy, settings, name):
    if name == "deletion":
        client = Client()
        sign_up(client)
        send = lambda: client.post("/accounts/delete/", {"password": PASSWORD})  # noqa: E731
    else:
        settings.ACCOUNTS_EMAIL_VERIFICATION = "mandatory"
        client = Client()
        if name == "signup":
            client.get("/accounts/signup/")
            send = lambda: sign_up(client)  # noqa: E731
        else:
            sign_up(client)
            path = path_of(link_in(mails_to("ada@example.com")[0]))
            send = lambda: Client().post(path)  # noqa: E731
    proxy.reset()

    response = send()

    assert response.status_code in (200, 302)
    assert proxy.snapshot() == costs.flow_named(name).operations()


@pytest.mark.dynamodb_local
def test_explain_prints_a_signup_without_username_locks(ddb, email_only):
    output = explain("signup", "--email", "Ada@X.io")

    request = json.loads(output)
    assert [entry["Put"]["Item"]["PK"]["S"] for entry in request["TransactItems"]][1:] == ["UNIQ#EMAIL#ada@x.io"]
    send(output)
    account = store.get_by_email("ada@x.io")
    assert account.username is None
    assert set(table_items()) == {(account.PK, "PROFILE"), ("UNIQ#EMAIL#ada@x.io", "LOCK")}


@pytest.mark.dynamodb_local
def test_explain_names_accounts_by_address_or_id_and_refuses_a_username(ddb, email_only, settings):
    settings.ACCOUNTS_EMAIL_VERIFICATION = "mandatory"
    account, _ = store.signup("ada@x.io", None, "hash")

    verify = json.loads(explain("verify", "--id", account.id))
    with pytest.raises(CommandError, match="no usernames"):
        explain("delete", "--username", "ada")

    assert verify["TransactItems"][0]["Update"]["Key"]["PK"]["S"] == account.PK
    assert [entry["Put"]["Item"]["PK"]["S"] for entry in verify["TransactItems"] if "Put" in entry][:1] == [
        "UNIQ#EMAIL#ada@x.io"
    ]


def test_explain_of_a_signup_needs_a_username_where_it_is_required(ddb):
    with pytest.raises(CommandError, match="needs --username"):
        explain("signup", "--email", "ada@x.io")
