"""django-allauth's own React app, served by the demo beside the API it speaks to.

allauth ships a single-page app written for its headless API in its sdist on PyPI
(``examples/react-spa/frontend``). :func:`build` downloads that sdist (pinned by version
and digest), runs ``npm ci`` (pinned by the app's own lock file) and ``npm run build``, once,
into ``var/react-app/``; ``python -m project.react_app`` does the same from a shell, and
``make react-app`` calls it. Nothing in the app is changed: the build only sets the
environment variables create-react-app reads (no inline runtime script, no source maps).

:class:`ReactAppMiddleware` then serves the build from the demo's own origin when
``DEMO_REACT_APP_DIR`` names it, as allauth's example routes it behind its proxy:
``/_allauth/`` and ``/accounts/`` (and the demo's other prefixes) go to Django, every
other path is a file of the build or, for the app's own routes, its ``index.html``. The
build's scripts are under ``/static/``: the demo's settings add them to its static files.
"""

from __future__ import annotations

import hashlib
import mimetypes
import os
import shutil
import subprocess
import sys
import tarfile
import tempfile
from collections.abc import Callable
from pathlib import Path

from django.conf import settings
from django.http import FileResponse, HttpRequest, HttpResponse

ROOT = Path(__file__).resolve().parent.parent
PREFIX = ROOT / "var" / "react-app"
ALLAUTH_VERSION = "65.22.1"
SDIST = f"django_allauth-{ALLAUTH_VERSION}.tar.gz"
SDIST_SHA256 = "b05e20b8f511066c97ed98491520a2ca0319ef16d7f27feed9f688cc6877a8ba"
FRONTEND = f"django_allauth-{ALLAUTH_VERSION}/examples/react-spa/frontend"
# create-react-app's build options: the runtime as a file of its own (a Content-Security-
# Policy without 'unsafe-inline' lets it run), no source maps, and warnings left warnings
# (with CI=true create-react-app fails a build on the app's unused imports).
BUILD_ENVIRONMENT = {"INLINE_RUNTIME_CHUNK": "false", "GENERATE_SOURCEMAP": "false", "CI": "false"}
# Paths the demo's Django answers; the app owns every other one.
# (``/static/`` is Django's too: the settings add the build's ``static/`` to STATICFILES_DIRS.)
DJANGO_PREFIXES = ("/_allauth/", "/accounts/", "/staff/", "/i18n/", "/spa/", "/static/")


def build_dir(prefix: Path = PREFIX) -> Path:
    """Where :func:`build` puts the built app (its ``index.html`` and ``static/``)."""
    return prefix / "frontend" / "build"


def build(prefix: Path = PREFIX) -> Path:
    """Download allauth's sdist, build its React app into ``prefix`` unless it is built
    already for this version, and return the build's directory."""
    target = build_dir(prefix)
    stamp = prefix / "built"
    if (target / "index.html").exists() and stamp.exists() and stamp.read_text() == SDIST_SHA256:
        return target
    npm = shutil.which("npm")
    if npm is None:
        raise RuntimeError("npm is needed to build django-allauth's React app (apt-get install npm)")
    prefix.mkdir(parents=True, exist_ok=True)
    archive = _download_sdist(prefix)
    frontend = prefix / "frontend"
    shutil.rmtree(frontend, ignore_errors=True)
    with tarfile.open(archive) as sdist:
        members = [member for member in sdist.getmembers() if member.name.startswith(FRONTEND + "/")]
        for member in members:
            member.name = member.name[len(FRONTEND) + 1 :]
        sdist.extractall(frontend, members=members, filter="data")
    environment = {**os.environ, **BUILD_ENVIRONMENT}
    _run([npm, "ci", "--no-audit", "--no-fund"], frontend, environment)
    _run([npm, "run", "build"], frontend, environment)
    stamp.write_text(SDIST_SHA256)
    return target


def _download_sdist(prefix: Path) -> Path:
    archive = prefix / SDIST
    if not archive.exists() or _sha256(archive) != SDIST_SHA256:
        with tempfile.TemporaryDirectory() as download:
            pip = [sys.executable, "-m", "pip", "download", "--no-deps", "--no-binary", ":all:"]
            _run([*pip, "--dest", download, f"django-allauth=={ALLAUTH_VERSION}"], prefix, dict(os.environ))
            shutil.move(Path(download) / SDIST, archive)
    if _sha256(archive) != SDIST_SHA256:
        archive.unlink()
        raise RuntimeError(f"{SDIST} does not have the digest pinned in {__name__}: refusing to build it")
    return archive


def _sha256(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def _run(command: list[str], directory: Path, environment: dict[str, str]) -> None:
    finished = subprocess.run(command, cwd=directory, env=environment, capture_output=True, text=True)
    if finished.returncode != 0:
        raise RuntimeError(f"{' '.join(command)} failed in {directory}:\n{finished.stdout}\n{finished.stderr}")


class ReactAppMiddleware:
    """Serve the built app named by ``DEMO_REACT_APP_DIR`` (nothing when it is empty):
    a file of the build as it is, any other path outside :data:`DJANGO_PREFIXES` as the
    app's ``index.html``, whose router then shows the screen of that path."""

    def __init__(self, get_response: Callable[[HttpRequest], HttpResponse]) -> None:
        self.get_response = get_response

    def __call__(self, request: HttpRequest) -> HttpResponse:
        directory = getattr(settings, "DEMO_REACT_APP_DIR", "")
        if not directory or request.method not in ("GET", "HEAD") or request.path.startswith(DJANGO_PREFIXES):
            return self.get_response(request)
        root = Path(directory).resolve()
        candidate = (root / request.path.lstrip("/")).resolve()
        if candidate.is_relative_to(root) and candidate.is_file():
            return self._file(candidate)
        return self._file(root / "index.html")

    @staticmethod
    def _file(path: Path) -> HttpResponse:
        content_type, _ = mimetypes.guess_type(path.name)
        return FileResponse(path.open("rb"), content_type=content_type or "application/octet-stream")


if __name__ == "__main__":
    print(build())
