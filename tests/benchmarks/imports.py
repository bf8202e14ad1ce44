"""Benchmark: ``accounts_import``'s guarded import beside a raw BatchWriteItem of the same
items, its client's memory at two sizes, the ``--to-export`` path, and each path's cost on AWS.

Run ``make bench`` or ``python -m tests.benchmarks.imports [--users N] [--export-users M]
[--endpoint URL]``.

1. Rate: ``N`` generated users (default 10^4; the goal is stated at 10^5) in a JSON-lines
   file, imported by ``accounts_import`` (both readings of the source, DuckDB, every guard:
   the whole command) into an empty table of DynamoDB Local, in users per second; beside a
   raw, unguarded ``BatchWriteItem`` of the very items the import writes (each user's
   account and locks, built beforehand and not timed), 25 items a request from 4 threads,
   into another empty table of the same DynamoDB Local, in the same run. Goal: the import
   at 0.8 x the raw rate or better.
2. Memory: the import's peak RSS (a process of its own each) at ``N / 10`` and ``N`` users:
   flat, the source being read in a stream and only the conflicts kept.
3. Offline: ``--to-export`` of ``M`` generated users (default 10^5; the goal is stated at
   10^6): its time and peak RSS.
4. Cost per 10^6 users on AWS: the guarded import's write units (2 per KB of each item of
   its transactions, at the on-demand price), the raw write's, and ``import-table``'s price
   for the export's uncompressed size.

The load average is printed at the start and the end: the machine is shared.
"""

import argparse
import gzip
import json
import math
import os
import resource
import subprocess
import sys
import tempfile
import time
import uuid
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

from tests.benchmarks import Running, configure_django

RAW_THREADS = 4
BATCH_WRITE_SIZE = 25
# On demand, US East (since November 2024): dollars per million write request units, and
# import-table's dollars per GB of uncompressed source data.
WRITE_PRICE = 0.625
IMPORT_TABLE_PRICE_PER_GB = 0.15
GOAL_RATIO = 0.8


def write_source(path: Path, count: int) -> Path:
    """``count`` users, all verified and distinct, as a JSON-lines file."""
    with path.open("w") as file:
        for index in range(count):
            user = {
                "id": index + 1,
                "email": f"user{index}@example{index % 97}.com",
                "username": f"user{index}",
                "password": "pbkdf2_sha256$600000$salt$" + "A" * 43 + "=",
                "email_verified": True,
                "date_joined": "2020-01-01T00:00:00+00:00",
                "last_login": "2024-06-01T00:00:00+00:00",
            }
            file.write(json.dumps(user) + "\n")
    return path


def items_of(source: Path) -> list[list[dict]]:
    """Per user, the raw items its import Puts (account, locks), as the import builds them."""
    from accounts.imports import open_source
    from accounts.imports.candidates import build_candidate, providers_by_id

    providers = providers_by_id()
    users = []
    for user in open_source(str(source)).users():
        candidate = build_candidate(user, providers)
        assert not isinstance(candidate, list), candidate
        users.append([action.body["Item"] for action in candidate.plan().actions if action.kind == "Put"])
    return users


def raw_batch_write(users: list[list[dict]], table: str) -> float:
    """Seconds to write every item with BatchWriteItem, 25 a request, from 4 threads."""
    from accounts.tables import dynamodb_client

    items = [item for user in users for item in user]
    requests = [items[start : start + BATCH_WRITE_SIZE] for start in range(0, len(items), BATCH_WRITE_SIZE)]

    def send(chunk: list[dict]) -> None:
        pending = {table: [{"PutRequest": {"Item": item}} for item in chunk]}
        while pending:
            pending = dynamodb_client().batch_write_item(RequestItems=pending).get("UnprocessedItems") or {}

    started = time.monotonic()
    with ThreadPoolExecutor(max_workers=RAW_THREADS) as pool:
        list(pool.map(send, requests))
    return time.monotonic() - started


def child(mode: str, source: Path, endpoint: str, table: str, export: str | None) -> None:
    """Run one import in this process (``mode``: ``import`` or ``export``) and print its
    seconds and peak RSS as JSON."""
    configure_django(endpoint, table)
    from django.core.management import call_command

    args = [str(source), "--report", os.devnull]
    if mode == "export":
        args += ["--to-export", str(export)]
    started = time.monotonic()
    try:
        call_command("accounts_import", *args, stdout=open(os.devnull, "w"), stderr=sys.stderr)  # noqa: SIM115
    except SystemExit as exit:
        if exit.code not in (0, None):
            raise
    seconds = time.monotonic() - started
    print(json.dumps({"seconds": seconds, "peak_rss_mb": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024}))


