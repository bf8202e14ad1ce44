"""What each flow costs (``accounts.costs``, ``manage.py accounts_cost``): AWS's billing
rules, each flow's requests as the code sends them on the wire, and the tables of docs/costs.md.

When a flow's requests change, the flow's test here fails until ``accounts/costs.py`` says
the same, and then the docs test fails until the page's table is the command's."""

import re
import shlex
from pathlib import Path

import pytest
from django.core.management import call_command
from django.test import Client

from accounts import costs
from tests.mail import link_in, mails_to, path_of
from tests.staff import run_command
from tests.web import OTHER_PASSWORD, PASSWORD, login, signed_up_client, signup_data

PAGE = Path(__file__).resolve().parents[2] / "docs" / "costs.md"


# The rules


def test_item_size_counts_names_and_values_as_aws_does():
    item = {"PK": {"S": "ACCT#1"}, "n": {"N": "12345"}, "ok": {"BOOL": True}, "é": {"S": "é"}}

    # PK 2+6, n 1+(3 bytes for 5 digits + 1), ok 2+1, é 2+2
    assert costs.item_size(item) == 8 + 5 + 3 + 4


def test_reads_round_each_item_up_to_4_kb_and_a_query_its_total():
    sizes = {"small": 100, "large": 5000}

    assert costs.Request("BatchGetItem", ("small", "small", "large")).read_units(sizes) == 1 + 1 + 2
    assert costs.Request("Query", ("small", "small", "large")).read_units(sizes) == 2
    assert costs.Request("GetItem", ("small",)).write_units(sizes) == 0


def test_a_transactional_write_costs_two_units_per_kb_per_item_condition_checks_and_absent_items_included():
    sizes = {"item": 1500, "check": 80, "absent": 0}

    assert costs.Request("TransactWriteItems", ("item", "check", "absent")).write_units(sizes) == 2 * (2 + 1 + 1)
    assert costs.Request("BatchWriteItem", ("item", "check")).write_units(sizes) == 2 + 1
    assert costs.Request("TransactWriteItems", ("item",)).read_units(sizes) == 0


def test_signup_costs_nine_write_units_and_one_read_as_worked_out_by_hand():
    priced = {cost.flow.name: cost for cost in costs.price()}

    # The signup limit's counter (1), the transaction of the account and its two username
    # locks (2 x 3), the address's lock read (1 read), the mail limit's counter (1), the
    # anonymous session (1).
    assert (priced["signup"].reads, priced["signup"].writes) == (1, 9)
    assert (priced["page"].reads, priced["page"].writes) == (2, 0)
    assert priced["page"].dollars_per_million == pytest.approx(2 * costs.READ_PRICE)


def test_a_month_adds_up_its_flows_and_storage():
    month = costs.month(daily_users=1000, pages=10, logins=1, refreshes=2, accounts=1000)

    assert month.runs == {"login": 30_000, "page": 240_000, "last seen": 60_000}
    # A login: the lock and the account's partition (2 reads), three counter updates and
    # the session's transaction with its session slot, its security event, the account's
    # counter deleted and the account checked still active (5 items, transactional: 10 writes).
    assert month.reads == 30_000 * 2 + 240_000 * 2 + 60_000 * 2
    assert month.writes == 30_000 * 13 + 60_000 * 1
    assert month.storage_gb > 0


# Each flow's requests, on the wire


