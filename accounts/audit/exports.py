"""DynamoDB exports to S3, as the audit reads them: a snapshot instead of a live Scan.

AWS writes a full export (``ExportTableToPointInTime``, format ``DYNAMODB_JSON``) under
``<prefix>/AWSDynamoDB/<export id>/``: ``manifest-summary.json`` (the export's time, item
count, format, and the key of the files' manifest), ``manifest-files.json`` (one JSON
object a line: each data file's ``dataFileS3Key``, ``itemCount``, ``md5Checksum``,
``etag``) and ``data/<name>.json.gz``, gzipped lines of ``{"Item": {...}}`` in DynamoDB's
own JSON (``{"S": "..."}``, numbers as text, binary as base64). An export is one instant
and consumes none of the table's read capacity.

:func:`read_export` reads one from a directory or ``s3://bucket/prefix`` (through
botocore: credentials and ``AWS_ENDPOINT_URL_S3`` as botocore finds them);
:func:`write_export` writes the same layout from a parallel Scan (``accounts_export``),
for DynamoDB Local and the tests; :class:`ExportWriter` writes it item by item
(``accounts_import --to-export``).
"""

import base64
import contextlib
import gzip
import hashlib
import io
import json
import threading
import uuid
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path

import botocore.session

from .. import dynamo
from ..answers import wire_item
from ..app_settings import app_settings
from ..tables import plain_client
from .reading import Reader

EXPORT_FORMAT = "DYNAMODB_JSON"
MANIFEST_VERSION = "2020-06-30"
SUMMARY = "manifest-summary.json"
FILES = "manifest-files.json"
# Items a data file of accounts_export holds at most (AWS's hold one partition's keyspace).
ITEMS_PER_FILE = 100_000


class InvalidExport(ValueError):
    """A source that holds no readable DynamoDB export in DYNAMODB_JSON."""


@dataclass(frozen=True)
class Export:
    """An export found at a source: its summary manifest and its data files' locations."""

    summary: dict
    files: tuple
    opener: object

    @property
    def export_time(self) -> datetime | None:
        """The instant the export shows the table at."""
        text = self.summary.get("exportTime")
        return datetime.fromisoformat(text.replace("Z", "+00:00")) if text else None

    def items(self, data_file: str) -> Iterator[dict]:
        """The raw items of one data file, in botocore's shape (binary values as bytes)."""
        with gzip.open(io.BytesIO(self.opener(data_file)), "rt", encoding="utf-8") as lines:
            for line in lines:
                if line.strip():
                    yield wire_item(json.loads(line)["Item"])


def read_export(source: str) -> Export:
    """The export at ``source``: a directory, or ``s3://bucket/prefix``, holding one export
    (its ``manifest-summary.json`` directly, or under ``AWSDynamoDB/<export id>/``; of
    several, the newest)."""
    if source.startswith("s3://"):
        return _read_s3_export(source)
    return _read_local_export(Path(source))


def _read_local_export(root: Path) -> Export:
    summaries = [root / SUMMARY] if (root / SUMMARY).is_file() else sorted(root.glob(f"AWSDynamoDB/*/{SUMMARY}"))
    if not summaries:
        raise InvalidExport(f"{root} holds no DynamoDB export ({SUMMARY} not found).")
    summary_path = max(summaries, key=lambda path: json.loads(path.read_text()).get("exportTime", ""))
    summary = _checked_summary(json.loads(summary_path.read_text()), summary_path)
    folder = summary_path.parent

    def opener(data_file: str) -> bytes:
        # The manifest names each file by its S3 key; on disk it sits under the export's
        # folder as it does under the export's key in S3.
        return (folder / "data" / data_file.rsplit("/data/", 1)[-1]).read_bytes()

    files = _data_files((folder / FILES).read_text())
    return Export(summary, files, opener)


def _s3_client():
    return botocore.session.get_session().create_client("s3", region_name=app_settings.REGION)


def _read_s3_export(source: str) -> Export:
    bucket, _, prefix = source[len("s3://") :].partition("/")
    client = _s3_client()
    keys = []
    for page in client.get_paginator("list_objects_v2").paginate(Bucket=bucket, Prefix=prefix):
        keys.extend(entry["Key"] for entry in page.get("Contents", ()) if entry["Key"].endswith("/" + SUMMARY))
    if not keys:
        raise InvalidExport(f"{source} holds no DynamoDB export ({SUMMARY} not found).")

    def read(key: str) -> bytes:
        return client.get_object(Bucket=bucket, Key=key)["Body"].read()

    summaries = {key: json.loads(read(key)) for key in keys}
    key = max(summaries, key=lambda found: summaries[found].get("exportTime", ""))
    summary = _checked_summary(summaries[key], f"s3://{bucket}/{key}")
    folder = key.rsplit("/", 1)[0]

    def opener(data_file: str) -> bytes:
        # Whether a manifest's keys include the export's prefix or not, a data file sits
        # under the export's own folder.
        return read(f"{folder}/data/{data_file.rsplit('/data/', 1)[-1]}")

    return Export(summary, _data_files(read(f"{folder}/{FILES}").decode()), opener)


def _checked_summary(summary: dict, where) -> dict:
    if summary.get("outputFormat") != EXPORT_FORMAT:
        raise InvalidExport(f"{where}: the audit reads exports in {EXPORT_FORMAT}, not {summary.get('outputFormat')}.")
    return summary


