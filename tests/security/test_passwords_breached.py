"""Breached passwords (NIST SP 800-63B-4): new passwords are looked up by the first 5 hex
digits of their SHA-1 (the k-anonymity range protocol), in a range API (here a server on
loopback) or a directory of range files the test writes; a login with a breached password
goes on and is told to change it."""

import hashlib
import http.server
import threading

import pytest
from django.contrib.auth import password_validation
from django.core.exceptions import ValidationError
from django.test import Client

from accounts import breached_passwords
from accounts.models import User
from accounts.password_reset import SetPasswordForm
from tests.staff import client_as, make_account
from tests.web import PASSWORD, login, messages_of, signed_up_client, signup

pytestmark = pytest.mark.dynamodb_local

BREACHED = "Correct-Horse-Battery-9"
NOT_BREACHED = "Quiet-Meadow-Compass-4"


def sha1(password):
    return hashlib.sha1(password.encode()).hexdigest().upper()


def range_lines(*passwords, padding=()):
    """``SUFFIX:COUNT`` lines for ``passwords`` (each seen 42 times) and padding suffixes
    (count 0), with the range API's CRLF."""
    lines = [f"{sha1(password)[5:]}:42" for password in passwords] + [f"{suffix}:0" for suffix in padding]
    return "\r\n".join(lines)


class RangeServer:
    """A range API on loopback: ``/range/ABCDE`` answers the lines of that prefix among
    ``passwords``; every request line and header it got is kept in :attr:`requests`."""

    def __init__(self, *passwords, padding_for=()):
        self.requests = []
        server = self

        class Handler(http.server.BaseHTTPRequestHandler):
            def do_GET(self):
                server.requests.append((self.path, dict(self.headers)))
                prefix = self.path.rpartition("/")[2]
                known = [password for password in passwords if sha1(password).startswith(prefix)]
                padded = [sha1(password)[5:] for password in padding_for if sha1(password).startswith(prefix)]
                body = range_lines(*known, padding=padded).encode()
                self.send_response(200)
                self.send_header("Content-Type", "text/plain")
                self.send_header("Content-Length", str(len(body)))
                self.end_headers()
                self.wfile.write(body)

            def log_message(self, *args):
                pass

        self.httpd = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.url = f"http://127.0.0.1:{self.httpd.server_address[1]}"
        threading.Thread(target=self.httpd.serve_forever, daemon=True).start()

    def close(self):
        self.httpd.shutdown()
        self.httpd.server_close()


VALIDATOR = {"NAME": "accounts.breached_passwords.BreachedPasswordValidator"}


@pytest.fixture(autouse=True)
def breached_password_validator(settings):
    """The validator in AUTH_PASSWORD_VALIDATORS, as the demo lists it when
    ACCOUNTS_BREACHED_PASSWORDS is set."""
    settings.AUTH_PASSWORD_VALIDATORS = [*settings.AUTH_PASSWORD_VALIDATORS, VALIDATOR]


@pytest.fixture
def range_server(settings):
    server = RangeServer(BREACHED)
    settings.ACCOUNTS_BREACHED_PASSWORDS = server.url
    yield server
    server.close()


def test_a_signup_with_a_breached_password_is_refused_and_only_five_hex_digits_leave(ddb, range_server):
    response = signup(Client(), password=BREACHED)

    assert response.status_code == 200
    assert response.context["form"].has_error("password2", "password_breached")
    assert "has appeared in data breaches 42 times" in response.content.decode()
    digest = sha1(BREACHED)
    assert [path for path, _headers in range_server.requests] == [f"/range/{digest[:5]}"]
    sent = repr(range_server.requests)
    assert digest[5:] not in sent and BREACHED not in sent
    assert range_server.requests[0][1]["Add-Padding"] == "true"


def test_a_signup_with_a_password_of_no_breach_goes_through(ddb, range_server):
    assert signup(Client(), password=NOT_BREACHED).status_code == 302
    assert len(range_server.requests) == 1


