"""Benchmark: the lock audit's rate and peak memory at two table sizes, beside a raw
parallel Scan of the same table in the same run.

Run ``python -m tests.benchmarks.audit`` (10^5 and 10^6 items: about 25 minutes on two
cores) or add ``--items 100000,1000000 --segments 4 --rounds 3``. For each size it starts
from a new table on one in-memory DynamoDB Local, loads it fast (parallel BatchWriteItem of
the items the engine writes: each account and its three locks, four items), then alternates
round after round:

- raw: a consistent parallel Scan of every item with ``--segments`` segments, each page
  parsed by botocore and dropped, as any boto3 code reads a table: the floor;
- direct: the same Scan through the app's own client, which reads the items of an answer
  straight from the wire (:mod:`accounts.answers`), as the audit does;
- audit: :func:`accounts.audit.run_audit` with as many segments (each page's items' locks
  and its locks' owners read with consistent BatchGetItems, then checked);

and reports items per second (median) and the ratio audit / raw (goal: audit >= 0.5 x raw;
audit / direct beside it), then the audit's peak client memory (Python's tracemalloc, in
one more run: tracing slows the client) at each size (goal: flat).

Pages are 5,000 items (``--page-size``; the audit's own default is 1,000): DynamoDB Local
answers a Scan page in a time that grows with the page's position in the table (measured:
0.2 s for 1,000 items at the start of 200,000, 0.9 s at the end), so a whole Scan of it is
quadratic and fewer, larger pages matter; AWS's Scan pages do not slow down so.
"""

import argparse
import os
import statistics
import sys
import time
import tracemalloc
import uuid
from concurrent.futures import ThreadPoolExecutor

from tests.benchmarks import Running, configure_django

GOAL = 0.5
BATCH_WRITE_SIZE = 25
LOADER_THREADS = 8
PASSWORD_HASH = "!benchmark"


def account_items(count, prefix):
    """The raw items the engine's create writes for ``count`` new accounts (account, locks)."""
    from accounts import store, transactions

    for number in range(count):
        account = store.build_account(f"{prefix}{number}@bench.example", f"{prefix}{number}", PASSWORD_HASH)
        for action in transactions.plan_create(account).actions:
            yield action.body["Item"]


def load(client, table, count, prefix):
    """Write ``count`` accounts with their locks, 25 items a request, from several threads."""
    items = list(account_items(count, prefix))

    def write(start):
        pending = {table: [{"PutRequest": {"Item": item}} for item in items[start : start + BATCH_WRITE_SIZE]]}
        while pending:
            pending = client.batch_write_item(RequestItems=pending).get("UnprocessedItems") or {}

    with ThreadPoolExecutor(LOADER_THREADS) as pool:
        list(pool.map(write, range(0, len(items), BATCH_WRITE_SIZE)))
    return len(items)


def raw_scan(client, table, segments, page_size):
    """Items read by a consistent parallel Scan of the whole table, and the seconds it took."""

    def segment(index):
        count, start = 0, None
        while True:
            params = {
                "TableName": table,
                "Segment": index,
                "TotalSegments": segments,
                "ConsistentRead": True,
                "Limit": page_size,
            }
            if start:
                params["ExclusiveStartKey"] = start
            page = client.scan(**params)
            count += page["ScannedCount"]
            start = page.get("LastEvaluatedKey")
            if not start:
                return count

    began = time.perf_counter()
    with ThreadPoolExecutor(segments) as pool:
        scanned = sum(pool.map(segment, range(segments)))
    return scanned, time.perf_counter() - began


def botocore_parsing(client):
    """``client`` without the app's direct reading of items: botocore parses every answer."""
    from accounts import answers

    for operation in answers.ITEM_FIELDS:
        client.meta.events.unregister(f"before-parse.dynamodb.{operation}", unique_id=f"accounts.answers.{operation}")
    return client


def audit_once(segments, page_size, expected):
    """Items the audit read, and its seconds; a report that is not clean stops the benchmark."""
    from accounts import audit

    began = time.perf_counter()
    report = audit.run_audit(segments=segments, page_size=page_size)
    seconds = time.perf_counter() - began
    if report.scanned != expected or not report.consistent:
        raise SystemExit(f"Unexpected audit: {report.scanned} items, {len(report.findings)} finding(s).")
    return report.scanned, seconds


