"""The audit's drivers: a parallel Scan streamed page by page into rows (:mod:`.rows`),
one query over them (:mod:`.joining`), the candidates read again (:mod:`.confirming`); or
the same over a DynamoDB export (:func:`run_export_audit`), or over another engine's
candidates (:func:`run_findings_audit`).

The table is read as AWS documents for whole-table jobs: ``TotalSegments`` Scan segments,
each streamed one page at a time. One process may read every segment with a thread each
(``segments=K``), or one segment of ``N`` (``segment=I, total_segments=N``): N processes
on N machines then each audit a slice, and :func:`.records.merge_reports` joins their
reports. Memory is bounded by the pages in flight (one per thread), the join's
``ACCOUNTS_AUDIT_MEMORY_LIMIT`` and the findings: the rows wait on disk.

A run can be stopped and continued: with a ``checkpoint`` (:class:`.checkpoints.Checkpoint`)
the last finished page of each segment, its counts and its row files are saved every
:data:`CHECKPOINT_SECONDS` and when the run stops, and a run given the same checkpoint
continues from there.
"""

import shutil
import tempfile
import threading
import time
from concurrent.futures import FIRST_EXCEPTION, ThreadPoolExecutor, wait
from pathlib import Path

from .. import dynamo
from ..tables import epoch_now, plain_client, utcnow
from .checking import PageCounts, Scope
from .checkpoints import RunState, SegmentState
from .confirming import confirmed_findings
from .exports import read_export
from .findings import Findings, Report
from .joining import candidates, candidates_from_records
from .reading import Reader
from .reports import new_run_id
from .rows import ROWS_PER_FILE, RowFiles, SegmentRows, drop_files_after, file_name
from .scope import audited_models

# Items a Scan page reads at most (1 MB of data, whichever comes first): a page's items
# and the reads they need are what a thread holds in memory.
PAGE_SIZE = 1000
CHECKPOINT_SECONDS = 2.0


class AuditStopped(Exception):
    """The run was stopped (Ctrl-C, SIGTERM) before reading every page; its checkpoint,
    if any, holds where each segment got to."""

    def __init__(self, report):
        self.report = report
        super().__init__(f"The audit was stopped after {report.scanned:,} items.")


def estimated_items():
    """The table's item count as DynamoDB last computed it (AWS updates it about every six
    hours): what a progress bar measures against. One ``DescribeTable``."""
    answer = dynamo.call("describe_table", TableName=dynamo.table_name())
    return answer["Table"].get("ItemCount", 0)


def run_audit(
    model_class=None,
    *,
    segments=1,
    segment=None,
    total_segments=None,
    progress=None,
    on_finding=None,
    budget=None,
    checkpoint=None,
    page_size=PAGE_SIZE,
    stop=None,
    run_id=None,
):
    """Read the table and return a :class:`~.findings.Report` of every lock out of step.

    Covers ``model_class`` alone when given, else the accounts and every model of
    ``ACCOUNTS_UNIQUE_MODELS``. ``segments`` > 1 reads the table with that many parallel
    Scan segments (threads); ``segment=I, total_segments=N`` reads slice ``I`` of ``N``
    only. ``progress(scanned)`` is called after each page, from the scanning threads, with
    the items scanned so far; ``on_finding(finding)`` when a page finds a key not found
    before. ``budget`` (:class:`.reading.ReadBudget`) caps the read units per second;
    ``checkpoint`` makes the run resumable; setting the ``stop`` event (or Ctrl-C) ends it
    after the pages in flight, raising :class:`AuditStopped`. ``run_id`` names a new run
    (default: :func:`.reports.new_run_id`).
    """
    if segment is None:
        if total_segments is not None:
            raise ValueError("total_segments goes with segment.")
        if segments < 1:
            raise ValueError("segments must be at least 1.")
        covered, total = tuple(range(segments)), segments
    else:
        if total_segments is None or not 0 <= segment < total_segments:
            raise ValueError("segment must be between 0 and total_segments - 1.")
        covered, total = (segment,), total_segments
    scope = _scope(model_class)
    reader = Reader(plain_client(), scope.models[0].Meta.table_name, budget=budget)
    state = checkpoint.load(scope, covered, total) if checkpoint is not None else None
    if checkpoint is not None:
        rows_directory, temporary = checkpoint.rows_directory, None
        if state is None:
            shutil.rmtree(rows_directory, ignore_errors=True)
        else:
            for index, segment_state in state.segments.items():
                drop_files_after(rows_directory, index, segment_state.files)
    else:
        temporary = tempfile.TemporaryDirectory(prefix="accounts-audit-")
        rows_directory = Path(temporary.name)
    if state is None:
        segments_state = {index: SegmentState() for index in covered}
        state = RunState(run_id or new_run_id(), total, segments_state, Findings(), utcnow())
    job = _Job(
        rows_directory, scope, reader, state, progress, on_finding, checkpoint, page_size, stop or threading.Event()
    )
    try:
        return job.run()
    finally:
        if temporary is not None:
            temporary.cleanup()


