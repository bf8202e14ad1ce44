"""Markers given by where a test lives, for ``make test-fast`` (which leaves out ``browser``,
``spin``, ``benchmark`` and ``slow``): a folder or a file here, rather than a line in each
module. A test may also mark itself (``@pytest.mark.slow``)."""

import pytest

BY_PATH = {
    "browser": ("tests/browser/",),
    "spin": ("tests/protocol/test_protocol_model.py",),
    "benchmark": ("tests/benchmarks/",),
    # The files whose tests cost seconds each, or several times a typical test's tenth of
    # a second of CPU (measured: docs/internals/tests.md): wheels built and projects
    # started, other processes started and waited for (a JVM, gunicorn, manage.py, a pytest
    # of a host project), request deadlines waited out, threads racing many times, whole
    # audits (DuckDB) and tables seeded by the hundred, Hypothesis' and schemathesis'
    # hundreds of examples.
    "slow": (
        "tests/development/",
        "tests/hostproject/test_hostproject.py",
        "tests/hostproject/test_readme_project.py",
        "tests/hostproject/test_packaging.py",
        "tests/hostproject/test_testing_plugin.py",
        "tests/hostproject/test_production.py",
        "tests/engine/test_properties.py",
        "tests/engine/test_dynamodb_local_command.py",
        "tests/engine/test_createtable_command.py",
        "tests/engine/test_versioned_keys.py",
        "tests/headless/test_headless_conformance.py",
        "tests/headless/test_headless_app_client.py",
        "tests/headless/test_headless_import_structure.py",
        "tests/headless/test_headless_signup_unknown_outcome.py",
        "tests/web/test_web_deadline.py",
        "tests/web/test_signup_unknown_outcome.py",
        "tests/web/test_login_limits.py",
        "tests/web/test_sessions_bound_race.py",
        "tests/web/test_sessions_flow.py",
        "tests/web/test_web_adapter.py",
        "tests/audit/test_audit_streaming.py",
        "tests/audit/test_backfill.py",
        "tests/audit/test_audit.py",
        "tests/audit/test_audit_export.py",
        "tests/audit/test_audit_join.py",
        "tests/audit/test_audit_models.py",
        "tests/staff/test_staff_scale.py",
        "tests/staff/test_staff_last_staff_race.py",
        "tests/engine/test_engine_concurrency.py",
        "tests/engine/test_engine_wire_faults.py",
        "tests/engine/test_skew_race.py",
        "tests/web/test_bad_input_every_post_url.py",
        "tests/providers/test_providers_identity_lock.py",
        "tests/imports/test_import_crashes_and_races.py",
        "tests/imports/test_import_postgres.py",
    ),
}


@pytest.hookimpl(tryfirst=True)
def pytest_collection_modifyitems(config, items):
    for item in items:
        for marker, paths in BY_PATH.items():
            if item.nodeid.startswith(paths):
                item.add_marker(marker)
