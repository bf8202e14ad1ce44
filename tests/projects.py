"""Other projects using the app: running tests under another project's settings module in
the same pytest run, and building a project from ``startproject`` and the docs' recipes."""

import importlib
import re
import shutil
import subprocess
import sys
from contextlib import contextmanager
from pathlib import Path

import django
from django.conf import global_settings, settings
from django.core.signals import setting_changed
from django.test import override_settings

# Kept as they are: DEBUG and EMAIL_BACKEND (MAILERS on Django 6.1) are set for every test
# by Django's test environment (setup_test_environment), which also adds "testserver" to
# ALLOWED_HOSTS; DATABASES is read once per process (Django only warns when it is overridden).
KEPT = {"DEBUG", "EMAIL_BACKEND", "MAILERS", "DATABASES"}
MISSING = object()


def _targets(module_name, overrides):
    """``(changed, removed)``: the settings to set, and the names to delete, so that the
    settings read as if ``DJANGO_SETTINGS_MODULE`` were ``module_name``."""
    module = importlib.import_module(module_name)
    wanted = {name: getattr(module, name) for name in dir(module) if name.isupper()}
    wanted["SETTINGS_MODULE"] = module_name
    wanted["ALLOWED_HOSTS"] = [*wanted.get("ALLOWED_HOSTS", []), "testserver"]
    wanted.update(overrides)
    changed, removed = {}, []
    current = {name for name in dir(settings) if name.isupper()}
    for name in sorted((current | wanted.keys()) - KEPT):
        target = wanted.get(name, getattr(global_settings, name, MISSING))
        if target is MISSING:
            removed.append(name)
        elif getattr(settings, name, MISSING) != target:
            changed[name] = target
    return changed, removed


def _announce(names, enter):
    # override_settings announces what it sets; a deleted setting is a change too (the
    # accounts app reconfigures its tables on any ACCOUNTS_* change).
    for name in names:
        value = getattr(settings, name, None)
        setting_changed.send(sender=type(settings._wrapped), setting=name, value=value, enter=enter)


@contextmanager
def settings_module(module_name, **overrides):
    """Run the block with the settings of ``module_name`` (plus ``overrides``) in place of
    the test settings: every setting it sets, Django's default for every other one, and
    no setting of the test settings that Django has no default for (:data:`KEPT` stay)."""
    changed, removed = _targets(module_name, overrides)
    try:
        with override_settings():
            for name in removed:
                delattr(settings, name)
            _announce(removed, enter=True)
            with override_settings(**changed):
                yield
    finally:
        _announce(removed, enter=False)


# Building a project the way a new user would: ``django-admin startproject``, then the
# docs' recipe blocks for it, with the app installed from a wheel of this tree.

ROOT = Path(__file__).resolve().parent.parent
DOCS = ROOT / "docs"
# A page of the manual as mkdocs.yml's nav names it ("  - Installation: installation.md"),
# commented-out slots left out.
NAV_PAGE = re.compile(r"^\s*- (?:[^:#]+: )?([\w/.-]+\.md)\s*$", re.M)
NOT_SOURCE = (
    ".git",
    ".venv*",
    ".nox",
    "var",
    "build",
    "dist",
    "*.egg-info",
    "__pycache__",
    ".pytest_cache",
    "node_modules",
)
# The first line of a recipe block that belongs to a file of the project, its path from the
# directory of manage.py: "# myproject/urls.py", maybe with the Django versions it is for:
# "# myproject/settings.py (Django 5.2, 6.0)"; a template's: "{# templates/base.html #}".
FILE_LINE = re.compile(
    r"# ((?:myproject/)?[\w/.]+\.(?:py|toml))(?: \(Django ([\d., ]+)\))?|\{# ((?:templates|myproject)/[\w/.]+\.html) #\}"
)
FENCE = re.compile(r"( *)```(\w*)")


def build_wheel(source, out):
    """Build the wheel of the app from a copy of the working tree (without build
    leftovers, as a fresh clone builds it) into ``out``; returns its path."""
    shutil.copytree(ROOT, source, ignore=shutil.ignore_patterns(*NOT_SOURCE))
    subprocess.run(
        [sys.executable, "-m", "pip", "wheel", "--no-deps", "--quiet", "-w", str(out), str(source)],
        check=True,
        capture_output=True,
    )
    [built] = Path(out).glob("*.whl")
    return built


def doc_pages():
    """The manual's pages in the order of mkdocs.yml's nav, the order a reader follows."""
    return [DOCS / name for name in NAV_PAGE.findall((ROOT / "mkdocs.yml").read_text())]


def readme_blocks():
    """``[(path, django versions or None, code)]``: each block of the docs headed by a file
    name, page by page in the nav's order."""
    return [block for page in doc_pages() for block in page_blocks(page.read_text())]


def page_blocks(text):
    """``[(path, django versions or None, code)]``: each block of ``text`` headed by a file name."""
    blocks, lines = [], text.splitlines()
    index = 0
    while index < len(lines):
        opening = FENCE.fullmatch(lines[index])
        if not opening or not opening.group(2):
            index += 1
            continue
        indent = opening.group(1)
        end = lines.index(f"{indent}```", index + 1)
        code = [line[len(indent) :] for line in lines[index + 1 : end]]
        header = FILE_LINE.fullmatch(code[0]) if code else None
        if header:
            versions = header.group(2) and [version.strip() for version in header.group(2).split(",")]
            blocks.append((header.group(1) or header.group(3), versions, "\n".join(code[1:]) + "\n"))
        index = end + 1
    return blocks


def readme_files(django_version):
    """``{path: text}``: what the docs add to each file of a project on ``django_version``
    (``"5.2"``), their blocks in the order of the pages and within each page."""
    files = {}
    for path, versions, code in readme_blocks():
        if versions is None or django_version in versions:
            files[path] = f"{files.get(path, '')}\n\n{code}"
    return files


def start_readme_project(directory, env):
    """``django-admin startproject myproject directory``, then every docs block added at
    the end of its file (or as a new file), for the Django of this interpreter."""
    Path(directory).mkdir(parents=True)
    subprocess.run(
        [sys.executable, "-m", "django", "startproject", "myproject", str(directory)],
        env=env,
        check=True,
        capture_output=True,
    )
    for path, text in readme_files(f"{django.VERSION[0]}.{django.VERSION[1]}").items():
        target = Path(directory) / path
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_text((target.read_text() if target.exists() else "") + text)