def run_child(mode: str, source: Path, endpoint: str, export: str | None = None) -> dict:
    """:func:`child` in a process of its own, on a table of its own."""
    table = f"bench-import-{uuid.uuid4().hex[:8]}"
    command = [sys.executable, "-m", "tests.benchmarks.imports", "--child", mode, "--source", str(source)]
    command += ["--endpoint", endpoint, "--table", table] + (["--export", export] if export else [])
    result = subprocess.run(command, capture_output=True, text=True, check=False)
    if result.returncode != 0:
        raise SystemExit(f"The import failed:\n{result.stdout}\n{result.stderr}")
    return json.loads(result.stdout.strip().splitlines()[-1])


def write_units(users: list[list[dict]], transactional: bool) -> float:
    """Write units per user: 1 per KB of each item (2 in a transaction), on average."""
    from accounts.costs import item_size

    per_item = 2 if transactional else 1
    total = sum(per_item * math.ceil(item_size(item) / 1024) for user in users for item in user)
    return total / len(users)


def export_bytes(folder: Path) -> int:
    """Uncompressed bytes of an export's data files (what import-table bills)."""
    total = 0
    for data in (folder / "data").iterdir():
        with gzip.open(data, "rb") as lines:
            total += sum(len(line) for line in lines)
    return total


def load() -> str:
    return "  ".join(f"{value:.2f}" for value in os.getloadavg())


def measure(args: argparse.Namespace, endpoint: str) -> None:
    configure_django(endpoint, f"bench-raw-{uuid.uuid4().hex[:8]}")
    from accounts.tables import TableModel

    with tempfile.TemporaryDirectory(prefix="bench-import-") as directory:
        folder = Path(directory)
        small = write_source(folder / "small.jsonl", max(args.users // 10, 1))
        large = write_source(folder / "large.jsonl", args.users)
        users = items_of(large)
        raw_seconds = raw_batch_write(users, TableModel.Meta.table_name)
        guarded = run_child("import", large, endpoint)
        guarded_small = run_child("import", small, endpoint)
        raw_rate, guarded_rate = args.users / raw_seconds, args.users / guarded["seconds"]
        print(f"Guarded import of {args.users:,} users: {guarded_rate:,.0f} users/s ({guarded['seconds']:.1f} s)")
        print(f"Raw 4-thread BatchWriteItem of the same items: {raw_rate:,.0f} users/s ({raw_seconds:.1f} s)")
        verdict = "meets" if guarded_rate >= GOAL_RATIO * raw_rate else "misses"
        print(f"Ratio: {guarded_rate / raw_rate:.2f} ({verdict} the goal of {GOAL_RATIO})")
        print(
            f"Peak RSS of the import: {guarded_small['peak_rss_mb']:.0f} MB at {args.users // 10:,} users, "
            f"{guarded['peak_rss_mb']:.0f} MB at {args.users:,} users"
        )
        export_source = write_source(folder / "export.jsonl", args.export_users)
        exported = run_child("export", export_source, endpoint, str(folder / "export"))
        [export_folder] = (folder / "export" / "AWSDynamoDB").iterdir()
        size = export_bytes(export_folder) / args.export_users
        print(
            f"--to-export of {args.export_users:,} users: {exported['seconds']:.1f} s "
            f"({args.export_users / exported['seconds']:,.0f} users/s), peak RSS {exported['peak_rss_mb']:.0f} MB; "
            f"{size:,.0f} bytes of export data per user"
        )
        guarded_units, raw_units = write_units(users, True), write_units(users, False)
        gigabytes = size * 1e6 / 2**30
        print("Cost per 10^6 users on AWS (on demand, US East):")
        print(f"  guarded import: {guarded_units:.1f} write units a user, ${guarded_units * WRITE_PRICE:,.2f}")
        print(f"  raw BatchWriteItem (no guard): {raw_units:.1f} write units a user, ${raw_units * WRITE_PRICE:,.2f}")
        print(f"  --to-export + import-table: {gigabytes:.2f} GB, ${gigabytes * IMPORT_TABLE_PRICE_PER_GB:,.2f}")


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--users", type=int, default=10_000, help="users of the rate's run (default 10^4)")
    parser.add_argument("--export-users", type=int, default=100_000, help="users of --to-export (default 10^5)")
    parser.add_argument("--endpoint", help="a running DynamoDB Local to use instead of starting one")
    parser.add_argument("--child", choices=("import", "export"), help=argparse.SUPPRESS)
    parser.add_argument("--source", help=argparse.SUPPRESS)
    parser.add_argument("--table", help=argparse.SUPPRESS)
    parser.add_argument("--export", help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.child:
        return child(args.child, Path(args.source), args.endpoint, args.table, args.export)
    from accounts.dynamodb_local import DynamoDBLocal

    print(f"Load average (1, 5, 15 min) at start: {load()}", flush=True)
    with DynamoDBLocal() if args.endpoint is None else Running(args.endpoint) as server:
        measure(args, server.endpoint_url)
    print(f"Load average (1, 5, 15 min) at end: {load()}")


if __name__ == "__main__":
    main()
