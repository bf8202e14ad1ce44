"""Benchmark: does asking for a login code take as long for a registered address as for an
unknown one (issue 35, finding 3)?

Run ``python -m tests.benchmarks.code_timing [--requests N] [--mail-delay S]``.

As ``tests/benchmarks/reset_timing.py`` does for the password reset: an in-memory DynamoDB
Local, an SMTP server on loopback that takes ``--mail-delay`` seconds (default 0.15: the
relay of the issue, where the answers' medians were 352 and 159 ms) to accept each mail,
and ``gunicorn project.wsgi`` (two sync workers, rate limits off, each request from a
client address of its own) mailing through it. It
posts the "Email me a code" page (``/accounts/code/``) ``N`` times for registered addresses
and ``N`` times for unknown ones, interleaved, each from a new connection, a pause between
them so that one answer's after-work does not delay the next answer, and compares the
medians of the time to the whole answer. The goal: within 2 ms of each other. The code is
made and mailed once the answer is sent (:mod:`accounts.after_response`); the answer does
the same work for both (one consistent GetItem of the address's lock, the session).
"""

import argparse
import http.client
import itertools
import statistics
import sys
import tempfile
import threading
import time
import urllib.parse
import uuid

from accounts.dynamodb_local import DynamoDBLocal, free_port
from tests.benchmarks import configure_django
from tests.benchmarks.reset_timing import GOAL_MS, SlowSMTPServer, seed
from tests.benchmarks.web import CSRF_SECRET, PASSWORD, start_gunicorn
from tests.benchmarks.web import seed as seed_logins

ASK = "/accounts/code/"
CLIENTS = itertools.count(1)


def post_code_request(port, login, client):
    """Seconds from sending the "Email me a code" form for ``login`` to having read the whole
    answer, from client address number ``client`` (each request leaves a new anonymous
    session, which ``ACCOUNTS_ANONYMOUS_SESSION_LIMIT`` counts per address: one machine
    stands for many, through ``X-Forwarded-For``)."""
    body = urllib.parse.urlencode({"login": login, "csrfmiddlewaretoken": CSRF_SECRET})
    headers = {
        "Content-Type": "application/x-www-form-urlencoded",
        "Cookie": f"csrftoken={CSRF_SECRET}",
        "X-Forwarded-For": f"10.{client // 65536 % 256}.{client // 256 % 256}.{client % 256}",
    }
    connection = http.client.HTTPConnection("127.0.0.1", port, timeout=60)
    try:
        connection.connect()
        started = time.perf_counter()
        connection.request("POST", ASK, body, headers)
        response = connection.getresponse()
        response.read()
        elapsed = time.perf_counter() - started
    finally:
        connection.close()
    if response.status != 302:
        raise SystemExit(f"The code request page answered {response.status} for {login}.")
    return elapsed


def measure(port, registered, unknown, pause):
    """``(registered times, unknown times)``, the requests interleaved one for one."""
    times = {"registered": [], "unknown": []}
    for known, stranger in zip(registered, unknown, strict=True):
        for kind, login in (("registered", known), ("unknown", stranger)):
            times[kind].append(post_code_request(port, login, next(CLIENTS)))
            time.sleep(pause)
    return times["registered"], times["unknown"]


def report(registered, unknown, mails, args, out=sys.stdout):
    """Print the medians and the verdict; returns whether the goal is met."""
    known_ms, stranger_ms = statistics.median(registered) * 1000, statistics.median(unknown) * 1000
    gap = known_ms - stranger_ms
    verdict = "ok" if abs(gap) <= GOAL_MS else "SHORT"
    print(f"\n{'':<12}{'requests':>9}{'median ms':>11}{'p90 ms':>9}", file=out)
    for label, values in (("registered", registered), ("unknown", unknown)):
        p90 = statistics.quantiles(values, n=10)[-1] * 1000 if len(values) > 1 else values[0] * 1000
        print(f"{label:<12}{len(values):>9}{statistics.median(values) * 1000:>11.2f}{p90:>9.2f}", file=out)
    print(f"\nGap of the medians: {gap:+.2f} ms (goal within {GOAL_MS:g} ms): {verdict}", file=out)
    print(
        f"{mails} code mail(s) accepted by the loopback SMTP server ({args.mail_delay * 1000:g} ms each); "
        f"{args.pause * 1000:g} ms between requests; 2 gunicorn sync workers.",
        file=out,
    )
    return verdict == "ok"


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--requests", type=int, default=50, help="requests of each kind (default 50)")
    parser.add_argument("--mail-delay", type=float, default=0.15, help="seconds the SMTP server takes per mail")
    parser.add_argument("--pause", type=float, default=0.3, help="seconds between two requests")
    args = parser.parse_args(argv)

    smtp = SlowSMTPServer(args.mail_delay)
    threading.Thread(target=smtp.serve_forever, daemon=True).start()
    with DynamoDBLocal() as local, tempfile.TemporaryDirectory() as static_root:
        table = f"bench-code-{uuid.uuid4().hex[:8]}"
        configure_django(local.endpoint_url, table)
        from django.contrib.auth.hashers import make_password

        # start_gunicorn waits until the site logs one of the web benchmark's accounts in.
        seed_logins(make_password(PASSWORD))
        registered = seed(args.requests + 5)
        unknown = [f"nobody{n}@bench.example" for n in range(args.requests + 5)]
        port = free_port()
        smtp_url = f"smtp://127.0.0.1:{smtp.server_address[1]}"
        gunicorn = start_gunicorn(
            local.endpoint_url,
            table,
            2,
            static_root,
            port,
            EMAIL_URL=smtp_url,
            ACCOUNTS_SITE_URL="http://bench.example",
            ACCOUNTS_TRUSTED_PROXY_COUNT="1",
        )
        try:
            print(f"gunicorn project.wsgi on port {port}, DynamoDB Local {local.endpoint_url}, SMTP {smtp_url}")
            # Untimed warm-up: both workers import, connect and fill their caches.
            measure(port, registered[-5:], unknown[-5:], args.pause)
            times = measure(port, registered[: args.requests], unknown[: args.requests], args.pause)
            time.sleep(max(1.0, args.mail_delay * 4))
        finally:
            gunicorn.terminate()
            gunicorn.wait()
            smtp.shutdown()
    report(*times, smtp.accepted, args)


if __name__ == "__main__":
    main()
