import os
from pathlib import Path

# The tests and benchmarks start the copy of DynamoDB Local that `make` keeps in var/,
# also when pytest or a benchmark is run directly.
os.environ.setdefault("DYNAMODB_LOCAL_PREFIX", str(Path(__file__).resolve().parent.parent / "var" / "dynamodb-local"))
