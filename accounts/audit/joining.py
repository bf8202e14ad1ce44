"""The audit's join: ``findings.sql`` run by DuckDB over the rows the workers wrote.

DuckDB is an embedded query engine: the rows stay in their Parquet files, and the join takes
at most ``ACCOUNTS_AUDIT_MEMORY_LIMIT`` of memory, spilling the rest to files in the rows'
directory. The query's answer is streamed, a batch at a time, ordered by lock key, so the
candidates of one key arrive together.
"""

import csv
import io
import json
from collections.abc import Iterator
from dataclasses import dataclass
from importlib import resources
from pathlib import Path

from ..app_settings import app_settings
from .engines import optional_module
from .rows import COLUMNS, TABLES

# Candidates fetched from DuckDB at a time.
FETCH_ROWS = 10_000

SUBJECTS = HELD, LOCK, ITEM, FACTORS, REGISTRY, UNDECLARED = (
    "held",
    "lock",
    "item",
    "factors",
    "registry",
    "undeclared",
)

_DUCKDB_TYPES = {"string": "VARCHAR", "bool": "BOOLEAN"}


@dataclass(frozen=True)
class Candidate:
    """One row of ``findings.sql``: what may be out of step, to confirm (see the SQL file).

    ``subject`` is ``held``, ``lock``, ``item``, ``factors``, ``registry`` or ``undeclared``;
    ``pk`` the holder, the lock's owner, the damaged item, the partition holding second
    factors, or the item a registry entry names (``namespace``: the registry); ``detail``
    an undeclared namespace's lock count."""

    subject: str
    namespace: str | None
    lock_key: str | None
    pk: str | None
    detail: str = ""


def findings_sql() -> str:
    """The text of ``findings.sql``, the audit's one query."""
    return resources.files(__package__).joinpath("findings.sql").read_text()


def connect(spill_directory: Path):
    """A DuckDB connection held to ``ACCOUNTS_AUDIT_MEMORY_LIMIT``, spilling under
    ``spill_directory``."""
    limit = _checked_limit(app_settings.AUDIT_MEMORY_LIMIT)
    connection = optional_module("duckdb").connect(":memory:")
    connection.execute(f"SET memory_limit = '{limit}'")
    connection.execute(f"SET temp_directory = '{_quoted(str(spill_directory))}'")
    # Rows are read in any order; only the query's ORDER BY matters.
    connection.execute("SET preserve_insertion_order = false")
    return connection


def candidates(rows_directory: Path) -> Iterator[Candidate]:
    """The candidates of the rows under ``rows_directory`` (:mod:`.rows`), by lock key."""
    connection = connect(rows_directory / "spill")
    try:
        for table in TABLES:
            files = sorted((rows_directory / table).glob("*.parquet"))
            if files:
                listed = ", ".join(f"'{_quoted(str(path))}'" for path in files)
                connection.execute(f"CREATE VIEW {table} AS SELECT * FROM read_parquet([{listed}])")
            else:
                columns = ", ".join(f"{column} {_DUCKDB_TYPES[kind]}" for column, kind in COLUMNS[table])
                connection.execute(f"CREATE TABLE {table} ({columns})")
        result = connection.execute(findings_sql())
        while batch := result.fetchmany(FETCH_ROWS):
            for row in batch:
                yield Candidate(*row)
    finally:
        connection.close()


class InvalidFindings(ValueError):
    """A file that is not an answer of the audit's query."""


def read_findings(path: str) -> list[dict]:
    """The rows of the audit query's answer in file ``path``: CSV with a header (Athena's
    result file), or JSON (a list of objects, or one object a line)."""
    try:
        text = Path(path).read_text(encoding="utf-8-sig")
    except OSError as error:
        raise InvalidFindings(f"{path} cannot be read: {error}") from error
    stripped = text.lstrip()
    try:
        if stripped.startswith("["):
            records = json.loads(stripped)
        elif stripped.startswith("{"):
            records = [json.loads(line) for line in stripped.splitlines() if line.strip()]
        else:
            records = list(csv.DictReader(io.StringIO(text)))
    except ValueError as error:
        raise InvalidFindings(f"{path} is not CSV or JSON: {error}") from error
    if not all(isinstance(record, dict) and "subject" in record for record in records):
        raise InvalidFindings(f"{path} is not the audit query's answer: each row needs a subject column.")
    return records


def candidates_from_records(records: list[dict]) -> Iterator[Candidate]:
    """Candidates another engine computed with the same query (Athena's CSV or JSON
    answer, one dict per row with the query's column names), in lock-key order."""
    rows = [
        Candidate(
            str(record["subject"]),
            record.get("namespace") or None,
            record.get("lock_key") or None,
            record.get("pk") or None,
            str(record.get("detail") or ""),
        )
        for record in records
    ]
    if any(row.subject not in SUBJECTS for row in rows):
        raise InvalidFindings("Not the audit query's answer: its subject column holds other values.")
    rows.sort(key=lambda row: (row.lock_key is None, row.lock_key or "", row.subject, row.pk or ""))
    return iter(rows)


def _checked_limit(limit: str) -> str:
    text = str(limit).strip()
    if not text or not all(character.isalnum() or character in ". " for character in text):
        raise ValueError(f"ACCOUNTS_AUDIT_MEMORY_LIMIT is {limit!r}: give an amount such as '1GB'.")
    return text


def _quoted(text: str) -> str:
    return text.replace("'", "''")
