"""An audit of the whole table started from the staff page, run in a thread of the web
process (never inside the request), its progress kept in the table for the page to show.

One at a time, as far as the table tells: while a run reported lately (from this process
or another), "run the audit" starts none.
A process that stops (a restart) ends its run; the page then shows it as stalled, and
``accounts_audit`` on the command line is the way for a table too large for a web worker.
"""

import logging
import threading
import time

from ..tables import utcnow
from . import reports
from .scan import estimated_items, run_audit

logger = logging.getLogger(__name__)

# Parallel Scan segments of an audit started from the staff page.
SEGMENTS = 4
# The page's run reports its progress at most this often (one PutItem each time).
PROGRESS_SECONDS = 2.0

_lock = threading.Lock()
_thread = None


def running_thread():
    """This process's audit thread, while it runs, else ``None``."""
    with _lock:
        return _thread if _thread is not None and _thread.is_alive() else None


def start(segments=SEGMENTS):
    """Start an audit of the whole table in a thread, unless one is running here or was
    heard from lately elsewhere. Returns the thread, or ``None`` when one already runs."""
    global _thread
    latest = reports.recent_runs(limit=1)
    if latest and latest[0].running:
        return None
    with _lock:
        if _thread is not None and _thread.is_alive():
            return None
        run_id = reports.new_run_id()
        started = utcnow()
        reports.record_progress(run_id, started, scanned=0, estimated=0, source="page")
        _thread = threading.Thread(
            target=_run, args=(run_id, started, segments), name=f"accounts-audit-{run_id}", daemon=True
        )
        _thread.start()
        return _thread


class _ProgressRecorder:
    """Writes the run's progress to the table, at most every :data:`PROGRESS_SECONDS`."""

    def __init__(self, run_id, started, estimated):
        self.run_id, self.started, self.estimated = run_id, started, estimated
        self._lock = threading.Lock()
        self._written = float("-inf")

    def __call__(self, scanned):
        with self._lock:
            if time.monotonic() - self._written < PROGRESS_SECONDS:
                return
            self._written = time.monotonic()
        reports.record_progress(self.run_id, self.started, scanned=scanned, estimated=self.estimated, source="page")


def _run(run_id, started, segments):
    try:
        recorder = _ProgressRecorder(run_id, started, estimated_items())
        recorder(0)  # the estimate, so the page can show the share done
        report = run_audit(segments=segments, run_id=run_id, progress=recorder)
        reports.store_report(report, source="page")
    except Exception as error:  # the page shows it; the log has the traceback
        logger.exception("The audit started from the staff page failed.")
        reports.record_failure(run_id, started, f"{type(error).__name__}: {error}", source="page")
