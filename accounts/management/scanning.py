"""What the commands that scan the whole table share: ``--segments``, and progress lines
written to stderr so that stdout stays parseable."""

import threading
import time

from django.core.management.base import CommandError


def add_segments_argument(parser):
    """The ``--segments N`` option: DynamoDB parallel Scan segments."""
    parser.add_argument("--segments", type=int, default=1, help="Parallel Scan segments (threads). Default 1.")


def segments_option(options):
    """The ``--segments`` value, refused below 1."""
    if options["segments"] < 1:
        raise CommandError("--segments must be at least 1.")
    return options["segments"]


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
