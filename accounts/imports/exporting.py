"""The offline path (``accounts_import --to-export DIR``): no write to any table, but the
items a run would create, written as a DynamoDB export (the layout ``accounts_export``
writes and ``aws dynamodb import-table`` reads, DYNAMODB_JSON), for a NEW table of 10^7 or
10^8 users made without consuming write capacity.

The items are those the creates would Put, taken from the very transactions a run sends
(:meth:`~.candidates.Candidate.plan`): each account, its locks, its passkeys' items, its
staff registry entry; and the record of the key version the locks are keyed with. Conflicts
are resolved among the source's users only: the table does not exist yet.
"""

from collections.abc import Callable, Iterable
from pathlib import Path

from ..audit.exports import ITEMS_PER_FILE, DataFile, ExportWriter
from ..identifiers import KEY_VERSION
from ..tables import KEY_VERSION_ITEM
from .candidates import Candidate


def key_version_item() -> dict[str, dict[str, str]]:
    """The item recording the key version of the table's locks (see
    :func:`accounts.tables.record_key_version`), which a new table's system check reads."""
    return {**KEY_VERSION_ITEM, "key_version": {"S": KEY_VERSION}}


def write_export_of(
    candidates: Iterable[Candidate], directory: str | Path, *, on_written: Callable[[Candidate], None]
) -> Path:
    """Write each candidate's items under ``directory/AWSDynamoDB/<export id>/``; returns
    the export's folder. ``on_written`` is called for each candidate written."""
    export = ExportWriter(directory)
    source = iter(candidates)
    done = False
    first = True
    while not done:
        with export.data_file() as data:
            if first:
                data.write(key_version_item())
                first = False
            while data.count < ITEMS_PER_FILE:
                candidate = next(source, None)
                if candidate is None:
                    done = True
                    break
                _write_items(data, candidate)
                on_written(candidate)
    return export.finish()


def _write_items(data: DataFile, candidate: Candidate) -> None:
    for action in candidate.plan().actions:
        if action.kind == "Put":
            data.write(action.body["Item"])
