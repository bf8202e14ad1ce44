"""Benchmark: the lock audit over 10,000 accounts, with 1 and 4 parallel Scan segments.

Run ``python -m tests.benchmarks.audit`` (about a minute) or add ``--accounts N`` and
``--rounds R``. It starts one in-memory DynamoDB Local, batch-writes the accounts and their
email and username locks (3 items per account), then times :func:`accounts.audit.run_audit`
(consistent Scan of every item, then the comparison in memory). Segment counts are
interleaved and repeated after one untimed warm-up audit, and the median is reported, so
neither the JVM's warm-up nor background load favours one of them.
"""

import argparse
import os
import statistics
import time

from tests.benchmarks import configure_django

SEGMENT_COUNTS = (1, 4)


def seed(count):
    """Batch-write ``count`` accounts with their locks; returns the seconds it took."""
    from tests.seeding import seed_accounts

    started = time.perf_counter()
    seed_accounts(count, prefix="bench")
    return time.perf_counter() - started


def time_audits(rounds, expected_items):
    """Median seconds of ``run_audit`` per segment count, checking each report is clean."""
    from accounts import audit

    timings = {segments: [] for segments in SEGMENT_COUNTS}
    # DynamoDB Local (a JVM) runs its first full Scan about twice as slowly: warm it up.
    audit.run_audit(segments=1)
    for round_number in range(rounds):
        order = SEGMENT_COUNTS if round_number % 2 == 0 else tuple(reversed(SEGMENT_COUNTS))
        for segments in order:
            report = audit.run_audit(segments=segments)
            if report.scanned != expected_items or not report.consistent:
                raise SystemExit(f"Unexpected audit: {report.scanned} items, {len(report.findings)} findings.")
            timings[segments].append(report.seconds)
    return {segments: statistics.median(values) for segments, values in timings.items()}


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--accounts", type=int, default=10_000)
    parser.add_argument("--rounds", type=int, default=5)
    args = parser.parse_args(argv)

    from accounts.dynamodb_local import DynamoDBLocal

    with DynamoDBLocal() as server:
        configure_django(server.endpoint_url, "bench-audit")
        seconds = seed(args.accounts)
        items = args.accounts * 3
        print(f"Seeded {args.accounts:,} accounts ({items:,} items) in {seconds:.1f} s on DynamoDB Local {server.endpoint_url}")
        medians = time_audits(args.rounds, items)
        print()
        print(f"{'segments':>8}  {'median s':>9}  {'items/s':>9}  {'vs 1':>6}")
        for segments, median in medians.items():
            speedup = medians[1] / median
            print(f"{segments:>8}  {median:>9.2f}  {items / median:>9,.0f}  {speedup:>5.2f}x")
        print(f"\n{args.rounds} round(s), median; {os.cpu_count()} CPU(s) shared by DynamoDB Local and the client.")


if __name__ == "__main__":
    main()
