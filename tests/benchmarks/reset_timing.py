"""Benchmark: does a password reset request take as long for a registered address as for
an unknown one (issue 26, finding 5)?

Run ``make bench`` or ``python -m tests.benchmarks.reset_timing [--requests N] [--mail-delay S]``.

It starts an in-memory DynamoDB Local, an SMTP server on loopback that takes
``--mail-delay`` seconds (default 0.02: a mail server a network hop away) to accept each
mail, and ``gunicorn project.wsgi`` (the demo site, DEBUG off, two sync workers, rate
limits off: one machine sends everything) mailing through it. Then it posts the reset form
``N`` times for registered addresses (a verified account each, each asked once) and ``N``
times for unknown ones, interleaved, each from a new connection, a pause between them so
that one answer's after-work does not delay the next answer, and compares the medians of
the time to the whole answer. The goal: within 2 ms of each other. The link is made and
mailed once the answer is sent (:mod:`accounts.after_response`); the answer itself does
the same for both (one consistent GetItem of the address's lock, the rate counters).
"""

import argparse
import http.client
import socketserver
import statistics
import sys
import tempfile
import threading
import time
import urllib.parse
import uuid

from accounts.dynamodb_local import DynamoDBLocal, free_port
from tests.benchmarks import configure_django
from tests.benchmarks.web import CSRF_SECRET, PASSWORD, start_gunicorn
from tests.benchmarks.web import seed as seed_logins

GOAL_MS = 2.0
RESET = "/accounts/password/reset/"


class SlowSMTPHandler(socketserver.StreamRequestHandler):
    """Just enough SMTP for Django's backend: every mail accepted after ``server.delay`` seconds."""

    def reply(self, line):
        self.wfile.write(f"{line}\r\n".encode())

    def handle(self):
        self.reply("220 bench ESMTP")
        in_data = False
        for raw in self.rfile:
            line = raw.decode("utf-8", "replace").rstrip("\r\n")
            if in_data:
                if line == ".":
                    in_data = False
                    time.sleep(self.server.delay)
                    self.server.accepted += 1
                    self.reply("250 accepted")
                continue
            verb = line[:4].upper()
            if verb in ("EHLO", "HELO"):
                self.reply("250 bench")
            elif verb == "DATA":
                in_data = True
                self.reply("354 go on")
            elif verb == "QUIT":
                self.reply("221 bye")
                return
            else:
                self.reply("250 ok")


class SlowSMTPServer(socketserver.ThreadingTCPServer):
    daemon_threads = True
    allow_reuse_address = True

    def __init__(self, delay):
        super().__init__(("127.0.0.1", 0), SlowSMTPHandler)
        self.delay = delay
        self.accepted = 0


def post_reset(port, email):
    """Seconds from sending the reset form for ``email`` to having read the whole answer."""
    return timed_form_post(port, RESET, {"email": email})


def timed_form_post(port, path, fields, headers=None):
    """Seconds from posting the form at ``path`` (``fields``, with the CSRF token; more
    ``headers``) on a new connection to having read the whole answer, a redirect."""
    body = urllib.parse.urlencode({**fields, "csrfmiddlewaretoken": CSRF_SECRET})
    headers = {
        "Content-Type": "application/x-www-form-urlencoded",
        "Cookie": f"csrftoken={CSRF_SECRET}",
        **(headers or {}),
    }
    connection = http.client.HTTPConnection("127.0.0.1", port, timeout=60)
    try:
        connection.connect()
        started = time.perf_counter()
        connection.request("POST", path, body, headers)
        response = connection.getresponse()
        response.read()
        elapsed = time.perf_counter() - started
    finally:
        connection.close()
    if response.status != 302:
        raise SystemExit(f"The form at {path} answered {response.status} for {fields}.")
    return elapsed


def seed(count):
    """``count`` verified accounts; returns their addresses."""
    from tests.seeding import new_account, write_accounts

    emails = [f"reset{n}@bench.example" for n in range(count)]
    write_accounts([new_account(email, f"reset{n}") for n, email in enumerate(emails)])
    return emails


def measure(port, registered, unknown, pause, post=post_reset):
    """``(registered times, unknown times)``, the requests interleaved one for one, each
    sent by ``post(port, address)`` (a reset request, by default)."""
    times = {"registered": [], "unknown": []}
    for known, stranger in zip(registered, unknown, strict=True):
        for kind, email in (("registered", known), ("unknown", stranger)):
            times[kind].append(post(port, email))
            time.sleep(pause)
    return times["registered"], times["unknown"]


def report(registered, unknown, mails, args, out=sys.stdout, what="reset"):
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
        f"{mails} {what} mail(s) accepted by the loopback SMTP server ({args.mail_delay * 1000:g} ms each); "
        f"{args.pause * 1000:g} ms between requests; 2 gunicorn sync workers.",
        file=out,
    )
    return verdict == "ok"


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--requests", type=int, default=50, help="requests of each kind (default 50)")
    parser.add_argument("--mail-delay", type=float, default=0.02, help="seconds the SMTP server takes per mail")
    parser.add_argument("--pause", type=float, default=0.05, help="seconds between two requests")
    compare(parser.parse_args(argv))


def compare(args, post=post_reset, what="reset", **extra_env):
    """Start the servers, time ``args.requests`` requests of each kind sent by ``post``
    (after an untimed warm-up), and print the report; ``extra_env``: more of the site's
    environment."""
    smtp = SlowSMTPServer(args.mail_delay)
    threading.Thread(target=smtp.serve_forever, daemon=True).start()
    with DynamoDBLocal() as local, tempfile.TemporaryDirectory() as static_root:
        table = f"bench-{what}-{uuid.uuid4().hex[:8]}"
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
            **extra_env,
        )
        try:
            print(f"gunicorn project.wsgi on port {port}, DynamoDB Local {local.endpoint_url}, SMTP {smtp_url}")
            # Untimed warm-up: both workers import, connect and fill their caches.
            measure(port, registered[-5:], unknown[-5:], args.pause, post)
            times = measure(port, registered[: args.requests], unknown[: args.requests], args.pause, post)
            time.sleep(max(1.0, args.mail_delay * 4))
        finally:
            gunicorn.terminate()
            gunicorn.wait()
            smtp.shutdown()
    report(*times, smtp.accepted, args, what=what)


if __name__ == "__main__":
    main()
