"""``pip install`` of the repository: a wheel of the ``accounts`` app and nothing else.

The wheel is built from a copy of the working tree without build leftovers, the way a
fresh clone builds it (setuptools would otherwise reuse a stale ``build/`` directory).
"""

import email
import os
import re
import subprocess
import venv
import zipfile

import pytest

import accounts
from accounts import identifiers
from tests.projects import ROOT, build_wheel

DIST_INFO = f"django_dynamo_accounts-{accounts.__version__}.dist-info"


@pytest.fixture(scope="module")
def wheel(tmp_path_factory):
    """The built wheel, opened."""
    built = build_wheel(tmp_path_factory.mktemp("source") / "repository", tmp_path_factory.mktemp("wheel"))
    with zipfile.ZipFile(built) as archive:
        yield built.name, archive


@pytest.fixture(scope="module")
def metadata(wheel):
    _, archive = wheel
    return email.message_from_bytes(archive.read(f"{DIST_INFO}/METADATA"))


def app_files():
    """Every file of the app in the repository, as the wheel names it."""
    package = ROOT / "accounts"
    return {
        path.relative_to(ROOT).as_posix()
        for path in package.rglob("*")
        if path.is_file() and "__pycache__" not in path.parts
    }


def test_wheel_is_named_for_the_version_and_any_python_3(wheel):
    name, _ = wheel

    assert name == f"django_dynamo_accounts-{accounts.__version__}-py3-none-any.whl"


def test_wheel_holds_every_file_of_the_app_and_nothing_of_the_demo_or_tests(wheel):
    _, archive = wheel
    names = set(archive.namelist())

    assert {name for name in names if not name.startswith(f"{DIST_INFO}/")} == app_files()


def test_wheel_holds_templates_static_files_translations_and_migrations(wheel):
    _, archive = wheel
    names = set(archive.namelist())

    assert {
        "accounts/templates/accounts/base.html",
        "accounts/templates/accounts/signup.html",
        "accounts/templates/accounts/staff/account_list.html",
        "accounts/static/accounts/accounts.css",
        *(f"accounts/locale/{lang}/LC_MESSAGES/django.{kind}" for lang in ("fr", "ja", "tr") for kind in ("po", "mo")),
        "accounts/migrations/0001_initial.py",
        "accounts/management/commands/accounts_createtable.py",
    } <= names


def test_wheel_carries_the_license(wheel, metadata):
    _, archive = wheel

    assert metadata["License-Expression"] == "MIT"
    assert metadata["License-File"] == "LICENSE"
    assert archive.read(f"{DIST_INFO}/licenses/LICENSE") == (ROOT / "LICENSE").read_bytes()


def test_metadata_names_the_version_and_the_supported_pythons_and_djangos(metadata):
    classifiers = metadata.get_all("Classifier")

    assert metadata["Name"] == "django-dynamo-accounts"
    assert metadata["Version"] == accounts.__version__
    assert metadata["Requires-Python"] == ">=3.11"
    assert {f"Framework :: Django :: {version}" for version in ("5.2", "6.0", "6.1")} <= set(classifiers)
    assert {f"Programming Language :: Python :: 3.{minor}" for minor in (11, 12, 13)} <= set(classifiers)


def test_installing_the_app_pulls_in_only_django_pynamodb_and_the_unicode_and_second_factor_libraries(metadata):
    # And the OpenID Connect ones (accounts.providers): Authlib, joserfc, requests; and
    # phonenumbers (accounts.phones).
    required = [requirement for requirement in metadata.get_all("Requires-Dist") if "extra ==" not in requirement]

    names = sorted(re.match(r"[\w.-]+", requirement).group(0) for requirement in required)
    assert names == [
        "Django",
        "authlib",
        "idna",
        "joserfc",
        "phonenumbers",
        "pynamodb",
        "pyotp",
        "requests",
        "segno",
        "unicodedata2",
        "webauthn",
    ]


def test_wheel_registers_the_pytest_plugin(wheel):
    _, archive = wheel
    entry_points = archive.read(f"{DIST_INFO}/entry_points.txt").decode()

    assert "[pytest11]\naccounts.testing = accounts.testing" in entry_points


def test_testing_extra_brings_what_the_accounts_table_fixture_needs(metadata):
    testing = [requirement for requirement in metadata.get_all("Requires-Dist") if 'extra == "testing"' in requirement]

    assert sorted(re.match(r"[\w.-]+", requirement).group(0) for requirement in testing) == [
        "moto",
        "pytest",
        "pytest-django",
    ]


def test_wheel_ships_the_pinned_unicode_tables(wheel):
    _, archive = wheel

    assert {
        f"accounts/unicode_data/{name}"
        for name in (
            "VERSION",
            "confusables.txt",
            "scripts.txt",
            "script_extensions.txt",
            "properties.txt",
            "case_folding.txt",
            "script_names.txt",
        )
    } <= set(archive.namelist())


# In the fresh environment: the app and both extras import, and a look-alike key is computed
# over the pinned data (issue 36's U+1E030, MODIFIER LETTER CYRILLIC SMALL A, is paypal's).
KEY_CHECK = """
import duckdb, environ, pyarrow
from accounts import identifiers
print(identifiers.KEY_VERSION, identifiers.username_skeleton_key("p\\U0001E030ypal"))
"""


def test_the_wheel_and_its_demo_and_audit_extras_install_from_wheels_alone(wheel, tmp_path):
    # No compiler and no ICU: pip may use no source distribution for the app's dependencies
    # (the index and pip's cache are the machine's, as for any `pip install`).
    _, archive = wheel
    environment = tmp_path / "venv"
    venv.create(environment, with_pip=True)
    python = str(environment / "bin" / "python")
    install = [python, "-m", "pip", "install", "--quiet", "--only-binary", ":all:", f"{archive.filename}[demo,audit]"]
    subprocess.run(install, check=True, capture_output=True, env={**os.environ, "PIP_DISABLE_PIP_VERSION_CHECK": "1"})

    result = subprocess.run([python, "-c", KEY_CHECK], check=True, capture_output=True, text=True, cwd=tmp_path)

    assert result.stdout.split() == [identifiers.KEY_VERSION, "paypal"]
