"""Conflicts among the source's own users, found before anything is written.

While the source is read the first time, each candidate's lock keys (the values it would
hold, normalized as a sign-up normalizes them, look-alike skeletons included) go into an
embedded DuckDB database on disk (a set's members too: each other verified address of an
account, each passkey, each identity, with the member it is the key of); then ONE query
returns the keys several users share and who shares them, and only those users are judged, in Python: so the table is asked only
about values the site itself may hold, and memory grows with the conflicts, not the source.

Between source users the rules are, in order: the one whose address is verified wins; then
the one with the most recent ``last_login``; then the lowest id. Users are taken in that
order, each kept unless a value it holds went to one kept before it: a user left out blocks
nobody. Users sharing one id are all left out (their rows cannot be told apart).
"""

import json
import math
import tempfile
from collections.abc import Iterable
from datetime import datetime
from pathlib import Path
from typing import Any

from .candidates import Key
from .reports import DUPLICATE_ID, LOOKALIKE, SAME, Problem

# Rows buffered in Python before each insert into DuckDB, and the memory DuckDB may hold (its
# database is on disk, and spills past it): the import's memory stays flat, whatever the
# source's size.
FLUSH_ROWS = 20_000
MEMORY_LIMIT = "128MB"
CONFLICTS_QUERY = """
WITH shared AS (
    SELECT namespace, key FROM keys GROUP BY namespace, key HAVING count(DISTINCT user_key) > 1
)
SELECT keys.user_key, users.source_id, users.line, users.verified, users.last_login,
       keys.position, keys.namespace, keys.key, keys.field, keys.lookalike, keys.value
FROM keys
JOIN shared USING (namespace, key)
JOIN users USING (user_key)
WHERE users.user_key NOT IN (SELECT user_key FROM ids WHERE source_id IN (
    SELECT source_id FROM ids GROUP BY source_id HAVING count(*) > 1))
ORDER BY keys.user_key, keys.position
"""
DUPLICATES_QUERY = """
SELECT ids.user_key, ids.source_id, ids.line FROM ids
WHERE source_id IN (SELECT source_id FROM ids GROUP BY source_id HAVING count(*) > 1)
ORDER BY ids.source_id, ids.line
"""


class ConflictFinder:
    """Collects the keys of every candidate read (:meth:`add`), then finds who is left
    out (:meth:`left_out`). Its DuckDB database lives in a temporary directory, removed by
    :meth:`close`."""

    def __init__(self) -> None:
        import duckdb

        self._directory = tempfile.TemporaryDirectory(prefix="accounts-import-")
        path = Path(self._directory.name)
        self.connection = duckdb.connect(str(path / "keys.duckdb"))
        self.connection.execute(f"SET memory_limit = '{MEMORY_LIMIT}'")
        self.connection.execute(f"SET temp_directory = '{path / 'spill'}'")
        self.connection.execute("SET preserve_insertion_order = false")
        self.connection.execute(
            "CREATE TABLE users (user_key VARCHAR, source_id VARCHAR, line BIGINT, verified BOOLEAN, last_login DOUBLE)"
        )
        self.connection.execute(
            "CREATE TABLE keys (user_key VARCHAR, position INTEGER, namespace VARCHAR, key VARCHAR, "
            "field VARCHAR, lookalike BOOLEAN, value VARCHAR)"
        )
        self.connection.execute("CREATE TABLE ids (user_key VARCHAR, source_id VARCHAR, line BIGINT)")
        self._rows: dict[str, list[tuple[Any, ...]]] = {"users": [], "keys": [], "ids": []}

    def add_id(self, user_key: str, source_id: str | None, line: int | None) -> None:
        """Note a user read (valid or not): its id, to find ids several users share."""
        if source_id is not None:
            self._append("ids", (user_key, source_id, line))

    def add(
        self,
        user_key: str,
        source_id: str,
        line: int | None,
        verified: bool,
        last_login: datetime | None,
        keys: Iterable[Key],
    ) -> None:
        """Note a candidate (``line``: of a JSON-lines file) and the keys it would hold."""
        login = last_login.timestamp() if last_login is not None else None
        self._append("users", (user_key, source_id, line, verified, login))
        for position, key in enumerate(keys):
            self._append("keys", (user_key, position, key.namespace, key.key, key.field, key.lookalike, key.value))

    def _append(self, table: str, row: tuple[Any, ...]) -> None:
        rows = self._rows[table]
        rows.append(row)
        if len(rows) >= FLUSH_ROWS:
            self._flush(table)

    def _flush(self, table: str) -> None:
        import pyarrow

        rows = self._rows[table]
        if not rows:
            return
        columns = [
            description[0] for description in self.connection.execute(f"SELECT * FROM {table} LIMIT 0").description
        ]
        batch = pyarrow.Table.from_pylist([dict(zip(columns, row, strict=True)) for row in rows])
        self.connection.register("batch", batch)
        self.connection.execute(f"INSERT INTO {table} SELECT * FROM batch")  # noqa: S608
        self.connection.unregister("batch")
        rows.clear()

    def left_out(self) -> dict[str, list[Problem]]:
        """``{user key: its report lines}`` of every user the source's conflicts leave out."""
        for table in self._rows:
            self._flush(table)
        left_out: dict[str, list[Problem]] = {}
        for user_key, source_id, line in self.connection.execute(DUPLICATES_QUERY).fetchall():
            message = "Several users of the source have this id: none of them is imported."
            left_out[user_key] = [Problem(json.loads(source_id), "id", DUPLICATE_ID, message, line=line)]
        held: dict[tuple[str, str], Any] = {}
        for user in _in_priority_order(self.connection.execute(CONFLICTS_QUERY).fetchall()):
            taken = next((key for key in user["keys"] if (key[0], key[1]) in held), None)
            if taken is None:
                held.update({(key[0], key[1]): user["source_id"] for key in user["keys"]})
                continue
            namespace, _, field, lookalike, value = taken
            code = (LOOKALIKE if lookalike else SAME).format(field=field)
            message = (
                "Another user of the source, kept by the rules (verified, last login, lowest id), holds this value."
            )
            holder = held[(namespace, taken[1])]
            problem = Problem(
                user["source_id"], field, code, message, holder_source_id=holder, detail=value, line=user["line"]
            )
            left_out[user["user_key"]] = [problem]
        return left_out

    def close(self) -> None:
        self.connection.close()
        self._directory.cleanup()


def _in_priority_order(rows: list[tuple[Any, ...]]) -> list[dict[str, Any]]:
    """The users of the conflicts' rows, each with its shared keys in declaration order,
    sorted by the rules: verified first, then the latest login, then the lowest id."""
    users: dict[str, dict[str, Any]] = {}
    for user_key, source_id, line, verified, last_login, _position, namespace, key, field, lookalike, value in rows:
        user = users.setdefault(
            user_key,
            {
                "user_key": user_key,
                "source_id": json.loads(source_id),
                "line": line,
                "verified": verified,
                "login": last_login,
                "keys": [],
            },
        )
        user["keys"].append((namespace, key, field, lookalike, value))
    return sorted(users.values(), key=_priority)


def _priority(user: dict[str, Any]) -> tuple[Any, ...]:
    login = user["login"]
    source_id = user["source_id"]
    by_id = (0, source_id, "") if isinstance(source_id, int) else (1, 0, str(source_id))
    return (not user["verified"], -login if login is not None else math.inf, *by_id)
