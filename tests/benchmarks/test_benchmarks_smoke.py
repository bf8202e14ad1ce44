"""Every benchmark of ``make bench`` runs here at a tiny size, so none can rot unnoticed:
each must run to its end and print its figures. Speed is not judged here (``make bench``
does that); that each runs, and says what it measured, is."""

import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]

pytestmark = pytest.mark.dynamodb_local


def run_benchmark(module, *args, timeout=240):
    """The stdout of ``python -m tests.benchmarks.<module> <args>``; it must exit 0."""
    result = subprocess.run(
        [sys.executable, "-m", f"tests.benchmarks.{module}", *args],
        cwd=ROOT,
        env={**os.environ, "PYTHONPATH": str(ROOT)},
        capture_output=True,
        text=True,
        timeout=timeout,
    )
    assert result.returncode == 0, result.stdout[-3000:] + result.stderr[-3000:]
    return result.stdout


def test_the_audit_benchmark_sets_the_audit_beside_a_raw_scan_at_two_sizes(dynamodb_local):
    out = run_benchmark(
        "audit",
        "--items",
        "400,800",
        "--rounds",
        "1",
        "--segments",
        "2",
        "--page-size",
        "50",
        "--endpoint",
        dynamodb_local.endpoint_url,
        "--join-rows",
        "0",
    )

    assert "400 items (100 accounts and their 3 locks) loaded" in out
    assert "800 items (200 accounts and their 3 locks) loaded" in out
    rows = re.findall(
        r"^\s*(\d+)\s+[\d,]+\s+[\d,]+\s+[\d,]+\s+[\d.]+\s+[\d.]+\s+([\d.]+)\s+([\d.]+)\s+(?:ok|SHORT)$", out, re.M
    )
    assert [size for size, _, _ in rows] == ["400", "800"]
    # The peak resident set size of the auditing process: at least what it held before.
    assert all(100 < float(before) <= float(peak) for _, before, peak in rows), out
    assert "Peak memory" in out and "The join alone" not in out


def test_the_audit_benchmark_times_the_join_alone_on_generated_rows():
    out = run_benchmark("audit", "--items", "", "--join-rows", "7000", "--memory-limit", "200MB")

    assert re.search(r"The join alone: 7,000 rows \(1,000 accounts; .*\), 1 candidate\(s\), [\d.]+ s", out), out
    assert "At 400,000,000 rows" in out


def test_the_transactions_benchmark_compares_the_engine_with_raw_requests(dynamodb_local):
    out = run_benchmark("transactions", "--quick", "--seconds", "0.2", "--endpoint", dynamodb_local.endpoint_url)

    assert "Goal engine/raw >= 0.95 at every thread count:" in out
    assert "CPU microseconds per transaction" in out
    assert "create           1  (TransactWriteItems 1)" in out


def test_the_stall_benchmark_times_each_page_to_its_503():
    out = run_benchmark("stall", "--deadline", "1")

    assert "DynamoDB Local paused, ACCOUNTS_REQUEST_DEADLINE=1:" in out
    assert out.count(" 503 ") == 3


def test_the_web_benchmark_logs_in_and_signs_up_through_gunicorn_with_limits_off():
    out = run_benchmark("web", "--seconds", "2", "--rounds", "1", "--workers", "1", "--processes", "1")

    assert "logins" in out and "sign-ups" in out
    assert "failed" not in out, out
    assert "bench.example" not in out  # no mail printed


def test_the_reset_timing_benchmark_compares_registered_and_unknown_addresses_and_the_mail_goes_out():
    out = run_benchmark("reset_timing", "--requests", "3", "--mail-delay", "0.01", "--pause", "0.02")

    assert re.search(r"^registered\s+3\s+[\d.]+\s+[\d.]+$", out, re.M)
    assert re.search(r"^unknown\s+3\s+[\d.]+\s+[\d.]+$", out, re.M)
    assert "Gap of the medians:" in out
    # Five warm-up requests and three timed ones for registered addresses: each link was mailed.
    assert "8 reset mail(s) accepted by the loopback SMTP server" in out


def test_the_host_tests_benchmark_runs_the_docs_project_on_dynamodb_local_and_moto_beside_allauth():
    out = run_benchmark("host_tests", "--rounds", "1", "--warmup-rounds", "0", timeout=600)

    for suite in ("dynamo-local", "dynamo-moto", "allauth-sqlite"):
        assert re.search(rf"^{suite}\s+[\d.]+\s+[\d.]+\s+[\d.]+\s+-?[\d.]+$", out, re.M), out
