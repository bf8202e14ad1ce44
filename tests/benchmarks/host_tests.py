"""Figures: a host project's own test suite with this app, beside django-allauth on SQLite.

Run ``python -m tests.benchmarks.host_tests [--rounds 3] [--warmup-rounds 1] [--repeat 1]``. It builds, in a temporary
directory, three projects that ``startproject`` made, each with the same four
``@login_required`` views and the same four tests (create a user, ``force_login``, GET a
view), and runs each project's pytest in turn, rounds interleaved:

- ``dynamo-local``: the README's settings and URLs, its test settings pointed at a
  DynamoDB Local that is already running (as ``manage.py accounts_dynamodb_local`` in
  development), tests with ``accounts_table``;
- ``dynamo-moto``: the same with the test settings as the docs give them
  (``ACCOUNTS_ENDPOINT_URL`` empty: moto, in process);
- ``allauth-sqlite``: django-allauth (``ALLAUTH_VERSION``, from PyPI into the temporary
  directory) on startproject's SQLite, tests with pytest-django's ``db``.

After the rounds that are not counted (``--warmup-rounds``: they warm DynamoDB Local's JVM,
as a development server that has answered before; one round of four tests leaves its
requests slower than a server that has been up a while), it prints each suite's wall time (the whole ``pytest``
process) and the median time of one test after the first (setup, call and teardown: the fixture, ``create_user``,
``force_login`` and the request), the ratio of each suite to allauth's and how much longer
a further test takes than allauth's, with the load average before and after (the figures
move with it). The goals: the suite within 1.5 x allauth's, a further test at most 0.03 s
longer than allauth's.
"""

import argparse
import os
import statistics
import subprocess
import sys
import tempfile
import time
import xml.etree.ElementTree as ElementTree
from pathlib import Path

from tests.projects import ROOT, start_readme_project

ALLAUTH_VERSION = "65.22.1"
VIEWS = """
from django.contrib.auth.decorators import login_required
from django.http import HttpResponse


@login_required
def whoami(request):
    return HttpResponse(request.user.get_username())
"""
URLS = """
from myproject.views import whoami

urlpatterns += [path(f"view{number}/", whoami, name=f"view{number}") for number in range(1, 5)]
"""
TESTS = """
import pytest
from django.urls import reverse


@pytest.mark.parametrize("number", [1, 2, 3, 4] * {repeat})
def test_a_login_required_view_answers_its_user({fixture}, client, django_user_model, number):
    user = django_user_model.objects.create_user("ada", "ada@example.com")
    client.force_login(user)
    assert client.get(reverse(f"view{{number}}")).content == b"ada"
"""
ALLAUTH_SETTINGS = """
INSTALLED_APPS += ["allauth", "allauth.account"]
MIDDLEWARE += ["allauth.account.middleware.AccountMiddleware"]
AUTHENTICATION_BACKENDS = [
    "django.contrib.auth.backends.ModelBackend",
    "allauth.account.auth_backends.AuthenticationBackend",
]
"""
ALLAUTH_URLS = """
from django.urls import include

urlpatterns += [path("accounts/", include("allauth.urls"))]
"""
PYTEST_SETTINGS = """
[tool.pytest.ini_options]
DJANGO_SETTINGS_MODULE = "myproject.settings"
"""


def add(path, text):
    path.write_text((path.read_text() if path.exists() else "") + text)


def dynamo_project(directory, endpoint_url, repeat=1):
    """The README's project, its tests replaced by the four view tests (``repeat`` times),
    its test settings (myproject/settings_test.py, moto) pointed at ``endpoint_url`` when
    there is one."""
    start_readme_project(directory, {"PYTHONPATH": str(ROOT), "PATH": ""})
    for readme_test in (directory / "myproject" / "tests").glob("test_*.py"):
        readme_test.unlink()
    add(directory / "myproject" / "settings_test.py", f"\nACCOUNTS_ENDPOINT_URL = {endpoint_url or None!r}\n")
    (directory / "myproject" / "views.py").write_text(VIEWS)
    add(directory / "myproject" / "urls.py", URLS)
    (directory / "myproject" / "tests" / "test_views.py").write_text(
        TESTS.format(fixture="accounts_table", repeat=repeat)
    )
    return directory, {"PYTHONPATH": str(ROOT)}


