"""The sources an import reads: a Django project's database, or a JSON-lines file.

A database is named by a URL in django-environ's form (``sqlite:////abs/path.sqlite3``,
``postgres://...``, ``mysql://...``) and read through Django's own database backends (a
connection of its own, never the site's ``DATABASES``): the user table (``auth_user``, or
``--user-table``) a page at a time, by primary key, and django-allauth's tables where
present, for the users of each page. A SQLite file is opened read-only.

A JSON-lines file holds one user a line, the neutral format (docs/moving-users-in.md).

Both are read in a stream, each time :meth:`Source.users` is called (an import reads its
source twice: once to find conflicts, once to write), so memory does not grow with it.
What the source cannot be read as at all (a missing file, no database, no user table, a
column missing) is a :class:`SourceError`, said in one line; a user it cannot read is a
user with :attr:`~.records.SourceUser.problems`, reported.
"""

import json
import os
import uuid
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, field
from datetime import UTC, date, datetime
from pathlib import Path
from typing import Any, Protocol
from urllib.parse import quote

from django.db import DatabaseError, InterfaceError, connections
from django.db.utils import ConnectionHandler

from .allauth import RecoveryCodeFormat, addresses, identity, identity_of, read_factors
from .records import SourceProblem, SourceUser

# Users read from a database per query (each page's allauth rows in one query per table).
PAGE_SIZE = 500
SQLITE_MAGIC = b"SQLite format 3\x00"
ENGINES = {
    "django.db.backends.sqlite3": "sqlite",
    "django.db.backends.postgresql": "postgres",
    "django.db.backends.mysql": "mysql",
}
# The user table's columns: the fields an import reads, and those it cannot do without.
USER_FIELDS = (
    "email",
    "username",
    "password",
    "is_active",
    "is_staff",
    "is_superuser",
    "date_joined",
    "last_login",
)
REQUIRED_FIELDS = ("email", "password")
# django-allauth's tables, with the columns read from each.
EMAIL_TABLE = ("account_emailaddress", ("user_id", "email", "verified", "primary"))
IDENTITY_TABLE = ("socialaccount_socialaccount", ("user_id", "provider", "uid", "extra_data"))
FACTOR_TABLE = ("mfa_authenticator", ("user_id", "type", "data", "created_at", "last_used_at"))
# The neutral format's fields (id aside).
NEUTRAL_FIELDS = ("email", "username", "password", "email_verified", "is_active", "is_staff", "is_superuser")


class SourceError(Exception):
    """The source cannot be read: the import stops before writing anything."""


@dataclass(frozen=True)
class SourceOptions:
    """How to read a source: the user table and its columns by field (for a custom user
    model), and how the source site stored its second factors (allauth's MFA adapter's
    ``decrypt``, its recovery codes' format)."""

    user_table: str = "auth_user"
    columns: dict[str, str] = field(default_factory=dict)
    decrypt: Callable[[str], str] = identity
    recovery_codes: RecoveryCodeFormat = RecoveryCodeFormat()


class Source(Protocol):
    """A source of users, read in a stream each time :meth:`users` is called."""

    description: str

    def users(self) -> Iterator[SourceUser]: ...

    def close(self) -> None: ...


def open_source(source: str, options: SourceOptions = SourceOptions()) -> Source:
    """The source ``source`` names: a database URL (``scheme://...``) or a JSON-lines file."""
    if "://" in source:
        return DatabaseSource(source, options)
    return JsonLinesSource(Path(source))


def first_line(error: BaseException) -> str:
    """An error's message on one line."""
    text = str(error).strip().splitlines()
    return text[0] if text else type(error).__name__


def as_datetime(value: Any) -> datetime | None:
    """A source's date and time, in UTC (naive means UTC: how Django stores it with
    ``USE_TZ``); ``None`` for none. Raises ``ValueError`` for one that is no date."""
    if value is None or value == "":
        return None
    if isinstance(value, str):
        value = datetime.fromisoformat(value)
    elif isinstance(value, date) and not isinstance(value, datetime):
        value = datetime(value.year, value.month, value.day)
    if not isinstance(value, datetime):
        raise ValueError("not a date and time")
    return value.replace(tzinfo=UTC) if value.tzinfo is None else value.astimezone(UTC)


def _dates(user: SourceUser, joined: Any, last_login: Any) -> None:
    for name, value in (("date_joined", joined), ("last_login", last_login)):
        try:
            setattr(user, name, as_datetime(value))
        except (ValueError, TypeError, OverflowError):
            user.problems += (SourceProblem(name, "This value is not a date and time (ISO 8601)."),)


