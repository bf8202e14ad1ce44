"""Benchmark: the lock audit's rate and peak memory at two table sizes, beside a raw
parallel Scan of the same table in the same run; then its join alone, on generated rows.

Run ``python -m tests.benchmarks.audit`` (``make bench``: 10^4 and 10^5 items, then the join
alone on 10^6 rows, a few minutes) or ``--large`` (``make bench LARGE=1``: 10^5 and 10^6
items, the join on 10^7 rows, about an hour); ``--items 100000,1000000 --segments 4
--rounds 3`` chooses (``--items ""``: the join alone). For each size it starts
from a new table on one in-memory DynamoDB Local, loads it fast (parallel BatchWriteItem of
the items the engine writes: each account and its three locks, four items), then alternates
round after round:

- raw: a consistent parallel Scan of every item with ``--segments`` segments, each page
  parsed by botocore and dropped, as any boto3 code reads a table: the floor;
- direct: the same Scan through the app's own client, which reads the items of an answer
  straight from the wire (:mod:`accounts.answers`), as the audit does;
- audit: :func:`accounts.audit.run_audit` with as many segments (each page's items turned
  into rows in Parquet files, then one DuckDB query over them, then the candidates read
  again: none on the benchmark's consistent table);

and reports items per second (median) and the ratios audit / raw (goal >= 1.0) and audit /
direct (goal >= 0.8), then the audit's memory at each size (goal: flat, within 1.1 x): one
more audit in a process of its own, whose peak resident set size (:func:`peak_rss`:
Python, botocore, pyarrow and DuckDB's own allocations alike) is reported, beside its peak
before the audit began (Django, the app and the libraries loaded).

``--join-rows N`` (``make bench``: 10^6; ``--large``: 10^7) then times the join alone: N rows of held keys,
locks and items generated straight into Parquet files (an account's three keys, its three
locks, the account; one lock in 100,000 missing), ``findings.sql`` run over them in a
process of its own, its seconds and the process's peak resident memory (DuckDB capped by
``--memory-limit``, default 6GB), and both extrapolated to 4 x 10^8 rows (10^8 accounts).

Pages are 5,000 items (``--page-size``; the audit's own default is 1,000): DynamoDB Local
answers a Scan page in a time that grows with the page's position in the table (measured:
0.2 s for 1,000 items at the start of 200,000, 0.9 s at the end), so a whole Scan of it is
quadratic and fewer, larger pages matter; AWS's Scan pages do not slow down so.
"""

import argparse
import os
import resource
import statistics
import subprocess
import sys
import time
import uuid
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

from tests.benchmarks import Running, configure_django

GOAL = 1.0
DIRECT_GOAL = 0.8
FLAT = 1.1
EXTRAPOLATED_ROWS = 4 * 10**8
SMALL = {"items": "10000,100000", "join_rows": 10**6}
LARGE = {"items": "100000,1000000", "join_rows": 10**7}
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


def peak_rss():
    """The peak resident set size of this process so far, in bytes: Linux's ``VmHWM``, the
    high-water mark of this process's own memory. Not ``ru_maxrss`` there: Linux carries it
    over from the parent that forked the process, so a child of the benchmark, which holds
    a whole table's items, would report the parent's peak. Elsewhere (macOS: bytes),
    ``ru_maxrss``."""
    status = Path("/proc/self/status")
    if status.exists():
        [line] = [line for line in status.read_text().splitlines() if line.startswith("VmHWM:")]
        return int(line.split()[1]) * 1024
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss


def memory_alone(endpoint_url, table, segments, page_size, expected):
    """In a process of its own: one audit of ``table``, and the process's peak resident set
    size before it (Django, the app, botocore, pyarrow and DuckDB loaded) and after it,
    printed as one line for :func:`peak_memory`."""
    configure_django(endpoint_url, table)
    import duckdb  # noqa: F401  (what the audit loads, loaded before the baseline)
    import pyarrow.parquet  # noqa: F401

    before = peak_rss()
    audit_once(segments, page_size, expected)
    print(f"MEMORY {before} {peak_rss()}")


