"""Benchmark: logins and sign-ups per second through gunicorn, beside the password hasher's
own verifications and hashes per second, measured in the same run.

Run ``make bench`` or ``python -m tests.benchmarks.web [--seconds S] [--rounds R]
[--workers W] [--processes P]``.

It starts an in-memory DynamoDB Local and ``gunicorn project.wsgi`` (the demo site with
DEBUG off, ``W`` sync workers, default two per CPU so one hashes while another waits for
DynamoDB), then alternates, round after round:

- hasher: ``P`` processes (default one per CPU: all the machine can hash) running the
  site's password hasher (Argon2) alone, verifying (what a login must do) or hashing (what
  a sign-up must do) as fast as they can;
- web: ``2 W`` client threads posting the login form (an existing account, its right
  password) or the sign-up form (a new email and username each time), counting the
  redirects that mean success.

The goal is web >= 0.85 x hasher: the web stack, sessions and DynamoDB add at most 15 % to
the work that must be done anyway. The site runs with rate limits off (one machine posts
everything, from one address) and its mails going nowhere (``EMAIL_URL=dummymail://``). CPU seconds per operation of the gunicorn workers,
DynamoDB Local and this client show where the rest goes.
"""

import argparse
import http.client
import itertools
import multiprocessing
import os
import statistics
import subprocess
import sys
import tempfile
import threading
import time
import urllib.parse
import uuid
from pathlib import Path

from accounts.dynamodb_local import DynamoDBLocal, free_port
from tests.benchmarks import configure_django
from tests.benchmarks.transactions import server_cpu_seconds

ROOT = Path(__file__).resolve().parent.parent.parent
GOAL = 0.85
PASSWORD = "Tangerine-Sky-Runner-7"
ACCOUNTS = 64
# Django accepts the unmasked CSRF secret as the form's token: each request is a new
# visitor that needs no page load first.
CSRF_SECRET = "b" * 32
_serial = itertools.count()


def hasher_loop(kind, encoded, seconds, results):
    """One process: verify (or hash) the password for ``seconds``; puts the count."""
    from django.contrib.auth.hashers import get_hasher

    hasher = get_hasher()
    count, deadline, cpu_before = 0, time.monotonic() + seconds, time.process_time()
    while time.monotonic() < deadline:
        if kind == "verify":
            hasher.verify(PASSWORD, encoded)
        else:
            hasher.encode(PASSWORD, hasher.salt())
        count += 1
    results.put((count, time.process_time() - cpu_before))


def hasher_rate(kind, encoded, processes, seconds):
    """``(operations per second, CPU seconds per operation)`` of ``processes`` hasher processes."""
    context = multiprocessing.get_context("fork")
    results = context.Queue()
    workers = [context.Process(target=hasher_loop, args=(kind, encoded, seconds, results)) for _ in range(processes)]
    started = time.monotonic()
    for worker in workers:
        worker.start()
    counts, cpu = zip(*(results.get() for _ in workers), strict=True)
    elapsed = time.monotonic() - started
    for worker in workers:
        worker.join()
    return sum(counts) / elapsed, sum(cpu) / max(sum(counts), 1)


def login_body(number):
    return {"username": f"bench{number % ACCOUNTS}", "password": PASSWORD}


def signup_body(number):
    name = f"web{os.getpid()}x{number}"
    return {"email": f"{name}@bench.example", "username": name, "password1": PASSWORD, "password2": PASSWORD}


def post(port, path, fields):
    """POST a form as a new visitor; the HTTP status."""
    body = urllib.parse.urlencode({**fields, "csrfmiddlewaretoken": CSRF_SECRET})
    headers = {"Content-Type": "application/x-www-form-urlencoded", "Cookie": f"csrftoken={CSRF_SECRET}"}
    connection = http.client.HTTPConnection("127.0.0.1", port, timeout=60)
    try:
        connection.request("POST", path, body, headers)
        response = connection.getresponse()
        response.read()
        return response.status
    finally:
        connection.close()


