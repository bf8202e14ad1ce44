"""The authenticator app's enrolment racing the removal of the passkey whose recovery codes it
keeps, on DynamoDB Local: the removal of the last passkey drops the codes, so the enrolment
keeping them guards them as read and the removal guards the app still off as read: in either
order, the app is never left on with no recovery codes (protocol/factors.pml, F3). Both writes stamp ``updated`` in one tick, as two servers' clocks
may: only the codes as read tell the enrolment's read stale."""

import pytest

from accounts import store
from accounts.exceptions import StaleItem
from accounts.mfa import recovery_codes, totp
from accounts.mfa import store as mfa_store
from tests.mfa import add_passkey
from tests.web import signed_up_client

pytestmark = pytest.mark.dynamodb_local


def with_a_passkey_and_its_recovery_codes():
    """ada, with a passkey (her only second factor) and recovery codes, as read."""
    add_passkey(signed_up_client())
    mfa_store.set_recovery_codes(store.get_by_username("ada"), recovery_codes.generate())
    ada = store.get_by_username("ada")
    assert ada.passkeys and ada.recovery_codes and not ada.totp_secret
    return ada


def test_an_enrolment_keeping_a_passkeys_codes_read_before_that_passkeys_removal_is_stale(ddb, monkeypatch):
    ada = with_a_passkey_and_its_recovery_codes()
    monkeypatch.setattr(store, "utcnow", lambda: ada.updated)  # the removal stamps what ada was read with
    (credential_id,) = ada.passkeys
    mfa_store.remove_passkey(store.get_account(ada.id), credential_id)

    with pytest.raises(StaleItem):
        mfa_store.enable_totp(ada, totp.new_secret(), totp.current_step())

    after = store.get_account(ada.id)
    assert after.totp_secret is None
    assert after.recovery_codes is None


def test_a_last_passkeys_removal_read_before_an_enrolment_keeping_its_codes_is_stale(ddb, monkeypatch):
    ada = with_a_passkey_and_its_recovery_codes()
    monkeypatch.setattr(store, "utcnow", lambda: ada.updated)  # the enrolment stamps what ada was read with
    mfa_store.enable_totp(store.get_account(ada.id), totp.new_secret(), totp.current_step())
    (credential_id,) = ada.passkeys

    with pytest.raises(StaleItem):
        mfa_store.remove_passkey(ada, credential_id)

    after = store.get_account(ada.id)
    assert after.totp_secret and after.passkeys == ada.passkeys
    assert after.recovery_codes == ada.recovery_codes


def test_an_enrolment_keeping_a_passkeys_codes_keeps_them(ddb):
    ada = with_a_passkey_and_its_recovery_codes()

    mfa_store.enable_totp(ada, totp.new_secret(), totp.current_step())

    assert store.get_account(ada.id).recovery_codes == ada.recovery_codes
