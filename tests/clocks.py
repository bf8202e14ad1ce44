"""App "servers" whose clocks differ, in one test process.

:class:`Clocks` replaces ``time.time`` with a clock that answers each thread with its own
server's time: the true time plus the offset the thread runs under (``with
clocks.server(120):`` is a server two minutes fast; ``with clocks.process(120):`` puts every
thread there, a thread pool's too, as one server's threads share its clock). Everything the app reads the time
through (``accounts.tables.epoch_now``, sessions, signed links) follows; DynamoDB Local
does not (it runs in its own process, on the true clock).
"""

import contextlib
import threading
import time


class Clocks:
    """Per-thread clock offsets, in seconds, over the true clock."""

    def __init__(self, monkeypatch):
        self._true_time = time.time
        self._local = threading.local()
        # The offset of threads that run under no server of their own (see process).
        self._process_offset = 0.0
        self._stopped_at = None
        monkeypatch.setattr(time, "time", self.time)

    def offset(self):
        """The offset of the calling thread's server."""
        return getattr(self._local, "offset", self._process_offset)

    def time(self):
        return self.true_time() + self.offset()

    def true_time(self):
        """The true time, whatever the calling thread's server says."""
        return self._true_time() if self._stopped_at is None else self._stopped_at

    def stop(self):
        """Stop time at the start of the current second, for every server: only
        :meth:`advance` and :meth:`server` move a clock from then on."""
        self._stopped_at = float(int(self._true_time()))

    def advance(self, seconds):
        """Move the calling thread's server clock forward (time passing, for that server)."""
        self._local.offset = self.offset() + seconds

    @contextlib.contextmanager
    def process(self, offset):
        """Run the block with every thread on a server ``offset`` seconds ahead (negative:
        behind) of the true clock: the threads the code starts (an audit's Scan segments)
        included."""
        previous, own = self._process_offset, self._local.__dict__.pop("offset", None)
        self._process_offset = offset
        try:
            yield
        finally:
            self._process_offset = previous
            if own is not None:
                self._local.offset = own

    @contextlib.contextmanager
    def server(self, offset):
        """Run the block on a server whose clock is ``offset`` seconds ahead (negative:
        behind) of the true clock."""
        previous = self.offset()
        self._local.offset = offset
        try:
            yield
        finally:
            self._local.offset = previous