class Server:
    """gunicorn and DynamoDB Local processes, and their CPU seconds so far."""

    def __init__(self, gunicorn, dynamodb_local):
        self.gunicorn = gunicorn
        self.dynamodb_local = dynamodb_local

    def worker_pids(self):
        pids = []
        for entry in Path("/proc").iterdir():
            if entry.name.isdigit():
                try:
                    fields = (entry / "stat").read_text().rpartition(")")[2].split()
                except OSError:
                    continue
                if int(fields[1]) == self.gunicorn.pid:
                    pids.append(int(entry.name))
        return pids

    def cpu(self):
        workers = sum(server_cpu_seconds(pid) or 0 for pid in self.worker_pids())
        return workers, server_cpu_seconds(self.dynamodb_local.process.pid) or 0


def web_rate(server, port, path, body, threads, seconds):
    """Successful posts per second, the failures, and CPU seconds per success by process."""
    deadline = time.monotonic() + seconds
    counts, failures = [0] * threads, []

    def client(index):
        while time.monotonic() < deadline:
            status = post(port, path, body(next(_serial)))
            if status == 302:
                counts[index] += 1
            else:
                failures.append(status)

    workers_before, local_before = server.cpu()
    client_before = time.process_time()
    started = time.monotonic()
    pool = [threading.Thread(target=client, args=(index,)) for index in range(threads)]
    for thread in pool:
        thread.start()
    for thread in pool:
        thread.join()
    elapsed = time.monotonic() - started
    done = sum(counts) or 1
    workers_after, local_after = server.cpu()
    cpu = {
        "gunicorn workers": (workers_after - workers_before) / done,
        "DynamoDB Local": (local_after - local_before) / done,
        "client": (time.process_time() - client_before) / done,
    }
    return sum(counts) / elapsed, failures, cpu


def start_gunicorn(endpoint_url, table, workers, static_root, port, **extra_env):
    """``gunicorn project.wsgi`` on ``port``, once it logs someone in; ``extra_env``
    replaces the environment given below (another ``EMAIL_URL``, say)."""
    env = {
        **os.environ,
        "DJANGO_SETTINGS_MODULE": "project.settings",
        "DJANGO_DEBUG": "false",
        "DJANGO_HTTPS": "false",
        "DJANGO_SECRET_KEY": uuid.uuid4().hex * 2,
        "DJANGO_STATIC_ROOT": str(static_root),
        "DYNAMODB_ENDPOINT_URL": endpoint_url,
        "ACCOUNTS_TABLE_NAME": table,
        # A load test from one machine: every post comes from one address (README).
        "ACCOUNTS_RATE_LIMITS": "off",
        # Verification mails go nowhere: printing thousands of them is not what we measure.
        "EMAIL_URL": "dummymail://",
        **extra_env,
    }
    manage = [sys.executable, str(ROOT / "manage.py"), "collectstatic", "--noinput", "-v", "0"]
    subprocess.run(manage, cwd=ROOT, env=env, check=True)
    command = [
        sys.executable,
        "-m",
        "gunicorn",
        "project.wsgi",
        "--bind",
        f"127.0.0.1:{port}",
        "--workers",
        str(workers),
    ]
    process = subprocess.Popen(command, cwd=ROOT, env=env, stderr=subprocess.DEVNULL)
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        try:
            if post(port, "/accounts/login/", login_body(0)) == 302:
                return process
        except OSError:
            time.sleep(0.2)
    process.terminate()
    raise SystemExit("gunicorn did not log anyone in within 60 s.")


def seed(encoded):
    """``ACCOUNTS`` accounts ``bench<n>`` sharing one password hash."""
    from tests.seeding import new_account, write_accounts

    write_accounts([new_account(f"bench{n}@bench.example", f"bench{n}", password=encoded) for n in range(ACCOUNTS)])


