"""A damaged second factor fails closed: an account whose ``totp_secret``, ``passkeys`` or
``recovery_codes`` is stored with the wrong type (an operator's raw write) is never logged
in by its password alone. The login goes to the second step, which refuses every code and
passkey with a message that says to ask for help, and logs the refusal."""

import logging

import boto3
import pytest
from django.test import Client

from accounts import store
from accounts.mfa import store as mfa_store
from accounts.tables import TableModel, malformed_attributes
from tests import authenticator
from tests.mfa import ORIGIN, add_passkey, code_of, enable_totp, options, password_login, second_step
from tests.web import messages_of, signed_up_client

pytestmark = pytest.mark.dynamodb_local

DAMAGE = {
    # An authenticator app's secret stored as a list.
    "totp_secret": {"L": [{"S": "JBSWY3DPEHPK3PXP"}]},
    # A passkeys string set stored as one string.
    "passkeys": {"S": "Y3JlZGVudGlhbA"},
    # Recovery codes stored as a number.
    "recovery_codes": {"N": "12345678"},
}


def operator_writes(account, attribute, raw_value):
    """``UpdateItem SET`` of one raw attribute value on the account's item, as an operator's
    boto3 client would write it."""
    from django.conf import settings

    client = boto3.client(
        "dynamodb",
        endpoint_url=settings.ACCOUNTS_ENDPOINT_URL,
        region_name="us-east-1",
        aws_access_key_id="local",
        aws_secret_access_key="local",
    )
    client.update_item(
        TableName=TableModel.Meta.table_name,
        Key={"PK": {"S": account.PK}, "SK": {"S": "PROFILE"}},
        UpdateExpression="SET #a = :v",
        ExpressionAttributeNames={"#a": attribute},
        ExpressionAttributeValues={":v": raw_value},
    )


def ada_with_totp():
    """Ada, signed up with an authenticator app on (and so recovery codes): ``(secret, codes)``."""
    client = signed_up_client()
    return enable_totp(client)


def is_logged_in(client):
    return client.get("/accounts/profile/").status_code == 200


@pytest.mark.parametrize("attribute", sorted(DAMAGE))
def test_a_damaged_second_factor_attribute_means_the_account_has_a_second_factor(ddb, attribute):
    signed_up_client()
    operator_writes(store.get_by_username("ada"), attribute, DAMAGE[attribute])

    ada = store.get_by_username("ada")

    assert attribute in malformed_attributes(ada)
    assert mfa_store.has_second_factor(ada)


@pytest.mark.parametrize("attribute", sorted(DAMAGE))
def test_a_password_alone_never_logs_in_an_account_whose_second_factor_is_damaged(ddb, attribute):
    signed_up_client()
    operator_writes(store.get_by_username("ada"), attribute, DAMAGE[attribute])
    client = Client()

    response = password_login(client)

    assert response.status_code == 302 and response["Location"] == "/accounts/mfa/authenticate/"
    assert not is_logged_in(client)


def test_a_passkey_only_account_whose_passkeys_are_damaged_needs_the_second_step(ddb):
    client = signed_up_client()
    add_passkey(client)
    operator_writes(store.get_by_username("ada"), "passkeys", DAMAGE["passkeys"])
    client = Client()

    response = password_login(client)

    assert response["Location"] == "/accounts/mfa/authenticate/"
    assert not is_logged_in(client)


@pytest.mark.parametrize("attribute", sorted(DAMAGE))
def test_the_second_step_refuses_every_code_of_an_account_with_a_damaged_factor_and_logs_it(ddb, attribute, caplog):
    secret, codes = ada_with_totp()
    operator_writes(store.get_by_username("ada"), attribute, DAMAGE[attribute])
    client = Client()
    password_login(client)

    with caplog.at_level(logging.ERROR, logger="accounts.mfa"):
        by_app = second_step(client, code_of(secret))
        password_login(client)
        by_recovery_code = second_step(client, codes[0])

    for response in (by_app, by_recovery_code):
        assert response.status_code == 302 and response["Location"] == "/accounts/login/"
    assert not is_logged_in(client)
    logged = [record.getMessage() for record in caplog.records if record.name == "accounts.mfa"]
    assert len(logged) == 2
    assert all(attribute in text and store.get_by_username("ada").id in text for text in logged)


def test_a_damaged_email_verified_still_sends_an_account_with_an_authenticator_app_to_the_second_step(ddb, settings):
    ada_with_totp()
    settings.ACCOUNTS_EMAIL_VERIFICATION = "optional"
    operator_writes(store.get_by_username("ada"), "email_verified", {"S": "yes"})
    client = Client()

    response = password_login(client)

    assert response["Location"] == "/accounts/mfa/authenticate/"
    assert not is_logged_in(client)


def test_the_refusal_says_the_second_factor_is_damaged_and_to_ask_for_help(ddb):
    secret, _codes = ada_with_totp()
    operator_writes(store.get_by_username("ada"), "totp_secret", DAMAGE["totp_secret"])
    client = Client()
    password_login(client)

    response = second_step(client, code_of(secret))

    assert response["Location"] == "/accounts/login/"
    [shown] = messages_of(client.get("/accounts/login/"))
    assert "second factor" in shown and "damaged" in shown


def test_the_second_step_refuses_a_sound_passkey_when_the_authenticator_app_is_damaged(ddb):
    client = signed_up_client()
    enable_totp(client)
    credential, _ = add_passkey(client)
    operator_writes(store.get_by_username("ada"), "totp_secret", DAMAGE["totp_secret"])
    client = Client()
    password_login(client)
    answer = authenticator.get(credential, options(client, "second_factor"), ORIGIN)

    response = client.post("/accounts/mfa/authenticate/passkey/", {"credential": answer})

    assert response["Location"] == "/accounts/login/"
    assert not is_logged_in(client)
