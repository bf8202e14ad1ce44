"""Markers given by where a test lives, for ``make test-fast`` (which leaves out ``browser``,
``spin``, ``benchmark`` and ``slow``): a folder or a file here, rather than a line in each
module. A test may also mark itself (``@pytest.mark.slow``)."""

import pytest

BY_PATH = {
    "browser": ("tests/browser/",),
    "spin": ("tests/protocol/test_protocol_model.py",),
    "benchmark": ("tests/benchmarks/",),
    # Minutes each on an idle 2-CPU machine: wheels built, projects started, other
    # processes (gunicorn, manage.py, the OpenID provider) started and waited for, or
    # Hypothesis' and schemathesis' hundreds of examples.
    "slow": (),
}


@pytest.hookimpl(tryfirst=True)
def pytest_collection_modifyitems(config, items):
    for item in items:
        for marker, paths in BY_PATH.items():
            if item.nodeid.startswith(paths):
                item.add_marker(marker)
