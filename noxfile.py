"""The supported combinations, each a whole run of the suite: ``nox`` runs every row,
``nox -s "tests-3.13(django='6.1')"`` one of them (``make test-django61``), and arguments after
``--`` go to pytest (``nox -s ... -- tests/web/test_web_signup.py -x``).

Each row is a virtualenv of its own under ``.nox/`` with the project installed editable with
its ``dev`` extra and that row's Django pinned; DynamoDB Local comes from
``$DYNAMODB_LOCAL_PREFIX`` (``make`` sets it to ``var/dynamodb-local``), Java and chromium
from the machine, as for ``make test``.
"""

import nox

nox.options.sessions = ["tests", "icu"]
nox.options.reuse_existing_virtualenvs = True

# (Python, Django): the LTS on the oldest Python, and the newest Django on the newest Python.
ROWS = [("3.11", "5.2"), ("3.13", "6.1")]
NEWEST = ROWS[-1][1]


@nox.session
@nox.parametrize(("python", "django"), ROWS, ids=[f"django{django}-py{python}" for python, django in ROWS])
def tests(session: nox.Session, python: str, django: str) -> None:  # nox passes the row's python too
    """The whole suite (pytest's testpaths) on one Django. On the newest Django every
    deprecation warning is an error, whoever raises it (on every row, Django's own are:
    pyproject.toml's filterwarnings)."""
    major, minor = django.split(".")
    session.install("-e", ".[dev]", f"Django>={django},<{major}.{int(minor) + 1}")
    strict = ["-W", "error::DeprecationWarning", "-W", "error::PendingDeprecationWarning"] if django == NEWEST else []
    session.run("python", *strict, "-m", "pytest", *session.posargs)


# PyICU with its own ICU 78.3 (Unicode 17.0, the generated tables' version), from a wheel.
ICU_WHEEL = "icukit-pyicu==78.3.1"


@nox.session
def icu(session: nox.Session) -> None:
    """The identifiers against the PyICU implementation they replaced, over every code point
    (tests/engine/test_identifiers_icu.py). ``nox -s icu -- --system-icu`` compares with a
    PyICU built on the machine's ICU instead (it needs libicu-dev, pkg-config and g++)."""
    session.install("-e", ".[dev]")
    system_icu = "--system-icu" in session.posargs
    session.install("PyICU" if system_icu else ICU_WHEEL)
    pytest_args = [arg for arg in session.posargs if arg != "--system-icu"]
    session.run(
        "python",
        "-m",
        "pytest",
        "tests/engine/test_identifiers_icu.py",
        "-s",
        *pytest_args,
        env={"ACCOUNTS_TEST_ICU": "1"},
    )