class JsonLinesSource:
    """A file of JSON lines, one user a line (the neutral format)."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self.description = str(path)
        try:
            with path.open("rb") as file:
                head = file.read(len(SQLITE_MAGIC))
        except OSError as error:
            raise SourceError(f"The source {path} cannot be read: {error.strerror or first_line(error)}.") from error
        if head == SQLITE_MAGIC:
            raise SourceError(f"{path} is a SQLite database: name it by its URL, sqlite:///{path.resolve()}")
        if not self._starts_with_an_object():
            raise SourceError(f"{path} is not a JSON-lines file: its first line is not a JSON object.")

    def _starts_with_an_object(self) -> bool:
        with self.path.open("rb") as file:
            for raw in file:
                if raw.strip():
                    try:
                        return isinstance(json.loads(raw.decode("utf-8", "surrogateescape")), dict)
                    except ValueError:
                        return False
        return True

    def users(self) -> Iterator[SourceUser]:
        with self.path.open("rb") as file:
            for number, raw in enumerate(file, start=1):
                if raw.strip():
                    yield self._user(number, raw)

    def _user(self, number: int, raw: bytes) -> SourceUser:
        try:
            document = json.loads(raw.decode("utf-8", "surrogateescape"))
        except ValueError:
            return SourceUser(None, problems=(SourceProblem("line", "This line is not JSON."),), line=number)
        if not isinstance(document, dict):
            return SourceUser(None, problems=(SourceProblem("line", "This line is not a JSON object."),), line=number)
        source_id = document.get("id")
        problems: tuple[SourceProblem, ...] = ()
        if isinstance(source_id, bool) or not isinstance(source_id, (int, str)) or source_id == "":
            problems = (SourceProblem("id", "Each user needs an id: a number or a string."),)
        user = SourceUser(source_id, line=number, problems=problems)
        for name in NEUTRAL_FIELDS:
            if name in document:
                setattr(user, name, document[name])
        _dates(user, document.get("date_joined"), document.get("last_login"))
        return user

    def close(self) -> None:
        pass


class DatabaseSource:
    """A Django project's database, read through Django's backend for its engine."""

    def __init__(self, url: str, options: SourceOptions) -> None:
        self.options = options
        config = _database_config(url)
        self.engine = ENGINES[config["ENGINE"]]
        self.description = f"{self.engine} database {config.get('NAME')}"
        self.alias, self.connection = _open_connection(config)
        try:
            self.connection.ensure_connection()
            if self.engine == "sqlite":
                # Text that is not UTF-8 reads as lone surrogates (reported), not as an error.
                self.connection.connection.text_factory = lambda data: data.decode("utf-8", "surrogateescape")
            with self.connection.cursor() as cursor:
                tables = set(self.connection.introspection.table_names(cursor))
                self.columns = self._user_columns(cursor, tables)
                self.pk = self._primary_key(cursor)
                self.side_tables = {
                    name: self._side_table(cursor, tables, name, wanted)
                    for name, wanted in (EMAIL_TABLE, IDENTITY_TABLE, FACTOR_TABLE)
                }
        except (DatabaseError, InterfaceError) as error:
            self.close()
            raise SourceError(f"The source database cannot be read: {first_line(error)}") from error
        except SourceError:
            self.close()
            raise

    def _user_columns(self, cursor: Any, tables: set[str]) -> dict[str, str]:
        table = self.options.user_table
        if table not in tables:
            raise SourceError(f"The source database has no user table {table!r} (name another with --user-table).")
        present = {column.name for column in self.connection.introspection.get_table_description(cursor, table)}
        mapped = {name: self.options.columns.get(name, name) for name in USER_FIELDS}
        missing = [
            f"{name} ({column})" for name, column in mapped.items() if name in REQUIRED_FIELDS and column not in present
        ]
        if missing:
            raise SourceError(
                f"The user table {table!r} has no column for {', '.join(missing)} (map them with --column FIELD=COLUMN)."
            )
        return {name: column for name, column in mapped.items() if column in present}

    def _primary_key(self, cursor: Any) -> str:
        pk = self.connection.introspection.get_primary_key_column(cursor, self.options.user_table)
        if pk is None:
            raise SourceError(f"The user table {self.options.user_table!r} has no primary key.")
        return str(pk)

    def _side_table(self, cursor: Any, tables: set[str], name: str, wanted: Sequence[str]) -> bool:
        """Whether allauth's table ``name`` is there (with the columns read from it)."""
        if name not in tables:
            return False
        present = {column.name for column in self.connection.introspection.get_table_description(cursor, name)}
        missing = [column for column in wanted if column not in present]
        if missing:
            raise SourceError(f"django-allauth's table {name!r} has no column {', '.join(missing)}.")
        return True

    def users(self) -> Iterator[SourceUser]:
        quote_name = self.connection.ops.quote_name
        fields = list(self.columns)
        selected = ", ".join([quote_name(self.pk), *(quote_name(self.columns[name]) for name in fields)])
        table, pk = quote_name(self.options.user_table), quote_name(self.pk)
        last = None
        while True:
            params: list[Any] = [] if last is None else [last]
            where = "" if last is None else f" WHERE {pk} > %s"
            query = f"SELECT {selected} FROM {table}{where} ORDER BY {pk} LIMIT {PAGE_SIZE}"  # noqa: S608
            rows = self._fetch(query, params)
            if not rows:
                return
            yield from self._page_users(rows, fields)
            last = rows[-1][0]

    def _fetch(self, query: str, params: Sequence[Any]) -> list[tuple[Any, ...]]:
        try:
            with self.connection.cursor() as cursor:
                cursor.execute(query, params)
                return list(cursor.fetchall())
        except (DatabaseError, InterfaceError, ValueError) as error:
            raise SourceError(f"The source database cannot be read: {first_line(error)}") from error

    def _side_rows(self, name: str, wanted: Sequence[str], ids: list[Any]) -> dict[Any, list[tuple[Any, ...]]]:
        found: dict[Any, list[tuple[Any, ...]]] = {}
        if not self.side_tables[name]:
            return found
        quote_name = self.connection.ops.quote_name
        placeholders = ", ".join(["%s"] * len(ids))
        query = (
            f"SELECT {', '.join(quote_name(column) for column in wanted)} FROM {quote_name(name)} "  # noqa: S608
            f"WHERE {quote_name('user_id')} IN ({placeholders}) ORDER BY {quote_name('id')}"
        )
        for row in self._fetch(query, ids):
            found.setdefault(row[0], []).append(tuple(row[1:]))
        return found

    def _page_users(self, rows: list[tuple[Any, ...]], fields: list[str]) -> Iterator[SourceUser]:
        ids = [row[0] for row in rows]
        emails = self._side_rows(*EMAIL_TABLE, ids)
        identities = self._side_rows(*IDENTITY_TABLE, ids)
        factors = self._side_rows(*FACTOR_TABLE, ids)
        for row in rows:
            values = dict(zip(fields, row[1:], strict=True))
            user = SourceUser(_source_id(row[0]))
            for name in ("email", "username", "password", "is_active", "is_staff", "is_superuser"):
                if name in values:
                    setattr(user, name, values[name])
            _dates(user, values.get("date_joined"), values.get("last_login"))
            primary, others = addresses(emails.get(row[0], ()), values.get("email"))
            user.email, user.email_verified, user.other_addresses = primary.email, primary.verified, tuple(others)
            user.identities = tuple(identity_of(*each) for each in identities.get(row[0], ()))
            read, problems = read_factors(
                factors.get(row[0], []), pk=row[0], decrypt=self.options.decrypt, codes=self.options.recovery_codes
            )
            user.factors = read
            user.problems += tuple(problems)
            yield user

    def close(self) -> None:
        self.connection.close()
        connections.settings.pop(self.alias, None)
        del connections[self.alias]


