"""A new project following only the README: ``django-admin startproject myproject``, then
every README block headed ``# myproject/<file>`` (settings, URLs, the phone field and its
adapter, the Player model, the tests, production settings), with the app installed from a
wheel of this tree. Its own commands, its own pytest run and gunicorn must work as the README
says, under the app's defaults (mandatory verification, default limits and unique fields).

The only change the test makes: the README's DynamoDB Local endpoint (port 8001) becomes
this test run's.
"""

import os
import re
import signal
import socket
import subprocess
import sys
import time
import urllib.error
import urllib.parse
import urllib.request
from dataclasses import dataclass
from pathlib import Path

import pytest

from tests.projects import DOCS, build_wheel, start_readme_project
from tests.web import PASSWORD

pytestmark = pytest.mark.dynamodb_local

README_ENDPOINT = "http://127.0.0.1:8001"
# The README's own tests: myproject/tests/test_accounts.py and test_players.py.
README_TESTS = 8
FORGOTTEN_FIXTURE = """
from django.contrib.auth import get_user_model


def test_that_forgets_the_accounts_table_fixture():
    get_user_model().objects.create_user("forgetful", "forgetful@example.com", "a password")
"""


@dataclass
class Project:
    directory: Path
    env: dict

    def run(self, *args, env=None, timeout=300):
        """``(exit status, output)`` of ``python *args`` in the project."""
        result = subprocess.run(
            [sys.executable, *args],
            cwd=self.directory,
            env={**self.env, **(env or {})},
            capture_output=True,
            text=True,
            timeout=timeout,
        )
        return result.returncode, result.stdout + result.stderr

    def manage(self, *args, env=None):
        return self.run("manage.py", *args, env=env)

    def shell(self, code):
        """What ``code`` prints, run by ``manage.py shell``."""
        status, output = self.manage("shell", "--verbosity", "0", "-c", code)
        assert status == 0, output
        return output.strip()


@pytest.fixture(scope="module")
def project(tmp_path_factory, dynamodb_local):
    wheel = build_wheel(tmp_path_factory.mktemp("source") / "repository", tmp_path_factory.mktemp("wheel"))
    site = tmp_path_factory.mktemp("site-packages")
    subprocess.run(
        [
            sys.executable,
            "-m",
            "pip",
            "install",
            "--quiet",
            "--no-deps",
            "--no-index",
            "--target",
            str(site),
            str(wheel),
        ],
        check=True,
        capture_output=True,
    )
    env = {name: value for name, value in os.environ.items() if not name.startswith(("DJANGO_", "PYTEST_"))}
    # Deprecated Django (or Python) APIs are errors in the project too, as in make test.
    env["PYTHONWARNINGS"] = "error::DeprecationWarning,error::PendingDeprecationWarning"
    # The app from the wheel, before the development install this interpreter also has.
    env["PYTHONPATH"] = str(site)
    directory = tmp_path_factory.mktemp("readme") / "site"
    start_readme_project(directory, env)
    settings = directory / "myproject" / "settings.py"
    settings.write_text(settings.read_text().replace(README_ENDPOINT, dynamodb_local.endpoint_url))
    built = Project(directory, env)
    status, output = built.manage("accounts_createtable")
    assert status == 0, output
    assert built.shell("import accounts; print(accounts.__file__)").startswith(str(site))
    return built


def test_check_finds_nothing_and_check_deploy_names_the_admin_that_startproject_installed_once(project):
    status, output = project.manage("check")

    assert status == 0, output
    assert re.findall(r"\((\w+\.\w+)\)", output) == []
    status, output = project.manage("check", "--deploy")
    assert re.findall(r"\((accounts\.\w+)\)", output) == ["accounts.W003"], output


def test_migrate_says_in_one_line_that_there_is_no_sql_database(project):
    status, output = project.manage("migrate")

    assert status == 0, output
    assert [line for line in output.splitlines() if line.startswith("No SQL database to migrate")]
    assert "Traceback" not in output
    assert "accounts.W003" not in output


