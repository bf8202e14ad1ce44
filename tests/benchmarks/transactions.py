"""Benchmark: the engine's create against raw TransactWriteItems of the same four guarded Puts.

Run ``make bench`` (1 s per cell, 11 rounds: about 2 minutes) or
``python -m tests.benchmarks.transactions --quick`` (1 s per cell, 1 round).

It starts one in-memory DynamoDB Local and measures, at 1, 4 and 16 client threads:

- raw: a hand-built TransactWriteItems of the account item plus its email, username and
  username-skeleton locks, each Put guarded (the account by ``attribute_not_exists(PK)``,
  a lock by "absent or expired"): the floor;
- engine: ``transactions.create(store.build_account(...))``, which sends the same request.

Both sides send through their own botocore client, built by the same code with the same
configuration (pool of ``MAX_POOL_CONNECTIONS``), created once and shared by all threads.
Every operation uses a new email and username; the password hash is precomputed, so
hashing is not measured. Cells are interleaved (the side that goes first alternates) and
repeated, and medians are reported, so that background load does not favour one side. CPU
time per transaction, in this process and in DynamoDB Local's, is reported beside the rates:
it shows what the engine adds, whatever the machine's load.
"""

import argparse
import itertools
import os
import statistics
import sys
import threading
import time
import uuid
from dataclasses import dataclass
from datetime import UTC, datetime, timezone

from accounts import store, tables, transactions
from accounts.identifiers import KEY_VERSION, lookalike_key
from tests.benchmarks import Running, configure_django
from tests.support import RequestCounter

THREAD_COUNTS = (1, 4, 16)
GOAL = 0.95
# An Argon2 hash of a throwaway password, stored as is: hashing is not what we measure.
PASSWORD_HASH = (
    "argon2$argon2id$v=19$m=102400,t=2,p=8$Z3o3N1BOWUdpcHpZY3RGVFZGSWtwNw$RdrAhRPjUS5vXW92YbWCy9EXLryVflOkcAHMLu6XT7c"
)
# PynamoDB's UTCDateTimeAttribute format, so raw account items equal the engine's.
TIMESTAMP_FORMAT = "%Y-%m-%dT%H:%M:%S.%f+0000"
_serial = itertools.count()


def unique_values(side):
    """A new (email, username) pair, never used before in this process. Both are already
    normalized (lower-case ASCII, no ``#`` or ``%``), so the raw side may use them as they
    are in its lock keys."""
    number = next(_serial)
    return f"{side}-{number}@bench.example", f"{side}-{number}"


def new_client():
    """A botocore client of its own, built by the same code and config as the engine's."""
    return tables.clients.SharedClient().get()


class RawCreate:
    """The floor: one hand-built TransactWriteItems of the account item and its three locks
    (email, username, username look-alike key)."""

    def __init__(self, client, table_name):
        self.client = client
        self.table_name = table_name

    def request(self, email, username):
        owner = tables.account_pk(uuid.uuid4().hex)
        now = datetime.now(UTC).strftime(TIMESTAMP_FORMAT)
        keys = {
            "EMAIL": f"UNIQ#EMAIL#{email}",
            "HANDLE": f"UNIQ#HANDLE#{username}",
            "HANDLE_SKEL": f"UNIQ#HANDLE_SKEL#{lookalike_key(username)}",
        }
        account = {
            "PK": {"S": owner},
            "SK": {"S": tables.PROFILE_SORT_KEY},
            "created": {"S": now},
            "email": {"S": email},
            "is_active": {"BOOL": True},
            "is_staff": {"BOOL": False},
            "is_superuser": {"BOOL": False},
            # The keys of the locks it holds, recorded with them (what a change releases).
            "lock_keys": {"M": {namespace: {"S": key} for namespace, key in keys.items()}},
            "password": {"S": PASSWORD_HASH},
            "updated": {"S": now},
            "username": {"S": username},
        }
        return {
            "TransactItems": [
                {"Put": self._guarded(account)},
                *({"Put": self._lock_put(key, owner)} for key in keys.values()),
            ],
            "ClientRequestToken": uuid.uuid4().hex,
        }

    def _guarded(self, item):
        return {
            "TableName": self.table_name,
            "Item": item,
            "ConditionExpression": "attribute_not_exists (#0)",
            "ExpressionAttributeNames": {"#0": "PK"},
        }

    def _lock_put(self, key, owner):
        # A lock is free when absent or expired longer ago than the clock-skew margin (an
        # unverified sign-up's; TTL deletes late).
        return {
            "TableName": self.table_name,
            # The version of the Unicode data and folding rules the key was computed with.
            "Item": {"PK": {"S": key}, "SK": {"S": "LOCK"}, "key_version": {"S": KEY_VERSION}, "owner": {"S": owner}},
            "ConditionExpression": "(attribute_not_exists (#0) OR #1 < :0)",
            "ReturnValuesOnConditionCheckFailure": "ALL_OLD",
            "ExpressionAttributeNames": {"#0": "PK", "#1": "expires"},
            "ExpressionAttributeValues": {":0": {"N": str(tables.takeover_cutoff(int(time.time())))}},
        }

    def __call__(self):
        self.client.transact_write_items(**self.request(*unique_values("raw")))


