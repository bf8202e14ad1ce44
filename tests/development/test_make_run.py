"""``make run`` (project/devserver.py) as a newcomer meets it: a DynamoDB Local whose JVM
has just started, a sign-up at once, then Ctrl-C or SIGTERM and a second start."""

import http.cookiejar
import os
import re
import signal
import subprocess
import sys
import threading
import time
import urllib.error
import urllib.parse
import urllib.request
from pathlib import Path

import pytest

from accounts.dynamodb_local import free_port

pytestmark = pytest.mark.slow  # each start is a JVM, its warm-up and runserver: a minute or more

ROOT = Path(__file__).resolve().parents[2]
PASSWORD = "Tangerine-Sky-Runner-7"
# How long everything make run started may take to be gone after Ctrl-C or SIGTERM: not a
# speed goal, a bound on "left running" (a loaded machine stops a JVM in seconds, not at once).
GONE_WITHIN = 15
# A start on a loaded machine: a JVM, its warm-up, the table, runserver.
START_SECONDS = 300


def children_of(pid):
    """The processes descending from ``pid`` now (read from /proc)."""
    parents = {}
    for stat in Path("/proc").glob("[0-9]*/stat"):
        try:
            fields = stat.read_text().rpartition(")")[2].split()
        except OSError:
            continue
        parents.setdefault(int(fields[1]), []).append(int(stat.parent.name))
    found, pending = [], [pid]
    while pending:
        for child in parents.get(pending.pop(), []):
            found.append(child)
            pending.append(child)
    return found


def is_running(pid):
    try:
        state = Path(f"/proc/{pid}/stat").read_text().rpartition(")")[2].split()[0]
    except OSError:
        return False
    return state != "Z"


class DevServer:
    """``python -m project.devserver`` (what ``make run`` runs) on ports of its own, with
    DynamoDB Local's data in ``data_dir``; what it prints is kept in :attr:`output`."""

    def __init__(self, data_dir):
        self.port, self.dynamodb_port = free_port(), free_port()
        self.data_dir = data_dir
        self.output = ""
        self.process = None
        self.opener = urllib.request.build_opener(urllib.request.HTTPCookieProcessor(http.cookiejar.CookieJar()))

    @property
    def url(self):
        return f"http://localhost:{self.port}"

    def start(self):
        env = {name: value for name, value in os.environ.items() if not name.startswith(("DJANGO_", "ACCOUNTS_"))}
        env.pop("DYNAMODB_ENDPOINT_URL", None)
        self.process = subprocess.Popen(
            [
                sys.executable,
                "-m",
                "project.devserver",
                "--port",
                str(self.port),
                "--dynamodb-port",
                str(self.dynamodb_port),
                "--data-dir",
                str(self.data_dir),
            ],
            cwd=ROOT,
            env=env,
            stdout=subprocess.PIPE,
            stderr=subprocess.STDOUT,
            text=True,
            # A terminal's process group of its own: Ctrl-C reaches every process in it.
            start_new_session=True,
            # And Ctrl-C at its default, as a shell leaves it: an ignored SIGINT of the test's
            # process (one of the libraries a run loads may set it) would be inherited.
            preexec_fn=_default_sigint,
        )
        threading.Thread(target=self._read, daemon=True).start()
        deadline = time.monotonic() + START_SECONDS
        while time.monotonic() < deadline:
            assert self.process.poll() is None, self.output
            try:
                self.get("/accounts/signup/")
                return self
            except urllib.error.HTTPError as error:
                raise AssertionError(f"{error.code} from a new server:\n{self.output}") from error
            except OSError:
                time.sleep(0.2)
        raise AssertionError(f"make run did not serve within {START_SECONDS} s:\n{self.output}")

    def _read(self):
        for line in self.process.stdout:
            self.output += line

    def get(self, path):
        with self.opener.open(self.url + path, timeout=60) as response:
            return response.geturl(), response.read().decode()

    def post(self, path, data):
        page = self.get(path)[1]
        data = {"csrfmiddlewaretoken": re.search(r'name="csrfmiddlewaretoken" value="([^"]+)"', page)[1], **data}
        token = re.search(r'name="token" value="([^"]+)"', page)
        if token:
            data["token"] = token[1]
        request = urllib.request.Request(self.url + path, data=urllib.parse.urlencode(data).encode())
        with self.opener.open(request, timeout=60) as response:
            return response.geturl(), response.read().decode()

    def stop(self, how):
        """Stop it as a person does (``how``: Ctrl-C in its terminal, or SIGTERM to it);
        returns the processes it had started that are still there :data:`GONE_WITHIN`
        seconds later."""
        started = children_of(self.process.pid)
        assert len(started) >= 3, started  # DynamoDB Local, runserver and its reloader's child
        if how == "ctrl-c":
            os.killpg(self.process.pid, signal.SIGINT)
        else:
            self.process.send_signal(signal.SIGTERM)
        deadline = time.monotonic() + GONE_WITHIN
        while time.monotonic() < deadline and any(map(is_running, [self.process.pid, *started])):
            time.sleep(0.1)
        return [pid for pid in [self.process.pid, *started] if is_running(pid)]

    def kill(self):
        if self.process is not None and self.process.poll() is None:
            for pid in children_of(self.process.pid):
                try:
                    os.kill(pid, signal.SIGKILL)
                except ProcessLookupError:
                    pass
            self.process.kill()
            self.process.wait()


