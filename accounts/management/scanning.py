"""Progress lines for long-running commands, written to stderr so stdout stays parseable."""

import threading
import time


class Progress:
    """Writes progress to ``stream`` at most once per ``interval`` seconds.

    Callbacks arrive from the scanning and repairing threads, hence the lock. The last
    line of a stage is always written, so a small table still shows where it ended.
    """

    def __init__(self, stream, interval=1.0):
        self._stream = stream
        self._interval = interval
        self._lock = threading.Lock()
        self._last = float("-inf")

    def _write(self, message, final=False):
        with self._lock:
            now = time.monotonic()
            if final or now - self._last >= self._interval:
                self._last = now
                self._stream.write(message)

    def scanned(self, count):
        """Progress callback of a scan: ``count`` items read so far."""
        self._write(f"Scanned {count:,} items...")

    def scan_done(self, count, seconds):
        self._write(f"Scanned {count:,} items in {seconds:.1f} s.", final=True)

    def repaired(self, done, total):
        """Progress callback of repairs: ``done`` of ``total`` finished."""
        self._write(f"Repairs: {done:,}/{total:,}", final=done == total)
