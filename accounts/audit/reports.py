"""Audit reports kept in the table, so the staff pages show the last one without scanning.

- one item per run: ``PK=AUDIT#RUNS``, ``SK=RUN#<run id>`` (a run's id starts with its
  start time, so they sort by it), with its status
  (``running``, updated as it reads; ``finished``; ``failed``), start, end, counts and the
  findings per kind; the newest run is one ``Query`` away;
- one item per finding: ``PK=AUDIT#<run id>``, ``SK=FINDING#<n>`` (report order), the
  finding as :func:`.records.finding_record` writes it, and how a repair from the staff
  page ended, once one was tried.

Every item carries ``expires`` (the table's TTL attribute): reports are kept
:data:`REPORT_DAYS` days, then DynamoDB deletes them.
"""

import json
import time
import uuid
from dataclasses import dataclass
from datetime import datetime, timedelta

import botocore.exceptions

from .. import dynamo
from ..tables import TTL_ATTRIBUTE, utcnow
from .findings import KINDS
from .records import finding_from_record, finding_record

RUNS_PK = "AUDIT#RUNS"
RUN_SORT_PREFIX = "RUN#"
FINDINGS_PREFIX = "AUDIT#"
FINDING_SORT_PREFIX = "FINDING#"
REPORT_DAYS = 90
RUNNING, FINISHED, FAILED = "running", "finished", "failed"
# A running audit that has not reported for this long is taken as dead (its process ended).
STALE_SECONDS = 120


@dataclass(frozen=True)
class StoredRun:
    """An audit run as the table keeps it."""

    run_id: str
    sort_key: str
    status: str
    started: datetime
    updated: datetime
    finished: datetime = None
    scanned: int = 0
    accounts: int = 0
    locks: int = 0
    estimated: int = 0
    findings: int = 0
    repairable: int = 0
    kinds: dict = None
    source: str = ""
    error: str = ""

    @property
    def running(self):
        """Still reading, and heard from lately."""
        return self.status == RUNNING and (utcnow() - self.updated).total_seconds() < STALE_SECONDS

    @property
    def stalled(self):
        """Said it was running, but has not been heard from for :data:`STALE_SECONDS`."""
        return self.status == RUNNING and not self.running

    @property
    def percent(self):
        """How much of the table it has read (by the table's estimated item count), or ``None``."""
        return min(100, int(100 * self.scanned / self.estimated)) if self.estimated else None

    @property
    def expected_end(self):
        """When it should be done at its rate so far, or ``None``."""
        elapsed = (self.updated - self.started).total_seconds()
        if not self.estimated or not self.scanned or elapsed <= 0:
            return None
        left = max(0.0, (self.estimated - self.scanned) / (self.scanned / elapsed))
        return self.updated + timedelta(seconds=left)


def _expires():
    return {"N": str(int(time.time()) + REPORT_DAYS * 86400)}


def _moment(raw, name):
    value = raw.get(name, {}).get("S")
    return datetime.fromisoformat(value) if value else None


def _number(raw, name):
    return int(raw.get(name, {}).get("N", "0"))


def new_run_id():
    """A run's id: its start time (so runs sort by it) and a random part."""
    return f"{utcnow():%Y%m%dT%H%M%S.%f}-{uuid.uuid4().hex[:6]}"


def _run_item(run_id, started, status, **values):
    item = {
        "PK": {"S": RUNS_PK},
        "SK": {"S": RUN_SORT_PREFIX + run_id},
        "run_id": {"S": run_id},
        "status": {"S": status},
        "started": {"S": started.isoformat()},
        "updated": {"S": utcnow().isoformat()},
        TTL_ATTRIBUTE: _expires(),
    }
    for name, value in values.items():
        if value is None:
            continue
        if isinstance(value, datetime):
            item[name] = {"S": value.isoformat()}
        elif isinstance(value, int):
            item[name] = {"N": str(value)}
        else:
            item[name] = {"S": str(value)}
    return item


def record_progress(run_id, started, *, scanned, estimated, source):
    """Say that run ``run_id`` is reading, and how far it got (one ``PutItem``)."""
    item = _run_item(run_id, started, RUNNING, scanned=scanned, estimated=estimated, source=source)
    dynamo.call("put_item", TableName=dynamo.table_name(), Item=item)


def record_failure(run_id, started, error, *, source):
    """Say that run ``run_id`` ended without a report."""
    item = _run_item(run_id, started, FAILED, error=error, source=source, finished=utcnow())
    dynamo.call("put_item", TableName=dynamo.table_name(), Item=item)


