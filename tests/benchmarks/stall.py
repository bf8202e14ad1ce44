"""Figures: seconds to a 503 with DynamoDB Local paused (SIGSTOP), per page, and requests per flow.

Run ``python -m tests.benchmarks.stall [--deadline 5]``. It starts an in-memory DynamoDB
Local, signs up an account through the demo site (Django's test client, the demo's
settings), warms every kind of request once, pauses the DynamoDB Local process with
SIGSTOP, times a logged-in page, a login and a signup, then resumes it (SIGCONT).
"""

import argparse
import os
import signal
import time
import uuid
from pathlib import Path

from tests.benchmarks import configure_django


def wait_until_stopped(pid, seconds=5.0):
    """Return once every thread of process ``pid`` is stopped: a busy JVM's threads take
    the signal one by one, and a thread still running could answer the first request."""
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        states = []
        for task in Path(f"/proc/{pid}/task").iterdir():
            try:
                states.append((task / "stat").read_text().rpartition(")")[2].split()[0])
            except OSError:
                continue
        if states and all(state in ("T", "t") for state in states):
            return
        time.sleep(0.01)
    raise SystemExit(f"DynamoDB Local (pid {pid}) did not stop within {seconds:g} s.")


def timed(send):
    started = time.perf_counter()
    response = send()
    return response, time.perf_counter() - started


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--deadline", type=float, default=5.0, help="ACCOUNTS_REQUEST_DEADLINE (default 5)")
    options = parser.parse_args()

    from project.dynamodb_local import DynamoDBLocal

    server = DynamoDBLocal()
    server.start()
    try:
        configure_django(server.endpoint_url, f"stall-{uuid.uuid4().hex[:8]}")
        from django.conf import settings
        from django.test import Client
        from django.test.utils import setup_test_environment

        from accounts import tables
        from tests.web import PASSWORD, login, signed_up_client, signup_data

        setup_test_environment()
        # Warm the JVM for each kind of request first, without a deadline (a cold DynamoDB
        # Local answers its first request of a kind in seconds; AWS does not).
        settings.ACCOUNTS_REQUEST_DEADLINE = None
        tables.configure()
        client = signed_up_client()
        login(Client(), "ada")
        client.get("/accounts/profile/")
        settings.ACCOUNTS_REQUEST_DEADLINE = options.deadline
        tables.configure()  # the clients take their timeouts from the deadline
        client.get("/")
        fresh = Client()
        data = signup_data(fresh, "grace@example.com", "grace")

        os.kill(server.process.pid, signal.SIGSTOP)
        try:
            wait_until_stopped(server.process.pid)
            rows = [
                ("GET / (logged in)", *timed(lambda: client.get("/"))),
                (
                    "POST /accounts/login/",
                    *timed(lambda: Client().post("/accounts/login/", {"username": "ada", "password": PASSWORD})),
                ),
                ("POST /accounts/signup/", *timed(lambda: fresh.post("/accounts/signup/", data))),
            ]
        finally:
            os.kill(server.process.pid, signal.SIGCONT)
        print(f"DynamoDB Local paused, ACCOUNTS_REQUEST_DEADLINE={options.deadline:g}:")
        for name, response, seconds in rows:
            print(f"  {name:<28} {response.status_code}  {seconds:5.2f} s")
    finally:
        server.stop()


if __name__ == "__main__":
    main()