def test_createsuperuser_makes_a_superuser(project):
    env = {
        "DJANGO_SUPERUSER_USERNAME": "boss",
        "DJANGO_SUPERUSER_EMAIL": "boss@example.com",
        "DJANGO_SUPERUSER_PASSWORD": PASSWORD,
    }
    status, output = project.manage("createsuperuser", "--noinput", env=env)

    assert status == 0, output
    assert (
        project.shell(
            "from django.contrib.auth import get_user_model; user = get_user_model().objects.get(username='boss'); "
            "print(user.is_staff, user.is_superuser, user.has_perm('polls.change_poll'))"
        )
        == "True True True"
    )


def test_accounts_createstaff_uses_the_signup_form_and_adapter_of_the_recipe(project):
    status, output = project.manage(
        "accounts_createstaff",
        "--email",
        "clerk@example.com",
        "--username",
        "clerk",
        "--noinput",
        env={"DJANGO_STAFF_PASSWORD": PASSWORD},
    )

    assert status == 0, output
    assert "Staff account clerk (clerk@example.com) created" in output
    assert (
        project.shell(
            "from accounts import store; account = store.get_by_username('clerk'); "
            "print(type(account).__name__, account.is_staff, account.phone)"
        )
        == "MemberAccount True None"
    )


def test_its_tests_pass_and_a_test_forgetting_the_fixture_fails_clearly_and_writes_nothing(project):
    (project.directory / "myproject" / "tests" / "test_forgotten_fixture.py").write_text(FORGOTTEN_FIXTURE)

    status, output = project.run("-m", "pytest", "-q", "-p", "no:cacheprovider")

    assert status == 1, output
    assert f"1 failed, {README_TESTS} passed" in output, output
    assert (
        "TransactWriteItems on the accounts table 'myproject-accounts' from a test without the "
        "accounts_table fixture; nothing was sent." in output
    )
    assert project.shell("from accounts import store; print(store.get_by_username('forgetful'))") == "None"


def dynamodb_local_conftest():
    """The testing page's ``conftest.py`` for DynamoDB Local: not one of the project's
    recipes (the page's tests run on moto by default), its alternative."""
    page = (DOCS / "testing.md").read_text()
    return re.search(r"^```python\n# conftest.py, to run the tests on DynamoDB Local\n(.*?)^```", page, re.S | re.M)[1]


def test_its_tests_run_on_moto_by_default_and_on_dynamodb_local_with_the_testing_pages_conftest(project):
    run_its_tests = ("-m", "pytest", "-q", "-p", "no:cacheprovider", "--setup-show", "myproject/tests")
    ignored = ("--ignore", "myproject/tests/test_forgotten_fixture.py")  # another test's
    status, output = project.run(*run_its_tests, *ignored)
    assert status == 0, output
    assert f"{README_TESTS} passed" in output and "accounts_dynamodb_local" not in output, output

    conftest = project.directory / "conftest.py"
    conftest.write_text(dynamodb_local_conftest())
    try:
        status, output = project.run(*run_its_tests, *ignored)
    finally:
        conftest.unlink()

    assert status == 0, output
    assert f"{README_TESTS} passed" in output and "SETUP    S accounts_dynamodb_local" in output, output


def test_its_pages_render_in_the_layout_of_the_recipe_from_its_templates_directory(project):
    page = project.shell(
        "from django.test import Client; print(Client(HTTP_HOST='localhost').get('/accounts/signup/').content.decode())"
    )

    assert "<title>Sign up · My site</title>" in page
    assert 'action="/accounts/signup/"' in page