def allauth_project(directory, site_packages, repeat=1):
    """startproject, django-allauth's settings and URLs, SQLite."""
    environment = {"PYTHONPATH": str(site_packages)}
    directory.mkdir(parents=True)
    subprocess.run([sys.executable, "-m", "django", "startproject", "myproject", str(directory)], check=True)
    add(directory / "myproject" / "settings.py", ALLAUTH_SETTINGS)
    add(directory / "myproject" / "urls.py", ALLAUTH_URLS + URLS)
    (directory / "myproject" / "views.py").write_text(VIEWS)
    (directory / "myproject" / "tests").mkdir()
    (directory / "myproject" / "tests" / "test_views.py").write_text(TESTS.format(fixture="db", repeat=repeat))
    (directory / "pyproject.toml").write_text(PYTEST_SETTINGS)
    return directory, environment


def run_suite(directory, environment, report):
    """``(wall seconds, [seconds of each test])`` of one pytest run of the project."""
    command = [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", f"--junitxml={report}"]
    if "allauth" in str(directory):
        command += ["-p", "no:accounts.testing"]  # the app's plugin is installed here too
    started = time.perf_counter()
    result = subprocess.run(
        command, cwd=directory, env={"PATH": "/usr/bin:/bin", **environment}, capture_output=True, text=True
    )
    wall = time.perf_counter() - started
    if result.returncode != 0:
        raise SystemExit(f"The suite of {directory.name} failed:\n{result.stdout}{result.stderr}")
    cases = ElementTree.parse(report).getroot().iter("testcase")
    return wall, [float(case.get("time")) for case in cases]


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=3, help="runs of each suite, interleaved (default 3)")
    parser.add_argument(
        "--repeat",
        type=int,
        default=1,
        help="each suite runs its four tests this many times (default 1); the first tests of a process "
        "also pay for what Python loads once, so the further tests of a longer suite show the steady cost",
    )
    parser.add_argument(
        "--warmup-rounds", type=int, default=1, help="runs of each suite first, not counted (default 1)"
    )
    parser.add_argument(
        "--endpoint-url",
        help="a DynamoDB Local already running (a development server that has been up a while) "
        "instead of one started for the run",
    )
    options = parser.parse_args()

    from accounts.dynamodb_local import DynamoDBLocal

    load_before = os.getloadavg()
    server = None if options.endpoint_url else DynamoDBLocal()
    if server is not None:
        server.start()
    endpoint_url = options.endpoint_url or server.endpoint_url
    try:
        with tempfile.TemporaryDirectory(prefix="host-tests-") as temporary:
            temporary = Path(temporary)
            site_packages = temporary / "allauth-site-packages"
            subprocess.run(
                [
                    sys.executable,
                    "-m",
                    "pip",
                    "install",
                    "--quiet",
                    "--no-deps",
                    "--target",
                    str(site_packages),
                    f"django-allauth=={ALLAUTH_VERSION}",
                ],
                check=True,
            )
            suites = {
                "dynamo-local": dynamo_project(temporary / "dynamo-local", endpoint_url, options.repeat),
                "dynamo-moto": dynamo_project(temporary / "dynamo-moto", "", options.repeat),
                "allauth-sqlite": allauth_project(temporary / "allauth-sqlite", site_packages, options.repeat),
            }
            walls = {name: [] for name in suites}
            further = {name: [] for name in suites}
            # Rounds first, not counted: a development DynamoDB Local has answered before
            # (a cold JVM takes seconds over its first requests), and the files are cached.
            for counted in [False] * options.warmup_rounds + [True] * options.rounds:
                for name, (directory, environment) in suites.items():
                    wall, tests = run_suite(directory, environment, temporary / f"{name}.xml")
                    if counted:
                        walls[name].append(wall)
                        further[name].extend(tests[1:])
    finally:
        if server is not None:
            server.stop()

    allauth = statistics.median(walls["allauth-sqlite"])
    allauth_further = statistics.median(further["allauth-sqlite"])
    print(
        f"{f'suite ({4 * options.repeat} tests)':<16} {'wall s':>7} {'x allauth':>10} {'further test s':>15} {'+ allauth s':>12}"
        f"   (medians of {options.rounds} rounds after {options.warmup_rounds} not counted)"
    )
    for name in suites:
        wall = statistics.median(walls[name])
        test = statistics.median(further[name])
        print(f"{name:<16} {wall:>7.2f} {wall / allauth:>10.2f} {test:>15.3f} {test - allauth_further:>12.3f}")
    print("goals: suite <= 1.5 x allauth-sqlite, a further test <= allauth-sqlite's + 0.03 s")
    load_after = os.getloadavg()
    print(
        f"load average (1, 5, 15 min): before {load_before[0]:.2f} {load_before[1]:.2f} {load_before[2]:.2f}, "
        f"after {load_after[0]:.2f} {load_after[1]:.2f} {load_after[2]:.2f}"
    )


if __name__ == "__main__":
    main()