def _data_files(manifest: str) -> tuple:
    return tuple(json.loads(line)["dataFileS3Key"] for line in manifest.splitlines() if line.strip())


def write_export(directory: str, *, segments: int = 4, page_size: int = 1000) -> Path:
    """Write the table as AWS exports it (DYNAMODB_JSON) under
    ``<directory>/AWSDynamoDB/<export id>/``, from a parallel Scan of ``segments``
    consistent segments; returns the export's folder."""
    export = ExportWriter(directory)
    reader = Reader(plain_client(), dynamo.table_name())

    def export_segment(segment: int) -> None:
        last_key, done = None, False
        while not done:
            with export.data_file() as data:
                while data.count < ITEMS_PER_FILE:
                    items, last_key, _ = reader.scan_page(segment, segments, last_key, limit=page_size)
                    for item in items:
                        data.write(item)
                    if last_key is None:
                        done = True
                        break

    with ThreadPoolExecutor(max_workers=segments) as pool:
        list(pool.map(export_segment, range(segments)))
    return export.finish()


class DataFile:
    """One ``data/<name>.json.gz`` of an export being written, straight to disk (a file of
    100,000 items is never held in memory): :meth:`write` an item (raw, botocore's shape) at
    a time; ``count`` items so far."""

    def __init__(self, folder: Path) -> None:
        self.name = f"{uuid.uuid4().hex}.json.gz"
        self.path = folder / self.name
        self.count = 0
        self.data = gzip.GzipFile(self.path, mode="wb", mtime=0)

    def write(self, item: dict) -> None:
        self.data.write(json.dumps({"Item": item}, default=_base64).encode() + b"\n")
        self.count += 1

    def close(self) -> "hashlib._Hash":
        """Close the file; returns its MD5 (the manifest lists it)."""
        self.data.close()
        digest = hashlib.md5(usedforsecurity=False)
        with self.path.open("rb") as written:
            for chunk in iter(lambda: written.read(1 << 20), b""):
                digest.update(chunk)
        return digest


class ExportWriter:
    """An export in DynamoDB's layout (DYNAMODB_JSON) written item by item, as
    ``aws dynamodb import-table`` reads it and :func:`read_export` too: data files of at
    most :data:`ITEMS_PER_FILE` items (:meth:`data_file`, from several threads at once),
    then the manifests (:meth:`finish`)."""

    def __init__(self, directory: str | Path) -> None:
        self.export_id = f"{datetime.now(UTC):%Y%m%d%H%M%S%f}-{uuid.uuid4().hex[:8]}"
        self.base = f"AWSDynamoDB/{self.export_id}"
        self.folder = Path(directory) / self.base
        (self.folder / "data").mkdir(parents=True)
        (self.folder / "_started").touch()
        self.started = datetime.now(UTC)
        self.manifest: list[dict] = []
        self.lock = threading.Lock()

    @contextlib.contextmanager
    def data_file(self) -> Iterator[DataFile]:
        """A new data file to write items to; it is closed and listed in the manifest when
        the block ends (an empty one too: an export's segments each write one)."""
        data = DataFile(self.folder / "data")
        yield data
        digest = data.close()
        entry = {
            "itemCount": data.count,
            "md5Checksum": base64.b64encode(digest.digest()).decode(),
            "etag": digest.hexdigest(),
            "dataFileS3Key": f"{self.base}/data/{data.name}",
        }
        with self.lock:
            self.manifest.append(entry)

    def finish(self) -> Path:
        """Write the manifests; returns the export's folder."""
        files_text = "".join(json.dumps(entry) + "\n" for entry in self.manifest)
        _write_with_checksum(self.folder / FILES, files_text)
        table = f"arn:aws:dynamodb:{app_settings.REGION}:000000000000:table/{dynamo.table_name()}"
        summary = {
            "version": MANIFEST_VERSION,
            "exportArn": f"{table}/export/{self.export_id}",
            "startTime": _iso(self.started),
            "endTime": _iso(datetime.now(UTC)),
            "tableArn": table,
            "tableId": dynamo.table_name(),
            "exportTime": _iso(self.started),
            "s3Bucket": None,
            "s3Prefix": None,
            "s3SseAlgorithm": None,
            "s3SseKmsKeyId": None,
            "manifestFilesS3Key": f"{self.base}/{FILES}",
            "billedSizeBytes": sum(path.stat().st_size for path in (self.folder / "data").iterdir()),
            "itemCount": sum(entry["itemCount"] for entry in self.manifest),
            "outputFormat": EXPORT_FORMAT,
        }
        _write_with_checksum(self.folder / SUMMARY, json.dumps(summary))
        return self.folder


def _write_with_checksum(path: Path, text: str) -> None:
    path.write_text(text)
    digest = hashlib.md5(text.encode(), usedforsecurity=False).hexdigest()
    path.with_suffix(".checksum").write_text(digest)


def _base64(value):
    if isinstance(value, bytes):
        return base64.b64encode(value).decode()
    raise TypeError(f"{type(value).__name__} is not an attribute value")


def _iso(moment: datetime) -> str:
    return moment.isoformat(timespec="milliseconds").replace("+00:00", "Z")
