"""A PostgreSQL server of the test's own: Debian's ``postgresql`` package's binaries, a
cluster made by ``initdb`` in a temporary directory, listening on a free loopback port and
stopped afterwards. As root (CI, this machine) it runs as the ``postgres`` user, as
PostgreSQL refuses to run as root. ``.ci/run`` installs the package; a machine without it
fails the test that asks for a server, saying what to install."""

import glob
import os
import shutil
import socket
import subprocess
import tempfile
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import pytest


def _binary(name: str) -> str:
    found = sorted(glob.glob(f"/usr/lib/postgresql/*/bin/{name}")) or [shutil.which(name) or ""]
    if not found[-1]:
        pytest.fail(f"PostgreSQL's {name} is not installed: apt-get install postgresql (Debian), as .ci/run does.")
    return found[-1]


def _free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


def _run(*command: str) -> None:
    prefix = ["runuser", "-u", "postgres", "--"] if os.geteuid() == 0 else []
    subprocess.run([*prefix, *command], check=True, capture_output=True, timeout=120)


@contextmanager
def postgres_server() -> Iterator[str]:
    """A running PostgreSQL server with an empty database ``source``; yields its URL. Its
    cluster lives in a directory of its own under the system's temporary directory (pytest's
    is closed to the ``postgres`` user), removed afterwards."""
    directory = Path(tempfile.mkdtemp(prefix="accounts-import-postgres-"))
    if os.geteuid() == 0:
        shutil.chown(directory, "postgres", "postgres")
    data, port = directory / "data", _free_port()
    _run(_binary("initdb"), "-D", str(data), "-A", "trust", "-U", "postgres", "--no-sync")
    options = f"-p {port} -k {directory} -c listen_addresses=127.0.0.1 -c fsync=off"
    _run(_binary("pg_ctl"), "-D", str(data), "-o", options, "-w", "-l", str(directory / "log"), "start")
    try:
        _run(_binary("createdb"), "-h", "127.0.0.1", "-p", str(port), "-U", "postgres", "source")
        yield f"postgres://postgres@127.0.0.1:{port}/source"
    finally:
        _run(_binary("pg_ctl"), "-D", str(data), "-m", "immediate", "stop")
        shutil.rmtree(directory, ignore_errors=True)
