"""The import benchmark (tests/benchmarks/imports.py) runs at a tiny size, so it cannot rot
unnoticed: it runs to its end and prints each of its figures. Speed is judged by ``make
bench``, never here."""

import pytest

from tests.benchmarks.test_benchmarks_smoke import run_benchmark

pytestmark = pytest.mark.dynamodb_local


def test_the_import_benchmark_prints_the_ratio_memory_export_and_costs(dynamodb_local):
    out = run_benchmark("imports", "--users", "200", "--export-users", "300", "--endpoint", dynamodb_local.endpoint_url)

    assert "Ratio: " in out
    assert "Peak RSS of the import: " in out
    assert "--to-export of 300 users: " in out
    assert "guarded import: 8.0 write units a user, $5.00" in out
    assert "--to-export + import-table: " in out
