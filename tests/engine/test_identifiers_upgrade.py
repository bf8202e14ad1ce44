"""On DynamoDB Local: a table keyed by the PyICU identifiers (before issue 36) moves to the
pinned pure-Python ones with ``accounts_backfill``.

Icelandic ``þ`` (THORN) is one of the keys that moved: UTS #39's data of Unicode 15.0 (ICU
72.1) gave it no prototype, Unicode 17.0's gives it ``p``. So ``þorir`` held the skeleton
lock ``þorir`` before and must hold ``porir`` now, where it keeps ``porir`` out.
"""

import pytest
from django.test import Client

from accounts import audit, identifiers, store
from accounts.checks import check_key_version
from accounts.tables import account_constraints, record_key_version, recorded_key_version
from tests.engine.test_engine import table_items
from tests.seeding import read_lock
from tests.staff import run_command
from tests.web import signup

pytestmark = pytest.mark.dynamodb_local

HASH = "argon2$not-a-real-hash"
# What accounts.identifiers computed on this project's machines before issue 36 (PyICU 2.17
# on ICU 72.1, Python 3.11, idna 3.20): its KEY_VERSION, and þorir's look-alike key.
PYICU_KEY_VERSION = "rules-1+icu-72.1+unicode-15.0+python-unicode-14.0.0+idna-3.20"
PYICU_LOOKALIKE_KEYS = {"þorir": "þorir"}


@pytest.fixture
def keyed_by_pyicu(monkeypatch):
    """This server computes keys as the PyICU identifiers did, until the fixture ends."""
    pinned = identifiers.lookalike_key
    monkeypatch.setattr(identifiers, "lookalike_key", lambda text: PYICU_LOOKALIKE_KEYS.get(text, pinned(text)))
    monkeypatch.setattr(identifiers, "KEY_VERSION", PYICU_KEY_VERSION)
    account_constraints.cache_clear()
    yield monkeypatch
    monkeypatch.undo()
    account_constraints.cache_clear()


def test_the_backfill_moves_a_table_keyed_by_pyicu_to_the_pinned_keys(ddb, keyed_by_pyicu):
    record_key_version()
    thorir, _ = store.signup("thorir@example.is", "þorir", HASH)
    assert table_items()["UNIQ#HANDLE_SKEL#þorir"]["key_version"] == PYICU_KEY_VERSION
    keyed_by_pyicu.undo()
    account_constraints.cache_clear()

    [error] = check_key_version(None)
    assert error.id == "accounts.E016"
    findings = {(finding.kind, finding.key) for finding in audit.run_audit().findings}
    assert findings == {(audit.MISSING, "UNIQ#HANDLE_SKEL#porir"), (audit.ORPHANED, "UNIQ#HANDLE_SKEL#þorir")}

    status, _, _ = run_command("accounts_backfill")

    assert status == 0
    assert recorded_key_version() == identifiers.KEY_VERSION
    assert check_key_version(None) == []
    assert read_lock("UNIQ#HANDLE_SKEL#þorir") == (False, None)
    assert read_lock("UNIQ#HANDLE_SKEL#porir") == (True, thorir.PK)
    assert audit.run_audit().consistent
    form = signup(Client(), "eve@example.com", "porir").context["form"]
    assert form.has_error("username", "username_similar")