def production_env(dynamodb_local, **overrides):
    """The environment the production recipe reads, on this test run's DynamoDB Local."""
    return {
        "DJANGO_SETTINGS_MODULE": "myproject.settings_production",
        "DJANGO_SECRET_KEY": "a-production-key-for-this-test-only-" + "x" * 30,
        "DJANGO_ALLOWED_HOSTS": "127.0.0.1",
        "ACCOUNTS_ENDPOINT_URL": dynamodb_local.endpoint_url,
        "ACCOUNTS_SITE_URL": "https://accounts.example.com",
        **overrides,
    }


def test_check_deploy_warns_when_the_production_site_url_is_still_localhost(project, dynamodb_local):
    env = production_env(dynamodb_local, ACCOUNTS_SITE_URL="http://localhost:8000")

    status, output = project.manage("check", "--deploy", env=env)

    assert sorted(re.findall(r"\((\w+\.\w+)\)", output)) == ["accounts.W003", "accounts.W020"], output


def free_port():
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


class NoRedirect(urllib.request.HTTPRedirectHandler):
    def redirect_request(self, *args, **kwargs):
        return None


def wait_for(url, seconds=60):
    """The first answer to a GET of ``url`` (a redirect as it is), once the server listens."""
    deadline = time.monotonic() + seconds
    while True:
        try:
            return urllib.request.build_opener(NoRedirect).open(url, timeout=5)
        except urllib.error.HTTPError as error:
            return error
        except OSError:
            if time.monotonic() > deadline:
                raise
            time.sleep(0.5)


def test_gunicorn_serves_the_site_and_its_static_files_with_the_production_settings(project, dynamodb_local):
    env = production_env(dynamodb_local)
    status, output = project.manage("collectstatic", "--noinput", env=env)
    assert status == 0, output
    status, output = project.manage("check", "--deploy", env=env)
    assert status == 0, output
    assert re.findall(r"\((\w+\.\w+)\)", output) == ["accounts.W003"]
    status, output = project.manage(
        "createsuperuser",
        "--noinput",
        env={
            **env,
            "DJANGO_SUPERUSER_USERNAME": "owner",
            "DJANGO_SUPERUSER_EMAIL": "owner@example.com",
            "DJANGO_SUPERUSER_PASSWORD": PASSWORD,
        },
    )
    assert status == 0, output

    port = free_port()
    server = subprocess.Popen(
        [sys.executable, "-m", "gunicorn", "myproject.wsgi", "--bind", f"127.0.0.1:{port}", "--workers", "1"],
        cwd=project.directory,
        env={**project.env, **env},
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        base = f"http://127.0.0.1:{port}"
        assert wait_for(f"{base}/accounts/login/").status == 301  # plain HTTP: to HTTPS
        # As the TLS proxy passes it on: HTTPS for Django, which sets secure cookies (sent back by hand).
        browser = urllib.request.build_opener(NoRedirect)
        browser.addheaders = [("X-Forwarded-Proto", "https"), ("Referer", f"https://127.0.0.1:{port}/accounts/login/")]
        answer = browser.open(f"{base}/accounts/login/")
        page = answer.read().decode()
        csrf_cookie = answer.headers["Set-Cookie"].split(";")[0]
        browser.addheaders.append(("Cookie", csrf_cookie))
        stylesheet = re.search(r'href="(/static/accounts/accounts\.\w+\.css)"', page).group(1)
        token = re.search(r'name="csrfmiddlewaretoken" value="([^"]+)"', page).group(1)
        form = urllib.parse.urlencode({"username": "owner", "password": PASSWORD, "csrfmiddlewaretoken": token})
        with pytest.raises(urllib.error.HTTPError) as login:
            browser.open(f"{base}/accounts/login/", data=form.encode())
        css = browser.open(f"{base}{stylesheet}")

        assert login.value.code == 302 and login.value.headers["Location"] == "/accounts/profile/"
        assert css.status == 200 and "max-age=315360000" in css.headers["Cache-Control"]
    finally:
        server.send_signal(signal.SIGTERM)
        _, errors = server.communicate(timeout=30)
    assert "Traceback" not in errors, errors
