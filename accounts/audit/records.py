"""Reports as JSON documents: a slice's report (``accounts_audit --json``), read back, and
merged with the other slices of the table (``accounts_audit_merge``).

A document is :meth:`.findings.Report.as_dict` plus what a merge needs: the run, which
Scan segments it covered out of how many, when, and each finding's model and items as read
(so a repair from a merged report is guarded exactly as one from the run itself).
"""

from datetime import datetime

from .checking import model_path
from .findings import REGISTRY_KINDS, UNDECLARED, Finding, Findings, RegistryName, Report, UndeclaredNamespace

DOCUMENT_VERSION = 1


class InvalidReport(ValueError):
    """A document that is not an audit report, or reports that do not make one table."""


def finding_record(finding):
    """``finding`` as JSON-ready data, items as read included (raw DynamoDB attributes)."""
    return {
        **finding.as_dict(),
        "detail": finding.detail,
        "model": model_path(finding.model) if finding.model is not None else None,
        "items": {pk: item.serialize(null_check=False) for pk, item in finding.items.items()},
    }


def finding_from_record(record, scope):
    """The :class:`Finding` of :func:`finding_record`'s ``record``, its constraint and model
    looked up in ``scope``; a namespace no longer audited stands as undeclared (its finding
    is shown, and a repair of it is refused)."""
    namespace = record["namespace"]
    if record["kind"] in REGISTRY_KINDS and namespace in scope.registries:
        model, constraint = scope.registries[namespace][0], RegistryName(namespace)
    else:
        declared = None if record["kind"] == UNDECLARED else scope.constraint_of(namespace)
        model, constraint = declared or (None, UndeclaredNamespace(namespace))
    items = {}
    for pk, raw in (record.get("items") or {}).items():
        item_model = scope.model_of(pk)
        if item_model is not None:
            items[pk] = item_model.from_raw_data(raw)
    return Finding(
        record["kind"],
        constraint,
        key=record.get("key"),
        lock_exists=record.get("lock_exists", False),
        owner=record.get("owner"),
        owner_status=record.get("owner_status"),
        holders=tuple(record.get("holders", ())),
        detail=record.get("detail", ""),
        model=model,
        items=items,
        count=record.get("count", 1),
    )


def report_document(report):
    """The JSON-ready document of ``report`` (a slice's or the whole table's)."""
    data = report.as_dict()
    data["findings"] = [finding_record(finding) for finding in report.findings]
    data["report"] = {
        "version": DOCUMENT_VERSION,
        "run_id": report.run_id,
        "total_segments": report.total_segments,
        "covered": list(report.covered),
        "started": report.started.isoformat() if report.started else None,
        "finished": report.finished.isoformat() if report.finished else None,
    }
    return data


def report_from_document(document, scope):
    """The :class:`Report` of a document :func:`report_document` made."""
    try:
        meta = document["report"]
        if meta.get("version") != DOCUMENT_VERSION:
            raise InvalidReport(f"Report version {meta.get('version')!r} is not {DOCUMENT_VERSION}.")
        scanned = document["scanned"]
        return Report(
            scanned=scanned["items"],
            accounts=scanned["accounts"],
            locks=scanned["locks"],
            segments=scanned["segments"],
            seconds=scanned["seconds"],
            findings=[finding_from_record(record, scope) for record in document["findings"]],
            total_segments=meta["total_segments"],
            covered=tuple(meta["covered"]),
            run_id=meta["run_id"],
            started=_moment(meta["started"]),
            finished=_moment(meta["finished"]),
        )
    except (KeyError, TypeError, AttributeError) as error:
        raise InvalidReport(f"Not an audit report: {error!r} is missing or malformed.") from error


def _moment(text):
    return datetime.fromisoformat(text) if text else None


def merge_reports(reports):
    """One report of the whole table from the reports of its slices.

    They must share one ``total_segments`` and cover each segment exactly once; findings
    of one key seen by several slices are merged (a value held on two slices' pages).
    """
    if not reports:
        raise InvalidReport("No report to merge.")
    totals = {report.total_segments for report in reports}
    if len(totals) != 1:
        raise InvalidReport(f"The reports split the table differently: total segments {sorted(totals)}.")
    (total,) = totals
    covered = [segment for report in reports for segment in report.covered]
    repeated = sorted({segment for segment in covered if covered.count(segment) > 1})
    missing = sorted(set(range(total)) - set(covered))
    if repeated or missing:
        problems = []
        if missing:
            problems.append(f"segment(s) {', '.join(map(str, missing))} missing")
        if repeated:
            problems.append(f"segment(s) {', '.join(map(str, repeated))} covered twice")
        raise InvalidReport(f"The reports do not cover the table once: {'; '.join(problems)}.")
    findings = Findings(finding for report in reports for finding in report.findings)
    started = min((report.started for report in reports if report.started), default=None)
    finished = max((report.finished for report in reports if report.finished), default=None)
    return Report(
        scanned=sum(report.scanned for report in reports),
        accounts=sum(report.accounts for report in reports),
        locks=sum(report.locks for report in reports),
        segments=total,
        seconds=(finished - started).total_seconds() if started and finished else max(r.seconds for r in reports),
        findings=findings.sorted(),
        total_segments=total,
        covered=tuple(range(total)),
        run_id="+".join(sorted({report.run_id for report in reports})),
        started=started,
        finished=finished,
    )
