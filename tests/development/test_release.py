"""A release a team can install: the wheel and sdist ``make dist`` builds, named for the
version the changelog's newest heading names, with classifiers that say what is supported
and tested, installed by pip from a directory served as an index."""

import ast
import re
import subprocess
import sys
import tomllib

import pytest
from packaging.requirements import Requirement
from packaging.specifiers import SpecifierSet
from packaging.version import Version

import accounts
from tests.projects import NOT_SOURCE, ROOT

PROJECT = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]


def classified(prefix):
    """The versions the classifiers ``<prefix> :: X.Y`` name."""
    pattern = re.compile(rf"{re.escape(prefix)} :: (\d+\.\d+)")
    return sorted((match[1] for match in map(pattern.fullmatch, PROJECT["classifiers"]) if match), key=Version)


def rows_the_suite_runs_on():
    """noxfile.py's ``ROWS``: the (Python, Django) pairs the whole suite runs on."""
    tree = ast.parse((ROOT / "noxfile.py").read_text())
    [rows] = [
        node.value
        for node in tree.body
        if isinstance(node, ast.Assign) and getattr(node.targets[0], "id", None) == "ROWS"
    ]
    return ast.literal_eval(rows)


def test_the_version_is_the_changelogs_newest_heading():
    heading = re.search(r"^## (\S+)", (ROOT / "CHANGELOG.md").read_text(), re.M)

    assert heading[1] == accounts.__version__


def test_the_python_classifiers_run_from_requires_python_to_the_newest_python_tested():
    pythons = classified("Programming Language :: Python")
    newest_tested = max((python for python, _ in rows_the_suite_runs_on()), key=Version)

    assert pythons[0] == "3.11" and SpecifierSet(PROJECT["requires-python"]).contains("3.11")
    assert not SpecifierSet(PROJECT["requires-python"]).contains("3.10")
    assert pythons[-1] == newest_tested
    assert [Version(python).minor for python in pythons] == list(range(11, Version(newest_tested).minor + 1))


def test_the_django_classifiers_are_the_djangos_the_dependency_allows_and_the_tests_run_on():
    djangos = classified("Framework :: Django")
    [django] = [Requirement(line) for line in PROJECT["dependencies"] if Requirement(line).name == "Django"]
    tested = {django for _, django in rows_the_suite_runs_on()}

    assert all(django.specifier.contains(version) for version in djangos)
    assert not django.specifier.contains("5.1")
    assert tested <= set(djangos)
    assert djangos[0] == min(tested, key=Version)


def test_a_0_x_release_is_not_classified_stable():
    [status] = [classifier for classifier in PROJECT["classifiers"] if classifier.startswith("Development Status")]

    assert Version(accounts.__version__).major >= 1 or status in (
        "Development Status :: 3 - Alpha",
        "Development Status :: 4 - Beta",
    )


@pytest.mark.slow
def test_make_dist_builds_a_wheel_and_an_sdist_that_pip_installs_from_a_directory_index(tmp_path):
    import shutil

    source, dist = tmp_path / "clone", tmp_path / "dist"
    shutil.copytree(ROOT, source, ignore=shutil.ignore_patterns(*NOT_SOURCE))
    # What `make dist` runs, on a copy of the tree as a fresh clone has it.
    subprocess.run(
        [sys.executable, "-m", "build", "--outdir", str(dist), "."], cwd=source, check=True, capture_output=True
    )
    built = sorted(path.name for path in dist.iterdir())
    subprocess.run([sys.executable, "-m", "twine", "check", "--strict", *map(str, dist.iterdir())], check=True)

    version = accounts.__version__
    # build makes the wheel from the sdist: the sdist builds.
    assert built == [f"django_dynamo_accounts-{version}-py3-none-any.whl", f"django_dynamo_accounts-{version}.tar.gz"]
    target = tmp_path / "site-packages"
    subprocess.run(
        [
            *(sys.executable, "-m", "pip", "install", "--quiet", "--no-deps", "--no-index"),
            *("--find-links", str(dist), "--target", str(target)),
            f"django-dynamo-accounts[testing]=={version}",
        ],
        check=True,
        capture_output=True,
    )
    assert (target / f"django_dynamo_accounts-{version}.dist-info").is_dir()
    assert (target / "accounts" / "java" / "BoundDynamoDBLocal.java").is_file()
