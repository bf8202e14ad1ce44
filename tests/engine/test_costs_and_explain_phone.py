"""``accounts_cost`` and ``accounts_explain`` on a site with phone numbers (issue 37): the phone
page's change of number and its code cost what they send on the wire, and ``accounts_explain``
prints the exact request of a number's verification, change and removal."""

import json

import pytest
from django.core.management import CommandError

from accounts import costs, store
from tests.engine.test_explain_command import explain, send, table_items
from tests.phones import ask_for, logged_in, with_number
from tests.sms import NUMBER_E164, OTHER, OTHER_E164, PHONE_FIELDS, PHONE_METHODS, code_to, phone_site  # noqa: F401
from tests.staff import run_command


def test_the_flows_have_the_phone_change_and_its_code_on_a_site_with_phone_numbers(settings):
    assert "phone change" not in [flow.name for flow in costs.flows()]

    settings.ACCOUNTS_SIGNUP_FIELDS = PHONE_FIELDS
    settings.ACCOUNTS_LOGIN_METHODS = PHONE_METHODS
    _, out, _ = run_command("accounts_cost")

    assert "phone change" in out and "phone code" in out


@pytest.mark.dynamodb_local
@pytest.mark.parametrize("name", ["phone change", "phone code"])
def test_each_phone_flows_requests_are_those_the_code_sends(phone_site, proxy, name):
    with_number()
    client = logged_in()
    if name == "phone change":
        send = lambda: ask_for(client, OTHER)  # noqa: E731
    else:
        ask_for(client, OTHER)
        code = code_to(OTHER_E164)
        send = lambda: client.post("/accounts/phone/verify/", {"code": code})  # noqa: E731
    proxy.reset()

    response = send()

    assert response.status_code == 302
    assert proxy.snapshot() == costs.flow_named(name).operations()


@pytest.mark.dynamodb_local
def test_explain_prints_a_change_of_number_that_moves_its_lock_when_sent(phone_site):
    account = with_number()

    output = explain("change-phone", "--email", "ada@example.com", "--to", "+44 7911 123456")

    request = json.loads(output)
    kinds = [next(iter(entry)) for entry in request["TransactItems"]]
    assert kinds == ["Update", "Put", "Delete", "ConditionCheck", "Put"]
    send(output)
    changed = store.get_account(account.id)
    assert (changed.phone, changed.phone_verified) == (OTHER_E164, True)
    assert ("UNIQ#PHONE#" + OTHER_E164, "LOCK") in table_items()
    assert ("UNIQ#PHONE#" + NUMBER_E164, "LOCK") not in table_items()


@pytest.mark.dynamodb_local
def test_explain_prints_a_verification_and_a_removal(phone_site):
    unverified = with_number(verified=False)

    verify = json.loads(explain("verify-phone", "--email", "ada@example.com"))
    send(json.dumps(verify))
    removal = explain("remove-phone", "--email", "ada@example.com")
    send(removal)

    assert [entry["Put"]["Item"]["PK"]["S"] for entry in verify["TransactItems"] if "Put" in entry][0] == (
        "UNIQ#PHONE#" + NUMBER_E164
    )
    assert store.get_account(unverified.id).phone is None
    assert ("UNIQ#PHONE#" + NUMBER_E164, "LOCK") not in table_items()


@pytest.mark.dynamodb_local
def test_explain_refuses_what_cannot_be_sent(phone_site, settings):
    with_number()

    with pytest.raises(CommandError, match="no unverified phone number"):
        explain("verify-phone", "--email", "ada@example.com")
    with pytest.raises(CommandError, match="Invalid number"):
        explain("change-phone", "--email", "ada@example.com", "--to", "12345")
    settings.ACCOUNTS_SIGNUP_FIELDS = ["email*", "username*", "password1*"]
    settings.ACCOUNTS_LOGIN_METHODS = {"email"}
    with pytest.raises(CommandError, match="no phone numbers"):
        explain("remove-phone", "--email", "ada@example.com")
