"""The login-code timing benchmark runs to its end at a tiny size and says what it measured
(speed is judged by running it, not here), as every benchmark in ``test_benchmarks_smoke``."""

import re

import pytest

from tests.benchmarks.test_benchmarks_smoke import run_benchmark

pytestmark = pytest.mark.dynamodb_local


def test_the_code_timing_benchmark_compares_registered_and_unknown_addresses_and_the_code_goes_out():
    out = run_benchmark("code_timing", "--requests", "3", "--mail-delay", "0.01", "--pause", "0.05")

    assert re.search(r"^registered\s+3\s+[\d.]+\s+[\d.]+$", out, re.M)
    assert re.search(r"^unknown\s+3\s+[\d.]+\s+[\d.]+$", out, re.M)
    assert "Gap of the medians:" in out
    # Five warm-up requests and three timed ones for registered addresses: each code was mailed.
    assert "8 code mail(s) accepted by the loopback SMTP server" in out
