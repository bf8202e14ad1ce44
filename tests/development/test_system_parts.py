"""``make test`` says first what the machine lacks (``.ci/system-parts``): every missing
system part at once, each with the package that brings it, before anything is installed."""

import os
import shutil
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
# What the check itself runs, and make: a machine with these and Python, nothing else.
BASE_TOOLS = ("bash", "sed", "awk", "head", "grep", "id", "paste", "make", "env")


def bare_path(tmp_path):
    """A PATH holding only :data:`BASE_TOOLS` and ``python3`` (this interpreter)."""
    directory = tmp_path / "bin"
    directory.mkdir()
    for tool in BASE_TOOLS:
        (directory / tool).symlink_to(shutil.which(tool))
    (directory / "python3").symlink_to(sys.executable)
    return str(directory)


def run(command, path, **env):
    return subprocess.run(
        command,
        cwd=ROOT,
        env={**os.environ, "PATH": path, **env},
        capture_output=True,
        text=True,
        timeout=120,
    )


def test_a_machine_with_only_python_hears_of_every_missing_part_and_the_command_that_installs_it(tmp_path):
    result = run([".ci/system-parts"], bare_path(tmp_path), CHROMIUM=str(tmp_path / "no-chromium"))

    assert result.returncode == 1
    for part in (
        "Java 17 or newer",
        "npm and Node.js",
        f"Chromium at {tmp_path / 'no-chromium'}",
        "Spin",
        "a C compiler (gcc)",
        "GNU gettext",
    ):
        assert f"  - {part}" in result.stdout, result.stdout
    assert "sudo apt-get install openjdk-17-jre-headless npm chromium spin gcc gettext\n" in result.stdout


def test_make_test_says_what_is_missing_before_it_installs_or_runs_anything(tmp_path):
    result = run(["make", "--no-print-directory", "test"], bare_path(tmp_path), CHROMIUM=str(tmp_path / "none"))

    assert result.returncode != 0
    assert result.stdout.startswith("make test needs these system parts, missing here:\n"), result.stdout
    assert "-m pytest" not in result.stdout + result.stderr
    assert "pip install" not in result.stdout + result.stderr


def test_this_machine_has_every_part():
    result = run([".ci/system-parts"], os.environ["PATH"])

    assert (result.returncode, result.stdout) == (0, "")


def test_an_old_java_is_named_as_too_old(tmp_path):
    path = bare_path(tmp_path)
    java = Path(path) / "java"
    java.write_text("#!/bin/sh\necho 'java version \"1.8.0_402\"' >&2\n")
    java.chmod(0o755)

    result = run([".ci/system-parts"], path)

    assert "  - Java 17 or newer" in result.stdout


def test_as_root_with_apt_get_it_installs_what_is_missing_first(tmp_path):
    path = bare_path(tmp_path)
    calls = tmp_path / "apt-get.calls"
    for name, script in {
        "apt-get": f'#!/bin/sh\necho "$*" >> {calls}\n',  # records, installs nothing
        "id": "#!/bin/sh\necho 0\n",
    }.items():
        (Path(path) / name).unlink(missing_ok=True)
        (Path(path) / name).write_text(script)
        (Path(path) / name).chmod(0o755)

    result = run([".ci/system-parts", "--install"], path, CHROMIUM=str(tmp_path / "no-chromium"))

    assert calls.read_text().splitlines() == [
        "update -qq",
        "install -y -qq --no-install-recommends openjdk-17-jre-headless npm chromium spin gcc gettext",
    ]
    assert result.stdout.startswith("Installing the system packages make test needs: openjdk-17-jre-headless npm")
    # Checked again after: what is still missing is named.
    assert result.returncode == 1 and "  - Spin" in result.stdout