def test_a_padding_line_of_the_same_suffix_is_no_breach(ddb, settings):
    server = RangeServer(padding_for=[BREACHED])
    settings.ACCOUNTS_BREACHED_PASSWORDS = server.url
    try:
        password_validation.validate_password(BREACHED)
    finally:
        server.close()


def test_the_password_change_is_refused_a_breached_password(ddb, range_server):
    client = signed_up_client()
    data = {"old_password": PASSWORD, "new_password1": BREACHED, "new_password2": BREACHED}

    response = client.post("/accounts/password/", data)

    assert response.status_code == 200
    assert response.context["form"].has_error("new_password2", "password_breached")


def test_a_reset_is_refused_a_breached_password(ddb, range_server):
    user = User.from_account(make_account("ada@example.com", "ada"))
    form = SetPasswordForm(user, {"new_password1": BREACHED, "new_password2": BREACHED})

    assert not form.is_valid()
    assert form.has_error("new_password2", "password_breached")


def test_staff_cannot_set_a_breached_password(ddb, range_server):
    ada = make_account("ada@example.com", "ada")
    staff = client_as(make_account("boss@example.com", "boss", staff=True))

    response = staff.post(f"/staff/accounts/{ada.id}/password/", {"new_password1": BREACHED, "new_password2": BREACHED})

    assert response.status_code == 200
    assert response.context["password_form"].has_error("new_password2", "password_breached")


@pytest.mark.parametrize("file_name", ["{prefix}", "{prefix}.txt"])
def test_a_directory_of_range_files_is_a_source_too(ddb, settings, tmp_path, file_name):
    for password in (BREACHED, NOT_BREACHED):
        prefix = sha1(password)[:5]
        known = (BREACHED,) if password == BREACHED else ()
        (tmp_path / file_name.format(prefix=prefix)).write_text(range_lines(*known, padding=["0" * 35]))
    settings.ACCOUNTS_BREACHED_PASSWORDS = str(tmp_path)

    with pytest.raises(ValidationError) as refusal:
        password_validation.validate_password(BREACHED)
    password_validation.validate_password(NOT_BREACHED)

    assert [error.code for error in refusal.value.error_list] == ["password_breached"]


@pytest.mark.parametrize("source", ["http://127.0.0.1:9", "missing directory"])
def test_an_unreachable_source_fails_open_by_default(ddb, settings, tmp_path, source):
    settings.ACCOUNTS_BREACHED_PASSWORDS = source if source.startswith("http") else str(tmp_path / "nothing")

    password_validation.validate_password(BREACHED)


def test_an_unreachable_source_fails_closed_when_set(ddb, settings, tmp_path):
    settings.ACCOUNTS_BREACHED_PASSWORDS = str(tmp_path)  # no file for any prefix
    settings.ACCOUNTS_BREACHED_PASSWORDS_FAIL_CLOSED = True

    response = signup(Client(), password=NOT_BREACHED)

    assert response.context["form"].has_error("password2", "password_breach_check_unavailable")


def test_without_a_source_nothing_is_looked_up(ddb, settings, monkeypatch):
    settings.ACCOUNTS_BREACHED_PASSWORDS = None
    monkeypatch.setattr(breached_passwords, "range_of", lambda *args: pytest.fail("looked up"))

    assert signup(Client(), password=BREACHED).status_code == 302


def test_a_login_with_a_breached_password_succeeds_and_is_told_to_change_it(ddb, settings):
    signup(Client(), password=BREACHED)  # before the password was known to be breached
    server = RangeServer(BREACHED)
    settings.ACCOUNTS_BREACHED_PASSWORDS = server.url
    try:
        client = Client()
        response = login(client, "ada", BREACHED)
        landing = client.get(response["Location"])
    finally:
        server.close()

    assert response.status_code == 302
    assert landing.status_code == 200
    assert breached_passwords.LOGIN_WARNING in messages_of(landing)


def test_a_login_with_a_password_of_no_breach_gets_no_warning(ddb, range_server):
    signup(Client(), password=NOT_BREACHED)
    client = Client()
    landing = client.get(login(client, "ada", NOT_BREACHED)["Location"])

    assert breached_passwords.LOGIN_WARNING not in messages_of(landing)
