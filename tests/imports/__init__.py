"""Helpers for the import tests: running ``accounts_import`` and reading its report."""

import io
import json
from dataclasses import dataclass
from pathlib import Path

from django.core.management import call_command
from django.core.management.base import CommandError

# Every hasher the import tests carry hashes of, the site's preferred one first (Argon2,
# as the demo site and production): a login upgrades to it.
SITE_HASHERS = [
    "django.contrib.auth.hashers.Argon2PasswordHasher",
    "django.contrib.auth.hashers.PBKDF2PasswordHasher",
    "django.contrib.auth.hashers.PBKDF2SHA1PasswordHasher",
    "django.contrib.auth.hashers.BCryptSHA256PasswordHasher",
    "django.contrib.auth.hashers.BCryptPasswordHasher",
    "django.contrib.auth.hashers.ScryptPasswordHasher",
    "django.contrib.auth.hashers.MD5PasswordHasher",
]


@dataclass
class ImportRun:
    """What a run of ``accounts_import`` did: its exit status, stdout, stderr, and the
    report's lines (parsed)."""

    status: int
    stdout: str
    stderr: str
    report: list[dict]

    def codes(self) -> dict:
        """``{source_id: [code, ...]}`` of the report."""
        found: dict = {}
        for line in self.report:
            found.setdefault(line["source_id"], []).append(line["code"])
        return found


def run_import(source, *args, report: Path | None = None) -> ImportRun:
    """Run ``accounts_import source *args`` in this process, its report in ``report`` (a
    temporary file beside nothing else when not given)."""
    stdout, stderr = io.StringIO(), io.StringIO()
    report_path = report
    extra = ["--report", str(report_path)] if report_path is not None else []
    status = 0
    try:
        call_command("accounts_import", str(source), *extra, *args, stdout=stdout, stderr=stderr)
    except SystemExit as exit:
        status = int(exit.code or 0)
    except CommandError as error:
        status = error.returncode
        stderr.write(f"CommandError: {error}\n")
    lines = []
    if report_path is not None and report_path.exists():
        lines = [json.loads(line) for line in report_path.read_text().splitlines() if line.strip()]
    return ImportRun(status, stdout.getvalue(), stderr.getvalue(), lines)


def write_jsonl(path: Path, *users: dict | str) -> Path:
    """A JSON-lines file of ``users`` (a string is written as the line it is)."""
    path.write_text("".join((user if isinstance(user, str) else json.dumps(user)) + "\n" for user in users))
    return path