def peak_memory(endpoint_url, table, args, expected):
    """``(before, peak)``: the peak resident set size, in bytes, of a process about to audit
    ``table`` (its libraries loaded), and after the audit."""
    result = subprocess.run(
        [
            *(sys.executable, "-m", "tests.benchmarks.audit", "--memory-alone", table, "--endpoint", endpoint_url),
            *("--segments", str(args.segments), "--page-size", str(args.page_size), "--expected", str(expected)),
        ],
        capture_output=True,
        text=True,
        check=True,
    )
    line = next(line for line in result.stdout.splitlines() if line.startswith("MEMORY "))
    before, peak = map(int, line.split()[1:])
    return before, peak


def measure(size, args, endpoint_url, warm_up):
    """One size on a table of its own: ``(raw items/s, direct items/s, audit items/s, peak bytes)``."""
    from accounts import tables

    table = f"bench-audit-{uuid.uuid4().hex[:8]}"
    configure_django(endpoint_url, table)
    client = tables.clients.SharedClient(attempts=3).get()
    parsing = botocore_parsing(tables.clients.SharedClient(attempts=3).get())
    accounts = size // 4
    began = time.perf_counter()
    items = load(client, table, accounts, "bench")
    print(
        f"\n{items:,} items ({accounts:,} accounts and their 3 locks) loaded in {time.perf_counter() - began:.0f} s",
        flush=True,
    )
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
    memory = peak_memory(endpoint_url, table, args, expected)
    tables.TableModel.delete_table()
    return tuple(statistics.median(rates[side]) for side in ("raw", "direct", "audit")) + (memory,)


def report(results, args, out=sys.stdout):
    """Print the table of sizes; True when both goals are met."""
    print(
        f"\n{'items':>10}  {'raw /s':>9}  {'direct /s':>9}  {'audit /s':>9}  {'ratio':>6}  {'/direct':>7}  "
        f"{'RSS MB':>7}  {'peak MB':>8}  goal >= {GOAL}, /direct >= {DIRECT_GOAL}",
        file=out,
    )
    met = True
    for size, (raw, direct, audited, (before, peak)) in results.items():
        ratio = audited / raw
        ok = ratio >= GOAL and audited / direct >= DIRECT_GOAL
        met &= ok
        print(
            f"{size:>10,}  {raw:>9,.0f}  {direct:>9,.0f}  {audited:>9,.0f}  {ratio:>6.2f}  {audited / direct:>7.2f}  "
            f"{before / 1e6:>7.1f}  {peak / 1e6:>8.1f}  {'ok' if ok else 'SHORT'}",
            file=out,
        )
    peaks = [peak for *_, (_, peak) in results.values()]
    flat = max(peaks) <= FLAT * min(peaks)
    print(
        f"ratio: audit / raw (botocore parses each page); /direct: audit / the same Scan reading items directly.\n"
        f"RSS MB: the peak resident set size of a process about to audit (Django, botocore, pyarrow, DuckDB "
        f"loaded); peak MB: its peak after the audit (DuckDB's own memory included).\n"
        f"Peak memory {'flat' if flat else 'NOT flat'} across sizes (largest/smallest {max(peaks) / min(peaks):.2f}); "
        f"{args.segments} segment(s), pages of {args.page_size} items, {args.rounds} round(s), median; "
        f"{os.cpu_count()} CPU(s) shared by DynamoDB Local and the client.",
        file=out,
    )
    return met and flat


def generate_rows(directory, rows):
    """Write about ``rows`` rows of a consistent table of accounts into the audit's Parquet
    layout (:mod:`accounts.audit.rows`), with one lock in 100,000 missing: DuckDB writes
    them, so nothing of them passes through Python. Returns the accounts' count."""
    import duckdb

    accounts = rows // 7  # three held keys, three locks, the account
    connection = duckdb.connect()
    numbers = f"SELECT range AS n FROM range({accounts})"
    keys = (
        f"SELECT n, namespace, 'UNIQ#' || namespace || '#user' || n AS lock_key, 'ACCT#' || n AS pk "
        f"FROM ({numbers}), (SELECT unnest(['EMAIL', 'HANDLE', 'HANDLE_SKEL']) AS namespace)"
    )
    tables = {
        "held": f"SELECT lock_key, namespace, pk AS holder, true AS recorded FROM ({keys})",
        "locks": f"SELECT lock_key, namespace, pk AS owner, false AS damaged, true AS declared FROM ({keys}) "
        f"WHERE n % 100000 <> 7 OR namespace <> 'EMAIL'",
        "items": f"SELECT 'ACCT#' || n AS pk, false AS damaged, false AS factors FROM ({numbers})",
    }
    for table, query in tables.items():
        folder = directory / table
        folder.mkdir(parents=True)
        connection.execute(f"COPY ({query}) TO '{folder}/generated.parquet' (FORMAT parquet)")
    connection.close()
    return accounts