def run_flow(name, settings):
    """Do what flow ``name`` stands for; returns the request to count (a callable)."""
    if name == "page":
        client = signed_up_client()
        return lambda: client.get("/")
    if name == "last seen":
        client = signed_up_client()
        settings.ACCOUNTS_SESSION_TOUCH_INTERVAL = 0
        return lambda: client.get("/")
    if name == "profile":
        client = signed_up_client()
        login(Client(), "ada")
        return lambda: client.get("/accounts/profile/")
    if name == "signup":
        settings.ACCOUNTS_EMAIL_VERIFICATION = "mandatory"
        client = Client()
        data = signup_data(client)
        return lambda: client.post("/accounts/signup/", data)
    if name == "verification link":
        settings.ACCOUNTS_EMAIL_VERIFICATION = "mandatory"
        Client().post("/accounts/signup/", signup_data(Client()))
        path = path_of(link_in(mails_to("ada@example.com")[0]))
        return lambda: Client().post(path)
    if name == "login":
        signed_up_client()
        return lambda: login(Client(), "ada")
    if name == "failed login":
        signed_up_client()
        return lambda: login(Client(), "ada", OTHER_PASSWORD)
    if name == "logout":
        client = signed_up_client()
        return lambda: client.post("/accounts/logout/")
    if name == "log out other sessions":
        client = signed_up_client()
        for _ in range(3):
            login(Client(), "ada")
        return lambda: client.post("/accounts/sessions/logout-others/")
    if name == "username change":
        client = signed_up_client()
        return lambda: client.post("/accounts/username/", {"username": "lovelace", "password": PASSWORD})
    if name == "email change":
        client = signed_up_client()
        return lambda: client.post("/accounts/email/", {"email": "lovelace@example.com", "password": PASSWORD})
    if name == "email change link":
        client = signed_up_client()
        client.post("/accounts/email/", {"email": "lovelace@example.com", "password": PASSWORD})
        path = path_of(link_in(mails_to("lovelace@example.com")[0]))
        return lambda: Client().post(path)
    if name == "password change":
        client = signed_up_client()
        login(Client(), "ada")
        data = {"old_password": PASSWORD, "new_password1": OTHER_PASSWORD, "new_password2": OTHER_PASSWORD}
        return lambda: client.post("/accounts/password/", data)
    if name == "deletion":
        client = signed_up_client()
        return lambda: client.post("/accounts/delete/", {"password": PASSWORD})
    if name.startswith("address"):
        return address_flow(name, settings)
    raise AssertionError(f"No test sends flow {name!r}: add it here.")


def address_flow(name, settings):
    """The flows of several addresses per account (``ACCOUNTS_MAX_EMAIL_ADDRESSES`` 3)."""
    settings.ACCOUNTS_MAX_EMAIL_ADDRESSES = 3
    client = signed_up_client()
    add = {"email": "work@example.org", "password": PASSWORD}
    if name == "address add":
        return lambda: client.post("/accounts/email/", add)
    client.post("/accounts/email/", add)
    path = path_of(link_in(mails_to("work@example.org")[0]))
    if name == "address link":
        return lambda: Client().post(path)
    Client().post(path)
    action = "primary" if name == "address make primary" else "remove"
    return lambda: client.post("/accounts/email/", {"email": "work@example.org", "action": action})


@pytest.mark.dynamodb_local
@pytest.mark.parametrize("flow", costs.flows(), ids=lambda flow: flow.name)
def test_each_flows_requests_are_those_the_code_sends(proxy, settings, flow):
    send = run_flow(flow.name, settings)
    proxy.reset()

    response = send()

    assert response.status_code in (200, 302)
    assert proxy.snapshot() == flow.operations()


# The page


def test_the_docs_cost_table_is_the_commands():
    _, out, _ = run_command("accounts_cost", "--markdown")

    assert out.strip() in PAGE.read_text(), (
        "docs/costs.md's cost table differs: paste `manage.py accounts_cost --markdown`"
    )


def test_the_docs_item_sizes_are_those_of_the_items_the_code_builds():
    sizes = {name: costs.item_size(item) for name, item in costs.sample_items().items() if item}
    stated = dict(re.findall(r"^\| ([a-z ]+) \| (\d+) \|$", PAGE.read_text(), re.M))

    assert set(stated) == set(sizes)
    # A session's signed data holds a random key, so its compressed size moves by a byte or two.
    assert all(abs(int(stated[name]) - size) <= 3 for name, size in sizes.items()), (stated, sizes)


def test_the_docs_worked_month_is_what_its_command_prints():
    text = PAGE.read_text()
    [command] = re.findall(r"^python manage.py (accounts_cost --markdown --daily-users .*)$", text, re.M)
    _, out, _ = run_command(*shlex.split(command))

    month = out.strip().split("\n\n")[1]
    assert month.startswith("| line | a month |")
    assert month in text, "docs/costs.md's month differs: paste the command's month table"


def test_the_command_prints_sizes_flows_and_a_month(capsys):
    call_command("accounts_cost", "--daily-users", "100000", "--accounts", "1000000", "--write-price", "1.25")

    out = capsys.readouterr().out
    assert "account " in out and "session " in out
    assert "writes at $1.25 a million units" in out
    assert "signup" in out and "deletion" in out
    assert "A month (30 days):" in out and "total" in out
