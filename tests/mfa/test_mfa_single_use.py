"""Each single-use write of a sign-in refuses its second use, on DynamoDB Local, whatever
the order in which requests read: the half-login (or passkey challenge) session, a TOTP
time step, a recovery code, a passkey's counter. Each test fails without its condition
(the half-login's ``expires >= :now``, the step's ``attribute_not_exists``, the code's
``contains``, the counter's ``sign_count = read``)."""

import pytest
from django.contrib.auth import SESSION_KEY

from accounts import sessions, store
from accounts.exceptions import StaleItem
from accounts.mfa import passkeys, recovery_codes, totp
from accounts.mfa import store as mfa_store

pytestmark = pytest.mark.dynamodb_local


@pytest.fixture
def ada(ddb):
    account, _ = store.signup("ada@example.com", "ada", "!")
    return account


def staged_session(account):
    """A saved anonymous session holding a half-login of ``account``: its key."""
    staged = sessions.SessionStore()
    staged["accounts_mfa_stage"] = {"id": account.id}
    staged.create()
    return staged.session_key


def logging_in(account, staged_key):
    """A request's session that read the half-login in ``staged_key`` and logs ``account`` in."""
    session = sessions.SessionStore(staged_key)
    session.cycle_key()
    session[SESSION_KEY] = account.id
    return session


def sign_in(session, staged_key, spends):
    """The sign-in transaction of ``session`` (see :func:`logging_in`), as the second step sends it."""
    write = session.prepare_write()
    mfa_store.sign_in(write.put, write.deletes, sessions.raw_key(staged_key), spends)
    session.written(write)


def test_a_half_login_signs_in_once(ada):
    staged = staged_session(ada)
    first, second = logging_in(ada, staged), logging_in(ada, staged)
    sign_in(first, staged, [mfa_store.totp_spend(ada.id, totp.current_step())])

    with pytest.raises(StaleItem):
        sign_in(second, staged, [mfa_store.totp_spend(ada.id, totp.current_step() + 1)])


def test_a_totp_step_is_spent_once(ada):
    first, second = staged_session(ada), staged_session(ada)
    sign_in(logging_in(ada, first), first, [mfa_store.totp_spend(ada.id, totp.current_step())])

    with pytest.raises(StaleItem):
        sign_in(logging_in(ada, second), second, [mfa_store.totp_spend(ada.id, totp.current_step())])


def test_a_recovery_code_is_spent_once_even_by_a_request_that_read_it_unspent(ada):
    codes = recovery_codes.generate()
    mfa_store.set_recovery_codes(ada, codes)
    read = store.get_account(ada.id)
    first, second = staged_session(ada), staged_session(ada)
    sign_in(logging_in(read, first), first, [mfa_store.recovery_code_spend(read, codes[0])])

    with pytest.raises(StaleItem):
        sign_in(logging_in(read, second), second, [mfa_store.recovery_code_spend(read, codes[0])])

    assert len(store.get_account(ada.id).recovery_codes) == 9


def test_a_failed_sign_in_writes_no_session_and_keeps_the_half_login(ada):
    first, staged = staged_session(ada), staged_session(ada)
    sign_in(logging_in(ada, first), first, [mfa_store.totp_spend(ada.id, totp.current_step())])

    with pytest.raises(StaleItem):
        sign_in(logging_in(ada, staged), staged, [mfa_store.totp_spend(ada.id, totp.current_step())])

    assert sessions.SessionStore(staged).load()["accounts_mfa_stage"] == {"id": ada.id}
    assert len(sessions.list_sessions(ada.id)) == 1


def test_a_passkey_counter_is_stored_once_even_by_a_request_that_read_it_unchanged(ada):
    credential = passkeys.NewCredential("cred1", b"key", 3, False, False, [], "0" * 32)
    mfa_store.add_passkey(store.get_account(ada.id), credential, "Laptop")
    _, read = mfa_store.read_for_passkey(ada.id, "cred1")
    first, second = staged_session(ada), staged_session(ada)
    sign_in(logging_in(ada, first), first, [mfa_store.passkey_spend(read, {"sign_count": 4})])

    # Another half-login, its own session unspent, sending the same answer (counter 4 over 3 as read).
    with pytest.raises(StaleItem):
        sign_in(logging_in(ada, second), second, [mfa_store.passkey_spend(read, {"sign_count": 4})])

    assert mfa_store.read_for_passkey(ada.id, "cred1")[1].sign_count == 4
    assert len(sessions.list_sessions(ada.id)) == 1
