"""The demo site in production: gunicorn with DEBUG off, WhiteNoise, HTTPS settings, CSP,
errors logged with their traceback, and `check --deploy` clean."""

import os
import re
import subprocess
import sys
import time
from pathlib import Path

import pytest
import requests
from django.core.management.utils import get_random_secret_key
from django.test import Client

from accounts import store
from accounts.dynamodb_local import free_port

# gunicorn and manage.py write to the test's table from processes of their own, which the
# accounts_table plugin does not see: it empties the whole table after each test.
pytestmark = [pytest.mark.dynamodb_local, pytest.mark.accounts_table_emptied]

ROOT = Path(__file__).resolve().parents[2]
TEMPLATE_DIRS = [ROOT / "templates", ROOT / "accounts" / "templates"]
# Inline script or style (a <script> without src, <style>, style= or on...= attributes):
# a script file the site serves (<script src=...>) is what the CSP allows.
INLINE = re.compile(r"<script(?![^>]*\ssrc=)|<style|\sstyle=|\son[a-z]+=", re.IGNORECASE)
PASSWORD = "Tangerine-Sky-Runner-7"


def production_env(ddb, settings, tmp_path, **overrides):
    """The demo's environment variables for a production run on the test's table (without
    the test settings' DJANGO_HTTPS=0: its default applies unless ``overrides`` sets it)."""
    return {
        **{name: value for name, value in os.environ.items() if name != "DJANGO_HTTPS"},
        "DJANGO_SETTINGS_MODULE": "project.settings",
        "DJANGO_DEBUG": "false",
        # django-environ reads a value starting with "$" as the name of another variable.
        "DJANGO_SECRET_KEY": get_random_secret_key().replace("$", "x"),
        "DJANGO_ALLOWED_HOSTS": "127.0.0.1,example.com",
        "DJANGO_STATIC_ROOT": str(tmp_path / "static"),
        "DYNAMODB_ENDPOINT_URL": ddb.endpoint_url,
        "ACCOUNTS_TABLE_NAME": settings.ACCOUNTS_TABLE_NAME,
        "ACCOUNTS_SITE_URL": "https://example.com",
        **overrides,
    }


def manage(env, *args):
    return subprocess.run(
        [sys.executable, str(ROOT / "manage.py"), *args], cwd=ROOT, env=env, capture_output=True, text=True, timeout=120
    )


class Gunicorn:
    """`gunicorn project.wsgi` on a free port, after collectstatic."""

    def __init__(self, env, log_path):
        self.env = env
        self.port = free_port()
        self.url = f"http://127.0.0.1:{self.port}"
        self.log_path = log_path

    def __enter__(self):
        collected = manage(self.env, "collectstatic", "--noinput")
        assert collected.returncode == 0, collected.stderr
        command = [
            sys.executable,
            "-m",
            "gunicorn",
            "project.wsgi",
            "--bind",
            f"127.0.0.1:{self.port}",
            "--workers",
            "1",
        ]
        self.log = open(self.log_path, "w")
        self.process = subprocess.Popen(command, cwd=ROOT, env=self.env, stdout=self.log, stderr=subprocess.STDOUT)
        try:
            self._wait_until_it_answers()
        except BaseException:
            self.__exit__()
            raise
        return self

    def _wait_until_it_answers(self):
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline:
            assert self.process.poll() is None, self.log_path.read_text()
            try:
                requests.get(self.url, timeout=10, allow_redirects=False)
                return
            except (requests.ConnectionError, requests.Timeout):
                time.sleep(0.1)
        raise AssertionError(f"gunicorn did not answer: {self.log_path.read_text()}")

    def __exit__(self, *exc_info):
        self.process.terminate()
        self.process.wait(timeout=30)
        self.log.close()

    @property
    def output(self):
        return self.log_path.read_text()


def signup_form_data(html):
    """What a person posts on the sign-up page ``html`` (its CSRF and one-time tokens)."""
    return {
        "csrfmiddlewaretoken": re.search(r'name="csrfmiddlewaretoken" value="([^"]+)"', html).group(1),
        "token": re.search(r'name="token" value="([^"]+)"', html).group(1),
        "email": "ada@example.com",
        "username": "ada",
        "password1": PASSWORD,
        "password2": PASSWORD,
    }


def test_gunicorn_serves_styled_pages_and_a_signup_with_debug_off(ddb, settings, tmp_path):
    env = production_env(ddb, settings, tmp_path, DJANGO_HTTPS="false")
    with Gunicorn(env, tmp_path / "gunicorn.log") as server:
        browser = requests.Session()
        page = browser.get(f"{server.url}/accounts/signup/")
        html = page.text
        stylesheet = re.search(r'href="(/static/accounts/accounts\.[0-9a-f]{12}\.css)"', html).group(1)
        css = browser.get(server.url + stylesheet)
        data = signup_form_data(html)
        signed_up = browser.post(f"{server.url}/accounts/signup/", data, allow_redirects=False)
        landing = browser.get(server.url + signed_up.headers["Location"])

    assert page.status_code == 200
    assert "default-src 'self'" in page.headers["Content-Security-Policy"]
    assert "unsafe-inline" not in page.headers["Content-Security-Policy"]
    assert css.status_code == 200 and css.headers["Content-Type"].startswith("text/css")
    assert "max-age=315360000" in css.headers["Cache-Control"]
    assert "--accent" in css.text
    assert signed_up.status_code == 302, signed_up.text
    assert landing.status_code == 200
    # The demo asks for the address to be verified: the account exists, its email unlocked yet.
    assert store.get_by_username("ada").email == "ada@example.com"
    assert "Traceback" not in server.output