def store_report(report, *, source, repairs=()):
    """Keep ``report`` (of the whole table) as the newest run and its findings, with the
    outcome of the ``repairs`` already made of them."""
    kinds = {kind: len(report.of_kind(kind)) for kind in KINDS}
    started = report.started or utcnow()
    outcomes = {id(result.finding): result.outcome for result in repairs}
    findings = []
    for index, finding in enumerate(report.findings):
        item = {
            "PK": {"S": FINDINGS_PREFIX + report.run_id},
            "SK": {"S": f"{FINDING_SORT_PREFIX}{index:08d}"},
            "finding": {"S": json.dumps(finding_record(finding), ensure_ascii=False)},
            TTL_ATTRIBUTE: _expires(),
        }
        if id(finding) in outcomes:
            item["outcome"] = {"S": outcomes[id(finding)]}
        findings.append(item)
    dynamo.batch_write(puts=findings)
    run = _run_item(
        report.run_id,
        started,
        FINISHED,
        finished=report.finished or utcnow(),
        scanned=report.scanned,
        accounts=report.accounts,
        locks=report.locks,
        estimated=report.scanned,
        findings=len(report.findings),
        repairable=sum(1 for finding in report.findings if finding.repairable),
        kinds=json.dumps(kinds),
        source=source,
    )
    dynamo.call("put_item", TableName=dynamo.table_name(), Item=run)


def _stored_run(raw):
    return StoredRun(
        run_id=raw["run_id"]["S"],
        sort_key=raw["SK"]["S"],
        status=raw["status"]["S"],
        started=_moment(raw, "started"),
        updated=_moment(raw, "updated"),
        finished=_moment(raw, "finished"),
        scanned=_number(raw, "scanned"),
        accounts=_number(raw, "accounts"),
        locks=_number(raw, "locks"),
        estimated=_number(raw, "estimated"),
        findings=_number(raw, "findings"),
        repairable=_number(raw, "repairable"),
        kinds=json.loads(raw["kinds"]["S"]) if "kinds" in raw else {},
        source=raw.get("source", {}).get("S", ""),
        error=raw.get("error", {}).get("S", ""),
    )


def recent_runs(limit=10):
    """The newest runs, newest first (one ``Query``)."""
    items, _ = dynamo.query_page(RUNS_PK, limit=limit, descending=True)
    return [_stored_run(raw) for raw in items]


def latest_finished(runs):
    """The newest finished run among ``runs`` (newest first), or ``None``."""
    return next((run for run in runs if run.status == FINISHED), None)


@dataclass(frozen=True)
class StoredFinding:
    """A finding of a stored report, and how a repair from the staff page ended (``""``:
    none tried)."""

    run_id: str
    index: int
    finding: object
    outcome: str = ""


def stored_findings(run_id, scope, *, start_key=None, limit=100):
    """One page of run ``run_id``'s findings: ``(StoredFinding list, key of the next page
    or None)`` (one ``Query``)."""
    items, last_key = dynamo.query_page(FINDINGS_PREFIX + run_id, limit=limit, start_key=start_key)
    found = []
    for raw in items:
        index = int(raw["SK"]["S"][len(FINDING_SORT_PREFIX) :])
        finding = finding_from_record(json.loads(raw["finding"]["S"]), scope)
        found.append(StoredFinding(run_id, index, finding, raw.get("outcome", {}).get("S", "")))
    return found, last_key


def page_key(run_id, index):
    """The key from which :func:`stored_findings` reads the findings after ``index``."""
    return {"PK": {"S": FINDINGS_PREFIX + run_id}, "SK": {"S": f"{FINDING_SORT_PREFIX}{index:08d}"}}


def record_outcome(run_id, index, outcome):
    """Remember how a repair of stored finding ``index`` ended (one ``UpdateItem``; a
    finding no longer stored is left alone)."""
    try:
        dynamo.call(
            "update_item",
            TableName=dynamo.table_name(),
            Key=page_key(run_id, index),
            UpdateExpression="SET outcome = :outcome",
            ConditionExpression="attribute_exists(PK)",
            ExpressionAttributeValues={":outcome": {"S": outcome}},
        )
    except botocore.exceptions.ClientError as error:
        if error.response.get("Error", {}).get("Code") != "ConditionalCheckFailedException":
            raise