def _source_id(value: Any) -> Any:
    """A primary key as the report shows it: a number stays a number, anything else is text
    (a UUID, a string key)."""
    return value if isinstance(value, int) and not isinstance(value, bool) else str(value)


def _open_connection(config: dict[str, Any]) -> tuple[str, Any]:
    """A connection to the source under an alias of its own (never one of the site's
    ``DATABASES``): Django's backends find their connection by alias, in ``connections``."""
    alias = f"accounts_import_{uuid.uuid4().hex}"
    # Django's defaults for every key the entry leaves out, as for a DATABASES entry.
    connections.settings[alias] = ConnectionHandler({"default": config}).settings["default"]
    return alias, connections[alias]


def _database_config(url: str) -> dict[str, Any]:
    """Django's ``DATABASES`` entry for ``url`` (django-environ's parser), checked: an engine
    this import reads, a SQLite file that exists (opened read-only, never created)."""
    try:
        import environ
    except ImportError as error:
        raise SourceError(
            "Reading a database URL needs django-environ: pip install 'django-dynamo-accounts[import]'."
        ) from error
    scheme = url.split("://", 1)[0]
    if scheme not in environ.Env.DB_SCHEMES:
        raise SourceError(f"Unknown database scheme {scheme!r}: use sqlite://, postgres:// or mysql://.")
    config = dict(environ.Env.db_url_config(url))
    if config.get("ENGINE") not in ENGINES:
        raise SourceError(f"accounts_import reads SQLite, PostgreSQL and MySQL databases, not {scheme}://.")
    if ENGINES[config["ENGINE"]] == "sqlite":
        path = Path(config["NAME"])
        if not path.is_absolute() or not path.is_file():
            raise SourceError(
                f"No SQLite database at {config['NAME']!r} (give its absolute path: sqlite:////abs/path)."
            )
        if not os.access(path, os.R_OK):
            raise SourceError(f"The SQLite database {path} cannot be read (permissions).")
        config["NAME"] = f"file:{quote(str(path))}?mode=ro"
    return config