def engine_create():
    """The engine's create of a new account (the request it sends equals RawCreate's)."""
    email, username = unique_values("engine")
    transactions.create(store.build_account(email, username, PASSWORD_HASH))


def server_cpu_seconds(pid):
    """CPU seconds (user + system) used so far by process ``pid``; None without /proc."""
    try:
        with open(f"/proc/{pid}/stat") as stat:
            fields = stat.read().rpartition(")")[2].split()
    except OSError:
        return None
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


@dataclass(frozen=True)
class Cell:
    """One measurement: ``operations`` completed in ``seconds`` of wall time, using
    ``client_cpu`` CPU seconds in this process and ``server_cpu`` in DynamoDB Local's."""

    operations: int
    seconds: float
    client_cpu: float
    server_cpu: float = None

    @property
    def rate(self):
        return self.operations / self.seconds


def measure(operation, threads, *, seconds=None, warmup=0.0, operations_per_thread=None, server_pid=None):
    """Call ``operation`` from ``threads`` threads started together.

    With ``seconds``: the threads run for ``warmup`` seconds, then the operations completed
    in the next ``seconds`` are counted, the threads never pausing in between, so neither
    their start nor their finish is in the measurement. With ``operations_per_thread``:
    each thread makes that many calls, all counted. Any error stops the benchmark.
    """
    if (seconds is None) == (operations_per_thread is None):
        raise ValueError("Give seconds or operations_per_thread.")
    start_line = threading.Barrier(threads + 1)
    counts = [0] * threads
    errors = []
    window = [None, None]  # start and end of the measured seconds

    def worker(index):
        start_line.wait()
        try:
            if seconds is None:
                for _ in range(operations_per_thread):
                    operation()
                    counts[index] += 1
                return
            while True:
                operation()
                finished = time.perf_counter()
                if finished >= window[1]:
                    return
                if finished >= window[0]:
                    counts[index] += 1
        except Exception as error:  # reported by the main thread
            errors.append(error)

    workers = [threading.Thread(target=worker, args=(index,)) for index in range(threads)]
    for thread in workers:
        thread.start()
    started = time.perf_counter()
    if seconds is not None:
        window[:] = [started + warmup, started + warmup + seconds]
    start_line.wait()
    if seconds is not None:
        time.sleep(max(0.0, window[0] - time.perf_counter()))
    server_before = server_cpu_seconds(server_pid) if server_pid else None
    client_before = time.process_time()
    if seconds is not None:
        time.sleep(max(0.0, window[1] - time.perf_counter()))
    else:
        for thread in workers:
            thread.join()
    client_cpu = time.process_time() - client_before
    server_after = server_cpu_seconds(server_pid) if server_before is not None else None
    elapsed = seconds if seconds is not None else time.perf_counter() - started
    for thread in workers:
        thread.join()
    if errors:
        raise errors[0]
    server_cpu = server_after - server_before if server_after is not None else None
    return Cell(sum(counts), elapsed, client_cpu, server_cpu)