def measure(server, port, encoded, workers, processes, seconds, rounds):
    """Medians per cell over ``rounds`` interleaved rounds, plus the CPU and failures seen."""
    cells = {"verify": [], "login": [], "hash": [], "signup": []}
    cpu, failures = {"login": [], "signup": [], "verify": [], "hash": []}, []
    for round_number in range(rounds):
        order = ("hasher", "web") if round_number % 2 == 0 else ("web", "hasher")
        for side in order:
            if side == "hasher":
                for kind in ("verify", "hash"):
                    rate, used = hasher_rate(kind, encoded, processes, seconds)
                    cells[kind].append(rate)
                    cpu[kind].append(used)
            else:
                for name, path, body in (
                    ("login", "/accounts/login/", login_body),
                    ("signup", "/accounts/signup/", signup_body),
                ):
                    rate, failed, used = web_rate(server, port, path, body, 2 * workers, seconds)
                    cells[name].append(rate)
                    cpu[name].append(used)
                    failures.extend(failed)
    medians = {name: statistics.median(values) for name, values in cells.items()}
    return medians, cpu, failures


def report(medians, cpu, failures, workers, processes, seconds, rounds, out=sys.stdout):
    print(f"\n{'':<8}{'web /s':>9}{'hasher /s':>11}{'ratio':>8}  goal >= {GOAL}", file=out)
    verdicts = []
    for web, hasher, label in (("login", "verify", "logins"), ("signup", "hash", "sign-ups")):
        ratio = medians[web] / medians[hasher]
        verdicts.append(ratio >= GOAL)
        mark = "ok" if ratio >= GOAL else "SHORT"
        print(f"{label:<8}{medians[web]:>9.2f}{medians[hasher]:>11.2f}{ratio:>8.2f}  {mark}", file=out)
    print("\nCPU ms per operation (median over rounds):", file=out)
    for web, hasher in (("login", "verify"), ("signup", "hash")):
        parts = {name: statistics.median(used[name] for used in cpu[web]) * 1000 for name in cpu[web][0]}
        alone = statistics.median(cpu[hasher]) * 1000
        print(f"  {web:<7}" + ", ".join(f"{name} {value:.1f}" for name, value in parts.items()), file=out)
        print(f"  {'':<7}the hasher alone: {alone:.1f} per {hasher}", file=out)
    if failures:
        print(f"\n{len(failures)} post(s) failed, statuses {sorted(set(failures))}", file=out)
    print(
        f"\n{rounds} round(s) of {seconds:g} s per cell, median; {workers} gunicorn sync worker(s) and "
        f"{processes} hasher process(es), {2 * workers} client threads; {os.cpu_count()} CPU(s) shared "
        "with DynamoDB Local and the client.",
        file=out,
    )
    return all(verdicts)


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seconds", type=float, default=5)
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--workers", type=int, default=2 * os.cpu_count())
    parser.add_argument("--processes", type=int, default=os.cpu_count())
    args = parser.parse_args(argv)

    with DynamoDBLocal() as local, tempfile.TemporaryDirectory() as static_root:
        table = f"bench-web-{uuid.uuid4().hex[:8]}"
        configure_django(local.endpoint_url, table)
        from django.contrib.auth.hashers import make_password

        encoded = make_password(PASSWORD)
        seed(encoded)
        port = free_port()
        gunicorn = start_gunicorn(local.endpoint_url, table, args.workers, static_root, port)
        try:
            print(f"gunicorn project.wsgi on port {port} ({args.workers} workers), DynamoDB Local {local.endpoint_url}")
            print(f"hasher: {encoded.split('$')[0]} ({encoded.rsplit('$', 2)[0]})")
            # Untimed warm-up: every worker imports, connects and fills its caches.
            web_rate(Server(gunicorn, local), port, "/accounts/login/", login_body, 2 * args.workers, 2)
            server = Server(gunicorn, local)
            medians, cpu, failures = measure(
                server, port, encoded, args.workers, args.processes, args.seconds, args.rounds
            )
        finally:
            gunicorn.terminate()
            gunicorn.wait()
        report(medians, cpu, failures, args.workers, args.processes, args.seconds, args.rounds)


if __name__ == "__main__":
    main()
