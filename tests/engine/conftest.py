"""The engine's tests. test_identifiers_icu.py compares the identifiers with the PyICU
implementation they replace and needs PyICU, which the app no longer depends on: ``nox -s
icu`` (``make test-matrix``) runs it, or ``ACCOUNTS_TEST_ICU=1`` where PyICU is installed.
Other runs leave it out, rather than skip it."""

import os

collect_ignore = [] if os.environ.get("ACCOUNTS_TEST_ICU") else ["test_identifiers_icu.py"]
