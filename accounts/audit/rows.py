"""What the audit keeps of each item it reads: compact rows in Parquet files, for one join.

A worker reading a Scan page (or an export's file) turns each item into rows, from the
item alone, and keeps nothing else of it:

- ``held``: one row per lock key a live audited item's current values map to (the keys
  computed here, through :mod:`accounts.uniqueness`, the only module that knows how a value
  becomes a key), with whether the item records that key as it should (``lock_keys``);
- ``locks``: one row per live lock item: its key, namespace, owner, whether its owner or
  ``expires`` is damaged, and whether an audited model declares its namespace;
- ``registry`` and ``members``: one row per entry of a registry an audited model keeps (the
  staff registry, ``PK=STAFF``), and one per live audited item that belongs in one (an
  active staff account), so the join finds an entry whose item is no member, and a member
  with no entry;
- ``items``: one row per live audited item, saying whether it has damage of its own (a
  value that cannot be keyed, an attribute of the wrong type: :func:`.checking.item_findings`),
  and whether its partition holds second factors (``passkeys``); and one per live credential
  item or TOTP record, naming its partition (:func:`.factors.has_factors`): the
  confirmation checks those partitions' factors against their items and locks.

Expired items and tombstones are absent to the audit as to every read: they are counted
as scanned, and leave no row. Each segment writes its rows to Parquet files of its own
(:class:`RowFiles`), a row group per page, a new file past :data:`ROWS_PER_FILE` rows or
at a checkpoint; ``findings.sql`` joins them all (:mod:`.joining`).
"""

from pathlib import Path

from ..uniqueness import LOCK_PREFIX, LOCK_SORT_KEY
from .checking import PageCounts, Scope, is_live, item_findings, namespace_of, records
from .engines import optional_module
from .factors import WEBAUTHN, has_factors
from .findings import lock_as_read, owner_named

# Rows of a segment's file before the next: files the size DuckDB reads well (a row is a
# lock key and a PK, about 100 bytes).
ROWS_PER_FILE = 1_000_000

# Each table's columns and their types (Arrow's names).
COLUMNS = {
    "held": (("lock_key", "string"), ("namespace", "string"), ("holder", "string"), ("recorded", "bool")),
    "locks": (
        ("lock_key", "string"),
        ("namespace", "string"),
        ("owner", "string"),
        ("damaged", "bool"),
        ("declared", "bool"),
    ),
    "items": (("pk", "string"), ("damaged", "bool"), ("factors", "bool")),
    "registry": (("registry_name", "string"), ("member", "string")),
    "members": (("registry_name", "string"), ("pk", "string")),
}
TABLES = tuple(COLUMNS)


class SegmentRows:
    """The rows of one page (or one export file's share), as columns."""

    def __init__(self):
        self.columns = {table: {name: [] for name, _ in COLUMNS[table]} for table in TABLES}

    def __len__(self):
        return sum(len(next(iter(columns.values()))) for columns in self.columns.values())

    def add_page(self, raw_items, scope: Scope, now: int) -> PageCounts:
        """Add the rows of one page of raw items read at ``now``."""
        counts = PageCounts(scanned=len(raw_items))
        held, locks, items = self.columns["held"], self.columns["locks"], self.columns["items"]
        registry, members = self.columns["registry"], self.columns["members"]
        passkeys = scope.constraint_of(WEBAUTHN)
        factors = passkeys is not None
        for raw in raw_items:
            if not is_live(raw, now):
                continue
            pk, sort_key = raw["PK"]["S"], raw.get("SK", {}).get("S")
            model = scope.item_model(pk, sort_key)
            if model is not None:
                counts.accounts += 1
                item = scope.item(model, raw)
                keys, damage = item_findings(pk, item, scope.constraints[model])
                items["pk"].append(pk)
                items["damaged"].append(bool(damage))
                items["factors"].append(factors and has_factors(raw))
                for constraint, key in keys:
                    held["lock_key"].append(key)
                    held["namespace"].append(constraint.namespace)
                    held["holder"].append(pk)
                    held["recorded"].append(records(item, constraint, key))
                for partition in scope.memberships(item):
                    members["registry_name"].append(partition)
                    members["pk"].append(pk)
            elif pk in scope.registries and sort_key:
                registry["registry_name"].append(pk)
                registry["member"].append(sort_key)
            elif sort_key == LOCK_SORT_KEY and pk.startswith(LOCK_PREFIX):
                namespace = namespace_of(pk)
                declared = scope.constraint_of(namespace) is not None
                if not declared and namespace in scope.skipped:
                    continue
                counts.locks += declared
                owner = lock_as_read(raw)
                locks["lock_key"].append(pk)
                locks["namespace"].append(namespace)
                locks["owner"].append(owner_named(owner))
                locks["damaged"].append(not isinstance(owner, (str, type(None))))
                locks["declared"].append(declared)
            elif factors and has_factors(raw) and scope.model_of(pk) is passkeys[0]:
                items["pk"].append(pk)
                items["damaged"].append(False)
                items["factors"].append(True)
        return counts


class RowFiles:
    """The Parquet files (one per table) a segment's rows go to, a row group per page, so a
    segment holds one page's rows in memory, whatever the table's size. A file is complete
    (renamed from ``.partial``) once :meth:`close` has written its footer."""

    def __init__(self, directory: Path, name: str):
        pyarrow = optional_module("pyarrow")
        self._parquet = optional_module("pyarrow.parquet")
        types = {"string": pyarrow.string(), "bool": pyarrow.bool_()}
        self._schemas = {
            table: pyarrow.schema([(column, types[kind]) for column, kind in columns])
            for table, columns in COLUMNS.items()
        }
        self._table = pyarrow.table
        self.rows = 0
        self._paths = {}
        self._writers = {}
        for table in TABLES:
            folder = directory / table
            folder.mkdir(parents=True, exist_ok=True)
            self._paths[table] = folder / f"{name}.parquet"
            partial = folder / f"{name}.parquet.partial"
            self._writers[table] = self._parquet.ParquetWriter(partial, self._schemas[table])

    def write(self, page: SegmentRows) -> None:
        """Write one page's rows, as a row group of each table."""
        for table, columns in page.columns.items():
            if columns[COLUMNS[table][0][0]]:
                self._writers[table].write_table(self._table(columns, schema=self._schemas[table]))
        self.rows += len(page)

    def close(self) -> None:
        """Finish every file (they are then read by the join)."""
        for table, writer in self._writers.items():
            writer.close()
            path = self._paths[table]
            path.with_name(path.name + ".partial").rename(path)


def file_name(segment: int, number: int) -> str:
    """The name of a segment's ``number``-th row file."""
    return f"segment-{segment:05d}-{number:06d}"


def drop_files_after(directory: Path, segment: int, kept: int) -> None:
    """Remove the row files of ``segment`` numbered ``kept`` and above (written after the
    checkpoint a stopped run continues from: their pages are read again)."""
    for table in TABLES:
        for path in (directory / table).glob(f"segment-{segment:05d}-*"):
            number = int(path.name.split("-")[2].split(".")[0])
            if number >= kept:
                path.unlink()