def test_https_on_redirects_to_https_and_sends_hsts_and_secure_cookies(ddb, settings, tmp_path):
    env = production_env(ddb, settings, tmp_path)  # DJANGO_HTTPS defaults to true with debug off
    with Gunicorn(env, tmp_path / "gunicorn.log") as server:
        plain = requests.get(f"{server.url}/accounts/login/", allow_redirects=False)
        proxied = requests.get(
            f"{server.url}/accounts/login/", headers={"X-Forwarded-Proto": "https"}, allow_redirects=False
        )

    assert plain.status_code == 301
    assert plain.headers["Location"] == f"https://127.0.0.1:{server.port}/accounts/login/"
    assert proxied.status_code == 200
    assert proxied.headers["Strict-Transport-Security"] == "max-age=31536000; includeSubDomains; preload"
    assert "Secure" in proxied.headers["Set-Cookie"]


def test_check_deploy_reports_no_issues_with_debug_off_and_https_on(ddb, settings, tmp_path):
    # Production sends mail through a server (Django 6.1's check refuses the console backend).
    env = production_env(ddb, settings, tmp_path, DJANGO_HTTPS="true", EMAIL_URL="smtp://localhost:25")
    result = manage(env, "check", "--deploy")

    assert result.returncode == 0, result.stderr
    assert "System check identified no issues (0 silenced)." in result.stdout, result.stdout + result.stderr


def test_check_deploy_says_when_the_site_url_is_missing(ddb, settings, tmp_path):
    env = production_env(ddb, settings, tmp_path, DJANGO_HTTPS="true")
    del env["ACCOUNTS_SITE_URL"]

    result = manage(env, "check", "--deploy")

    assert result.returncode != 0
    assert "accounts.E014" in result.stderr and "ACCOUNTS_SITE_URL is not set" in result.stderr


def demo_settings(code, **environment):
    """What ``code`` prints with the demo's settings read from ``environment`` (debug off)."""
    env = {name: value for name, value in os.environ.items() if not name.startswith(("ACCOUNTS_", "DJANGO_"))}
    env.update({"DJANGO_SETTINGS_MODULE": "project.settings", "DJANGO_SECRET_KEY": "x" * 50, **environment})
    answer = subprocess.run(
        [sys.executable, "-c", code], cwd=ROOT, env=env, capture_output=True, text=True, timeout=120
    )
    assert answer.returncode == 0, answer.stderr
    return answer.stdout.strip()


SHOW = "import project.settings as s; print(getattr(s, {!r}, 'unset'))"


@pytest.mark.parametrize(
    "environment, expected",
    [
        ({"ACCOUNTS_SITE_URL": "https://accounts.example.com"}, "https://accounts.example.com"),
        ({"DJANGO_DEBUG": "1"}, "http://localhost:8000"),
        ({}, "None"),
    ],
)
def test_the_demo_reads_the_site_url_from_the_environment(environment, expected):
    assert demo_settings(SHOW.format("ACCOUNTS_SITE_URL"), **environment) == expected


@pytest.mark.parametrize(
    "environment, expected",
    [
        ({"ACCOUNTS_PREVENT_ENUMERATION": "false"}, "False"),
        ({"ACCOUNTS_PREVENT_ENUMERATION": "1"}, "True"),
        ({}, "unset"),
    ],
)
def test_the_demo_reads_enumeration_prevention_from_the_environment(environment, expected):
    assert demo_settings(SHOW.format("ACCOUNTS_PREVENT_ENUMERATION"), **environment) == expected


def test_the_language_cookie_is_secure_when_the_site_is_https():
    code = (
        "import django; django.setup(); from django.test import Client; "
        "response = Client().post('/i18n/setlang/', {'language': 'ja'}, secure=True, HTTP_HOST='127.0.0.1'); "
        "print(response.cookies['django_language'].output())"
    )
    cookie = demo_settings(code, DJANGO_HTTPS="true")

    assert "django_language=ja" in cookie
    assert "Secure" in cookie and "HttpOnly" in cookie and "SameSite=Lax" in cookie


def test_a_500_under_gunicorn_is_logged_with_its_traceback_to_stderr(ddb, settings, tmp_path):
    # A misconfigured site (an unknown verification mode) fails the sign-up with a 500.
    env = production_env(ddb, settings, tmp_path, DJANGO_HTTPS="false", ACCOUNTS_EMAIL_VERIFICATION="sometimes")
    with Gunicorn(env, tmp_path / "gunicorn.log") as server:
        browser = requests.Session()
        html = browser.get(f"{server.url}/accounts/signup/").text
        data = signup_form_data(html)
        response = browser.post(f"{server.url}/accounts/signup/", data, allow_redirects=False)

    assert response.status_code == 500
    assert "ERROR django.request: Internal Server Error: /accounts/signup/" in server.output
    assert "Traceback (most recent call last)" in server.output
    assert "ImproperlyConfigured" in server.output


def test_csrf_failure_page_uses_the_sites_layout(ddb):
    client = Client(enforce_csrf_checks=True)

    response = client.post("/accounts/login/", {"username": "ada", "password": PASSWORD})

    html = response.content.decode()
    assert response.status_code == 403
    assert "This form has expired" in html
    assert 'class="site-header"' in html and "accounts/accounts.css" in html
    assert not INLINE.search(html)


@pytest.mark.parametrize(
    "template", [path for folder in TEMPLATE_DIRS for path in sorted(folder.rglob("*.html"))], ids=str
)
def test_templates_have_no_inline_script_or_style(template):
    assert not INLINE.search(template.read_text()), template