def run_export_audit(source, model_class=None, *, progress=None, on_finding=None, budget=None, run_id=None):
    """A :class:`~.findings.Report` of the DynamoDB export at ``source`` (a directory or
    ``s3://bucket/prefix``, see :mod:`.exports`) instead of a Scan of the table.

    The export's items are read file by file into the same rows as a Scan's, joined by the
    same query, and every candidate is confirmed against the live table with consistent
    reads (``budget`` paces them), as a Scan's are. The report counts what the export held.
    """
    export = read_export(source)
    scope = _scope(model_class)
    reader = Reader(plain_client(), scope.models[0].Meta.table_name, budget=budget)
    started, began = utcnow(), time.perf_counter()
    counts = PageCounts()
    with tempfile.TemporaryDirectory(prefix="accounts-audit-") as directory:
        rows_directory = Path(directory)
        for number, data_file in enumerate(export.files):
            files = RowFiles(rows_directory, file_name(0, number))
            page = []
            for raw in export.items(data_file):
                page.append(raw)
                if len(page) == PAGE_SIZE:
                    _add_export_page(files, page, scope, counts, progress)
                    page = []
            _add_export_page(files, page, scope, counts, progress)
            files.close()
        findings = Findings()
        for finding in confirmed_findings(candidates(rows_directory), scope, reader):
            if findings.add(finding) and on_finding is not None:
                on_finding(finding)
    return Report(
        scanned=counts.scanned,
        accounts=counts.accounts,
        locks=counts.locks,
        segments=1,
        seconds=time.perf_counter() - began,
        findings=findings.sorted(),
        run_id=run_id or new_run_id(),
        started=started,
        finished=utcnow(),
    )


def _add_export_page(files, page, scope, counts, progress):
    rows = SegmentRows()
    read = rows.add_page(page, scope, epoch_now())
    files.write(rows)
    counts.scanned += read.scanned
    counts.accounts += read.accounts
    counts.locks += read.locks
    if progress is not None:
        progress(counts.scanned)


def run_findings_audit(records, model_class=None, *, on_finding=None, budget=None, run_id=None):
    """A :class:`~.findings.Report` of the candidates another engine computed with
    ``findings.sql`` (Athena over an export: ``records`` are its answer's rows, as dicts),
    each confirmed against the live table with consistent reads. The report reads no item
    but the candidates': its counts are zero."""
    scope = _scope(model_class)
    reader = Reader(plain_client(), scope.models[0].Meta.table_name, budget=budget)
    started, began = utcnow(), time.perf_counter()
    findings = Findings()
    for finding in confirmed_findings(candidates_from_records(records), scope, reader):
        if findings.add(finding) and on_finding is not None:
            on_finding(finding)
    return Report(
        scanned=0,
        accounts=0,
        locks=0,
        segments=1,
        seconds=time.perf_counter() - began,
        findings=findings.sorted(),
        run_id=run_id or new_run_id(),
        started=started,
        finished=utcnow(),
    )


def _scope(model_class):
    models = audited_models()
    return Scope([model_class], others=models) if model_class is not None else Scope(models)