def round_trips():
    """HTTP requests per operation, by DynamoDB operation: create, then (with the item in
    hand) change of email, change of username and delete; and a lookup for comparison."""
    counts = {}
    with RequestCounter() as counter:

        def count(name, call):
            counter.reset()
            result = call()
            counts[name] = dict(counter.counts)
            return result

        email, username = unique_values("trips")
        account, _ = count("create", lambda: store.signup(email, username, PASSWORD_HASH))
        count("change email", lambda: store.change_email(account, f"new-{email}"))
        count("change username", lambda: store.change_username(account, f"new-{username}"))
        count("lookup by email", lambda: store.get_by_email(f"new-{email}"))
        count("delete", lambda: store.delete_account(account))
    return counts


def run(*, seconds, rounds, warmup, first_warmup, server_pid=None, out=sys.stdout):
    """Measure every cell ``rounds`` times, interleaved; return {(side, threads): [Cell]}.

    Within a round both sides of a thread count run back to back, the first of them
    alternating, so round ``i`` of raw and of engine saw nearly the same background load.
    """
    sides = {"raw": RawCreate(new_client(), tables.Account.Meta.table_name), "engine": engine_create}
    # DynamoDB Local's JIT needs tens of seconds of traffic before its rate settles (it
    # still climbs after 10 s); the connection pools fill up here too.
    for operation in sides.values():
        measure(operation, max(THREAD_COUNTS), seconds=first_warmup / len(sides))
    cells = {(side, threads): [] for side in sides for threads in THREAD_COUNTS}
    for round_number in range(rounds):
        for position, threads in enumerate(THREAD_COUNTS):
            order = list(sides) if (round_number + position) % 2 == 0 else list(reversed(sides))
            for side in order:
                cell = measure(sides[side], threads, seconds=seconds, warmup=warmup, server_pid=server_pid)
                cells[side, threads].append(cell)
            raw, engine = cells["raw", threads][-1].rate, cells["engine", threads][-1].rate
            print(
                f"  round {round_number + 1}, {threads:>2} threads: raw {raw:6.1f} tx/s, "
                f"engine {engine:6.1f} tx/s, engine/raw {engine / raw:.3f}",
                file=out,
                flush=True,
            )
    return cells


@dataclass(frozen=True)
class Summary:
    """One thread count: median rates; ``ratio``, the median of the per-round engine/raw
    ratios (each round measures both sides back to back, under the same background load);
    ``ratio_of_medians``; and CPU microseconds per transaction over every measured cell
    (client and server, per side)."""

    raw: float
    engine: float
    ratio: float
    ratio_of_medians: float
    cpu: dict


def _cpu_per_transaction(cells):
    operations = sum(cell.operations for cell in cells)
    client = sum(cell.client_cpu for cell in cells) / operations * 1e6
    if any(cell.server_cpu is None for cell in cells):
        return client, None
    return client, sum(cell.server_cpu for cell in cells) / operations * 1e6


def summarize(cells):
    """{threads: Summary} for the cells :func:`run` returned."""
    summaries = {}
    for threads in THREAD_COUNTS:
        raw, engine = cells["raw", threads], cells["engine", threads]
        raw_rate = statistics.median(cell.rate for cell in raw)
        engine_rate = statistics.median(cell.rate for cell in engine)
        summaries[threads] = Summary(
            raw=raw_rate,
            engine=engine_rate,
            ratio=statistics.median(e.rate / r.rate for r, e in zip(raw, engine, strict=True)),
            ratio_of_medians=engine_rate / raw_rate,
            cpu={"raw": _cpu_per_transaction(raw), "engine": _cpu_per_transaction(engine)},
        )
    return summaries


def _microseconds(value):
    return "n/a" if value is None else f"{value:.0f}"