def peak_memory(segments, page_size, expected):
    """Peak bytes the audit allocated (tracemalloc), in one run."""
    tracemalloc.start()
    try:
        audit_once(segments, page_size, expected)
        return tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()


def measure(size, args, endpoint_url, warm_up):
    """One size on a table of its own: ``(raw items/s, direct items/s, audit items/s, peak bytes)``."""
    from accounts import tables

    table = f"bench-audit-{uuid.uuid4().hex[:8]}"
    configure_django(endpoint_url, table)
    client = tables._SharedClient(attempts=3).get()
    parsing = botocore_parsing(tables._SharedClient(attempts=3).get())
    accounts = size // 4
    began = time.perf_counter()
    items = load(client, table, accounts, "bench")
    print(f"\n{items:,} items ({accounts:,} accounts and their 3 locks) loaded in {time.perf_counter() - began:.0f} s", flush=True)
    # What the audit reads: those, and the item recording the key version of the table's
    # locks, which a new table has.
    expected = items + 1
    if warm_up:
        # The first Scans on DynamoDB Local (a JVM) run slower: one of each, untimed.
        raw_scan(parsing, table, args.segments, args.page_size)
        audit_once(args.segments, args.page_size, expected)
    rates = {"raw": [], "direct": [], "audit": []}
    for round_number in range(args.rounds):
        order = ("raw", "direct", "audit") if round_number % 2 == 0 else ("audit", "direct", "raw")
        for side in order:
            if side == "raw":
                scanned, seconds = raw_scan(parsing, table, args.segments, args.page_size)
            elif side == "direct":
                scanned, seconds = raw_scan(client, table, args.segments, args.page_size)
            else:
                scanned, seconds = audit_once(args.segments, args.page_size, expected)
            rates[side].append(scanned / seconds)
            print(f"  round {round_number + 1} {side:<6} {scanned / seconds:>10,.0f} items/s", flush=True)
    peak = peak_memory(args.segments, args.page_size, expected)
    tables.TableModel.delete_table()
    return tuple(statistics.median(rates[side]) for side in ("raw", "direct", "audit")) + (peak,)


def report(results, args, out=sys.stdout):
    """Print the table of sizes; True when both goals are met."""
    print(
        f"\n{'items':>10}  {'raw /s':>9}  {'direct /s':>9}  {'audit /s':>9}  {'ratio':>6}  {'/direct':>7}  "
        f"{'peak MB':>8}  goal >= {GOAL}",
        file=out,
    )
    met = True
    for size, (raw, direct, audited, peak) in results.items():
        ratio = audited / raw
        met &= ratio >= GOAL
        print(
            f"{size:>10,}  {raw:>9,.0f}  {direct:>9,.0f}  {audited:>9,.0f}  {ratio:>6.2f}  {audited / direct:>7.2f}  "
            f"{peak / 1e6:>8.1f}  {'ok' if ratio >= GOAL else 'SHORT'}",
            file=out,
        )
    peaks = [peak for *_, peak in results.values()]
    flat = max(peaks) <= 1.25 * min(peaks)
    print(
        f"ratio: audit / raw (botocore parses each page); /direct: audit / the same Scan reading items directly.\n"
        f"Peak memory {'flat' if flat else 'NOT flat'} across sizes (largest/smallest {max(peaks) / min(peaks):.2f}); "
        f"{args.segments} segment(s), pages of {args.page_size} items, {args.rounds} round(s), median; "
        f"{os.cpu_count()} CPU(s) shared by DynamoDB Local and the client.",
        file=out,
    )
    return met and flat


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--items", default="100000,1000000", help="table sizes, comma-separated")
    parser.add_argument("--segments", type=int, default=4)
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--page-size", type=int, default=5000)
    parser.add_argument("--endpoint", help="a running DynamoDB Local to use instead of starting one")
    args = parser.parse_args(argv)
    sizes = [int(size) for size in args.items.split(",")]

    from accounts.dynamodb_local import DynamoDBLocal

    print(f"Load average (1, 5, 15 min) at start: {'  '.join(f'{load:.2f}' for load in os.getloadavg())}")
    results = {}
    with DynamoDBLocal() if args.endpoint is None else Running(args.endpoint) as server:
        for number, size in enumerate(sizes):
            results[size] = measure(size, args, server.endpoint_url, warm_up=number == 0)
    report(results, args)
    print(f"Load average (1, 5, 15 min) at end: {'  '.join(f'{load:.2f}' for load in os.getloadavg())}")


if __name__ == "__main__":
    main()