class _Job:
    def __init__(self, rows_directory, scope, reader, state, progress, on_finding, checkpoint, page_size, stop):
        self.rows_directory = rows_directory
        self.scope = scope
        self.reader = reader
        self.state = state
        self.progress = progress
        self.on_finding = on_finding
        self.checkpoint = checkpoint
        self.page_size = page_size
        self.stop = stop
        self._saved_at = time.monotonic()
        self._began = time.perf_counter()
        self._earlier_seconds = state.seconds
        self.files = {}

    def run(self):
        pending = [index for index, segment in self.state.segments.items() if not segment.done]
        pool = ThreadPoolExecutor(max_workers=max(1, len(pending)), thread_name_prefix="audit")
        futures = [pool.submit(self._scan_segment, index) for index in pending]
        try:
            wait(futures, return_when=FIRST_EXCEPTION)
        except KeyboardInterrupt:
            pass  # the segments stop after their current page; the checkpoint says where
        finally:
            # A failed segment, or a stop, ends the others after their current page.
            self.stop.set()
            pool.shutdown(wait=True)
        self.state.seconds = self._seconds()
        for future in futures:
            if future.exception() is not None:
                self._save()
                raise future.exception()
        if not all(segment.done for segment in self.state.segments.values()):
            self._save()
            raise AuditStopped(self._report())
        self._join()
        report = self._report()
        if self.checkpoint is not None:
            self.checkpoint.finish()
        return report

    def _scan_segment(self, index):
        segment = self.state.segments[index]
        while not self.stop.is_set():
            now = epoch_now()
            raw_items, last_key, scanned = self.reader.scan_page(
                index,
                self.state.total_segments,
                segment.last_key,
                attributes=self.scope.attributes,
                limit=self.page_size,
            )
            page = SegmentRows()
            counts = page.add_page(raw_items, self.scope, now)
            with self.state.lock:
                # A page counts, and moves the segment on, together with its rows, so a
                # checkpoint never holds one without the other.
                self._keep_rows(index, page)
                segment.last_key = last_key
                segment.done = last_key is None
                segment.scanned += scanned
                segment.accounts += counts.accounts
                segment.locks += counts.locks
                scanned_so_far = self.state.scanned
            if self.progress is not None:
                self.progress(scanned_so_far)
            self._save_now_and_then()
            if segment.done:
                return

    def _keep_rows(self, index, page):
        """Write a page's rows to its segment's files (the caller holds the state's lock)."""
        files = self.files.get(index)
        if files is None:
            name = file_name(index, self.state.segments[index].files)
            files = self.files[index] = RowFiles(self.rows_directory, name)
        files.write(page)
        if files.rows >= ROWS_PER_FILE:
            self._close_files(index)

    def _close_files(self, index):
        self.files.pop(index).close()
        self.state.segments[index].files += 1

    def _join(self):
        """The candidates of every row this run read, confirmed by reading them again."""
        for index in list(self.files):
            self._close_files(index)
        for finding in confirmed_findings(candidates(self.rows_directory), self.scope, self.reader):
            if self.state.findings.add(finding) and self.on_finding is not None:
                self.on_finding(finding)

    def _save_now_and_then(self):
        if self.checkpoint is None or time.monotonic() - self._saved_at < CHECKPOINT_SECONDS:
            return
        self._save()

    def _save(self):
        if self.checkpoint is None:
            return
        with self.state.lock:
            self._saved_at = time.monotonic()
            self.state.seconds = self._seconds()
            # A checkpoint names complete files only: the pages after it are read again.
            for index in list(self.files):
                self._close_files(index)
            self.checkpoint.save(self.state)

    def _seconds(self):
        """Seconds this run has read for, earlier sessions of a resumed run included."""
        return self._earlier_seconds + time.perf_counter() - self._began

    def _report(self):
        segments = self.state.segments.values()
        return Report(
            scanned=sum(segment.scanned for segment in segments),
            accounts=sum(segment.accounts for segment in segments),
            locks=sum(segment.locks for segment in segments),
            segments=len(self.state.segments),
            seconds=self.state.seconds,
            findings=self.state.findings.sorted(),
            total_segments=self.state.total_segments,
            covered=tuple(sorted(self.state.segments)),
            run_id=self.state.run_id,
            started=self.state.started,
            finished=utcnow(),
        )