def join_only(directory, memory_limit):
    """In a process of its own: the join over the rows in ``directory``, its seconds and
    the process's peak resident memory, printed as one line for :func:`join_alone`."""
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "tests.settings")
    import django
    from django.conf import settings

    django.setup()
    settings.ACCOUNTS_AUDIT_MEMORY_LIMIT = memory_limit
    from accounts.audit.joining import candidates

    began = time.perf_counter()
    found = sum(1 for _ in candidates(Path(directory)))
    seconds = time.perf_counter() - began
    print(f"JOIN {found} {seconds:.3f} {peak_rss()}")


def join_alone(rows, memory_limit, out=sys.stdout):
    """Time the join alone on ``rows`` generated rows and extrapolate to 4 x 10^8."""
    import tempfile

    with tempfile.TemporaryDirectory(prefix="bench-join-") as directory:
        began = time.perf_counter()
        accounts = generate_rows(Path(directory), rows)
        generated = time.perf_counter() - began
        result = subprocess.run(
            [sys.executable, "-m", "tests.benchmarks.audit", "--join-only", directory, "--memory-limit", memory_limit],
            capture_output=True,
            text=True,
            check=True,
        )
    line = next(line for line in result.stdout.splitlines() if line.startswith("JOIN "))
    found, seconds, peak = line.split()[1:]
    found, seconds, peak = int(found), float(seconds), int(peak)
    total = accounts * 7
    factor = EXTRAPOLATED_ROWS / total
    print(
        f"\nThe join alone: {total:,} rows ({accounts:,} accounts; generated in {generated:.0f} s), "
        f"{found:,} candidate(s), {seconds:.2f} s, peak resident memory {peak / 1e9:.2f} GB "
        f"(DuckDB's memory limit {memory_limit}).\n"
        f"At {EXTRAPOLATED_ROWS:,} rows ({factor:.0f} x, linear): about {seconds * factor / 60:.0f} minutes; "
        f"memory stays under the limit (DuckDB spills to disk past it).",
        file=out,
        flush=True,
    )


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--items", help=f"table sizes, comma-separated (default {SMALL['items']})")
    parser.add_argument(
        "--large",
        action="store_true",
        help=f"the large sizes: --items {LARGE['items']} --join-rows {LARGE['join_rows']} (about an hour)",
    )
    parser.add_argument("--segments", type=int, default=4)
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--page-size", type=int, default=5000)
    parser.add_argument("--endpoint", help="a running DynamoDB Local to use instead of starting one")
    parser.add_argument(
        "--join-rows", type=int, help=f"rows the join alone is timed on (default {SMALL['join_rows']}; 0: none)"
    )
    parser.add_argument("--memory-limit", default="6GB", help="DuckDB's memory limit for the join alone")
    parser.add_argument("--join-only", metavar="DIRECTORY", help=argparse.SUPPRESS)
    parser.add_argument("--memory-alone", metavar="TABLE", help=argparse.SUPPRESS)
    parser.add_argument("--expected", type=int, help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.join_only:
        return join_only(args.join_only, args.memory_limit)
    if args.memory_alone:
        return memory_alone(args.endpoint, args.memory_alone, args.segments, args.page_size, args.expected)
    defaults = LARGE if args.large else SMALL
    items = defaults["items"] if args.items is None else args.items
    args.join_rows = defaults["join_rows"] if args.join_rows is None else args.join_rows
    sizes = [int(size) for size in items.split(",")] if items else []

    from accounts.dynamodb_local import DynamoDBLocal

    print(f"Load average (1, 5, 15 min) at start: {'  '.join(f'{load:.2f}' for load in os.getloadavg())}")
    results = {}
    if sizes:
        with DynamoDBLocal() if args.endpoint is None else Running(args.endpoint) as server:
            for number, size in enumerate(sizes):
                results[size] = measure(size, args, server.endpoint_url, warm_up=number == 0)
        report(results, args)
    if args.join_rows:
        join_alone(args.join_rows, args.memory_limit)
    print(f"Load average (1, 5, 15 min) at end: {'  '.join(f'{load:.2f}' for load in os.getloadavg())}")


if __name__ == "__main__":
    main()