def report(cells, trips, out=sys.stdout):
    """Print the tables and the round trips; True when every ratio meets the goal."""
    summaries = summarize(cells)
    met_everywhere = True
    header = (
        f"{'threads':>7} | {'raw tx/s':>8} | {'engine tx/s':>11} | {'engine/raw':>10} | "
        f"{'of medians':>10} | goal >= {GOAL}"
    )
    print(f"\n{header}\n{'-' * len(header)}", file=out)
    for threads, summary in summaries.items():
        met = summary.ratio >= GOAL
        met_everywhere &= met
        print(
            f"{threads:>7} | {summary.raw:>8.1f} | {summary.engine:>11.1f} | {summary.ratio:>10.3f} | "
            f"{summary.ratio_of_medians:>10.3f} | {'met' if met else 'NOT met'}",
            file=out,
        )
    print(
        "tx/s: median over rounds. engine/raw: median of the per-round ratios (each round runs "
        "both sides back to back); of medians: engine tx/s / raw tx/s as printed.",
        file=out,
    )
    print(f"Goal engine/raw >= {GOAL} at every thread count: {'met' if met_everywhere else 'NOT met'}", file=out)

    header = f"{'threads':>7} | {'raw client':>10} | {'engine client':>13} | {'raw server':>10} | {'engine server':>13}"
    print("\nCPU microseconds per transaction (client: this process; server: DynamoDB Local)", file=out)
    print(f"{header}\n{'-' * len(header)}", file=out)
    for threads, summary in summaries.items():
        (raw_client, raw_server), (engine_client, engine_server) = summary.cpu["raw"], summary.cpu["engine"]
        print(
            f"{threads:>7} | {raw_client:>10.0f} | {engine_client:>13.0f} | {_microseconds(raw_server):>10} | "
            f"{_microseconds(engine_server):>13}",
            file=out,
        )

    print("\nRound trips per operation (HTTP requests, counted at botocore's endpoint):", file=out)
    for name, counts in trips.items():
        detail = ", ".join(f"{operation} {number}" for operation, number in sorted(counts.items()))
        print(f"  {name:<16} {sum(counts.values())}  ({detail})", file=out)
    return met_everywhere


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="1 s per cell and 1 round: a check that it runs")
    parser.add_argument("--seconds", type=float, help="measured seconds per cell (default 1)")
    parser.add_argument("--rounds", type=int, help="rounds of every cell; medians are reported (default 11, quick 1)")
    parser.add_argument("--endpoint", help="a running DynamoDB Local to use (its CPU is then not measured)")
    args = parser.parse_args(argv)
    seconds = args.seconds or 1.0
    rounds = args.rounds or (1 if args.quick else 11)

    from accounts.dynamodb_local import DynamoDBLocal

    began = time.perf_counter()
    print(f"Load average (1, 5, 15 min) at start: {'  '.join(f'{load:.2f}' for load in os.getloadavg())}")
    with DynamoDBLocal() if args.endpoint is None else Running(args.endpoint) as server:
        configure_django(server.endpoint_url, f"bench-accounts-{uuid.uuid4().hex[:8]}")
        print(
            f"DynamoDB Local (in memory) at {server.endpoint_url}; {seconds:g} s per cell, {rounds} round(s), "
            f"threads {', '.join(map(str, THREAD_COUNTS))}; {os.cpu_count()} CPUs",
            flush=True,
        )
        cells = run(
            seconds=seconds,
            server_pid=server.process.pid if server.process else None,
            rounds=rounds,
            warmup=0.25,
            first_warmup=2.0 if args.quick else 16.0,
        )
        trips = round_trips()
    report(cells, trips)
    if args.quick:
        print("\n--quick checks that the benchmark runs; DynamoDB Local is still warming up, so its rates mean little.")
    print(f"\nLoad average (1, 5, 15 min) at end: {'  '.join(f'{load:.2f}' for load in os.getloadavg())}")
    print(f"Total time: {time.perf_counter() - began:.0f} s")


if __name__ == "__main__":
    main()
