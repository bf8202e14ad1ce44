"""What the commands that scan the whole table share: the options that split and pace the
Scan, and progress lines written to stderr so that stdout stays parseable."""

import threading
import time

from django.core.management.base import CommandError

from accounts import audit

# Findings named on stderr as they are found; past these, the report lists the rest.
FOUND_LINES = 100


def add_segments_argument(parser):
    """The ``--segments N`` option: DynamoDB parallel Scan segments."""
    parser.add_argument("--segments", type=int, default=1, help="Parallel Scan segments (threads). Default 1.")


def segments_option(options):
    """The ``--segments`` value, refused below 1."""
    if options["segments"] < 1:
        raise CommandError("--segments must be at least 1.")
    return options["segments"]


def add_scan_arguments(parser):
    """``--segments``, ``--segment I --total-segments N``, ``--checkpoint PATH`` and
    ``--max-read-units-per-second R``: how a whole-table job splits and paces its Scan."""
    add_segments_argument(parser)
    parser.add_argument(
        "--segment",
        type=int,
        help="Read only Scan segment I of --total-segments (one slice per process or machine).",
    )
    parser.add_argument("--total-segments", type=int, help="How many slices the table is split into.")
    parser.add_argument(
        "--checkpoint",
        metavar="PATH",
        help="Keep where the run got to in this file; run again with it to continue a stopped run.",
    )
    parser.add_argument(
        "--max-read-units-per-second",
        type=float,
        metavar="R",
        help="Read at most R read units a second (leave the table's capacity to the site).",
    )


def scan_options(options):
    """The keyword arguments of :func:`accounts.audit.run_audit` the scan options ask for."""
    segment, total = options["segment"], options["total_segments"]
    if (segment is None) != (total is None):
        raise CommandError("--segment and --total-segments go together.")
    if segment is not None:
        if total < 1 or not 0 <= segment < total:
            raise CommandError("--segment must be between 0 and --total-segments - 1.")
        if options["segments"] != 1:
            raise CommandError("A slice (--segment) is one Scan segment: leave --segments out.")
        split = {"segment": segment, "total_segments": total}
    else:
        split = {"segments": segments_option(options)}
    rate = options["max_read_units_per_second"]
    if rate is not None and rate <= 0:
        raise CommandError("--max-read-units-per-second must be positive.")
    return {
        **split,
        "budget": audit.ReadBudget(rate) if rate else None,
        "checkpoint": audit.Checkpoint(options["checkpoint"]) if options["checkpoint"] else None,
    }


def duration(seconds):
    """``1:02:03`` or ``2:03``."""
    seconds = int(seconds)
    hours, rest = divmod(seconds, 3600)
    minutes, seconds = divmod(rest, 60)
    return f"{hours}:{minutes:02}:{seconds:02}" if hours else f"{minutes}:{seconds:02}"


class Progress:
    """Writes progress to ``stream`` at most once per ``interval`` seconds: items scanned,
    their rate, and against ``expected`` items (the table's estimated count, spread over
    the slices this process reads), the share done and the time left.

    Callbacks arrive from the scanning and repairing threads, hence the lock. The last
    line of a stage is always written, so a small table still shows where it ended.
    """

    def __init__(self, stream, interval=1.0, expected=None, clock=time.monotonic):
        self._stream = stream
        self._interval = interval
        self._clock = clock
        self._lock = threading.Lock()
        self._last = float("-inf")
        self._started = clock()
        self._first = None
        self._found = 0
        self.expected = expected

    def _write(self, message, final=False):
        with self._lock:
            now = self._clock()
            if final or now - self._last >= self._interval:
                self._last = now
                self._stream.write(message)

    def describe(self, count):
        """The progress line for ``count`` items scanned."""
        now = self._clock()
        if self._first is None or now <= self._first[1]:
            # Measured from the first page on, so the earlier sessions of a resumed run (in
            # its first count) do not inflate the rate.
            self._first = self._first or (count, now)
            elapsed = now - self._started
            rate = count / elapsed if elapsed > 0 else 0.0
        else:
            rate = (count - self._first[0]) / (now - self._first[1])
        line = f"Scanned {count:,} items, {rate:,.0f} items/s"
        if self.expected:
            share = min(count / self.expected, 1.0)
            line = f"Scanned {count:,} of ~{self.expected:,} items ({share:.0%}), {rate:,.0f} items/s"
            if rate > 0:
                line += f", {duration(max(self.expected - count, 0) / rate)} left"
        return line + "..."

    def scanned(self, count):
        """Progress callback of a scan: ``count`` items read so far."""
        self._write(self.describe(count))

    def found(self, finding):
        """A page found something new (the final report may merge it with others); the
        first :data:`FOUND_LINES` are named."""
        with self._lock:
            self._found += 1
            count = self._found
        if count <= FOUND_LINES:
            self._write(f"Found: {finding.kind} {finding.key or '-'}", final=True)
        elif count == FOUND_LINES + 1:
            self._write(f"More than {FOUND_LINES} findings: the report lists them all.", final=True)

    def scan_done(self, count, seconds):
        self._write(f"Scanned {count:,} items in {seconds:.1f} s.", final=True)

    def repaired(self, done, total):
        """Progress callback of repairs: ``done`` of ``total`` finished."""
        self._write(f"Repairs: {done:,}/{total:,}", final=done == total)