def _default_sigint():
    signal.signal(signal.SIGINT, signal.SIG_DFL)


def ignored_signals(pids):
    """Each process's ignored-signals mask (``SigIgn`` in /proc), to tell an ignored Ctrl-C
    from a slow stop when one is left."""
    masks = {}
    for pid in pids:
        try:
            status = Path(f"/proc/{pid}/status").read_text()
        except OSError:
            continue
        masks[pid] = next((line for line in status.splitlines() if line.startswith("SigIgn")), "")
    return masks


def link_mailed_to(server, address, seconds=60):
    """The link of the mail to ``address`` that the console mail backend printed."""
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        mail = server.output.rpartition(f"To: {address}")[2]
        link = re.search(rf"^{re.escape(server.url)}/\S+$", mail, re.M)
        if link:
            return link[0]
        time.sleep(0.2)
    raise AssertionError(f"No mail to {address} was printed:\n{server.output}")


@pytest.fixture
def servers(tmp_path):
    """Start devservers on one data directory; all are killed after the test."""
    started = []

    def start():
        started.append(DevServer(tmp_path / "dynamodb").start())
        return started[-1]

    yield start
    for server in started:
        server.kill()


def test_the_first_signup_on_a_dynamodb_local_just_started_is_saved_and_mailed(servers):
    server = servers()

    assert "DynamoDB Local answered a sign-up's requests in" in server.output
    landed, _ = server.post(
        "/accounts/signup/",
        {"email": "ada@example.com", "username": "ada", "password1": PASSWORD, "password2": PASSWORD},
    )

    assert landed == f"{server.url}/accounts/verify/sent/", server.output
    link = link_mailed_to(server, "ada@example.com")
    assert "Confirm" in server.get(urllib.parse.urlsplit(link).path)[1]


@pytest.mark.parametrize("how", ["ctrl-c", "sigterm"])
def test_after_ctrl_c_or_sigterm_nothing_is_left_and_a_second_start_serves_the_same_data(servers, how):
    first = servers()
    first.post(
        "/accounts/signup/",
        {"email": "ada@example.com", "username": "ada", "password1": PASSWORD, "password2": PASSWORD},
    )
    first.post(urllib.parse.urlsplit(link_mailed_to(first, "ada@example.com")).path, {})

    left = first.stop(how)
    assert left == [], (ignored_signals(left), first.output)
    assert "DynamoDB Local stopped." in first.output

    second = servers()
    landed, _ = second.post("/accounts/login/", {"username": "ada", "password": PASSWORD})
    assert landed == f"{second.url}/accounts/profile/", second.output
    assert f"Table 'accounts' already exists at http://127.0.0.1:{second.dynamodb_port}" in second.output
    assert second.stop(how) == [], second.output
