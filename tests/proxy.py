"""A counting HTTP proxy in front of DynamoDB, for round-trip and fault tests.

The app is pointed at the proxy (``ACCOUNTS_ENDPOINT_URL``); every request it forwards is
counted by operation, read from the ``X-Amz-Target`` header. Counting on the wire sees
every client the app uses and every retry, whatever library sent it.

Faults are injected on the wire too: ``proxy.fault = callable(operation) -> fault or None``
chooses, per request, :data:`RESET` (the connection is reset before anything is
forwarded: DynamoDB never sees it), :data:`DROP_ANSWER` (forwarded and answered by
DynamoDB, committed if it was a write, then the connection is reset instead of answering)
or :data:`DELAY` (forwarded after ``proxy.delay_seconds``). :meth:`CountingProxy.fail`
sets one fault for every request of an operation instead, :data:`STALL` among them (held,
never answered, as by a paused DynamoDB), until :meth:`CountingProxy.heal`.
"""

import collections
import http.client
import http.server
import socket
import struct
import threading
import time
import urllib.parse

RESET, DROP_ANSWER, DELAY, STALL = "reset", "drop_answer", "delay", "stall"

# Headers about one hop, not to be forwarded (RFC 9110, section 7.6.1).
HOP_BY_HOP = frozenset(
    {"connection", "keep-alive", "proxy-connection", "te", "trailer", "transfer-encoding", "upgrade", "content-length"}
)


class _Handler(http.server.BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"  # keep-alive, as botocore expects

    def setup(self):
        super().setup()
        self.upstream = None

    def finish(self):
        if self.upstream is not None:
            self.upstream.close()
        super().finish()

    def _reset(self):
        """Close with a TCP reset, answering nothing."""
        self.connection.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
        self.close_connection = True

    def do_POST(self):
        proxy = self.server.proxy
        body = self.rfile.read(int(self.headers.get("Content-Length", 0)))
        target = self.headers.get("X-Amz-Target", "")
        proxy.record(target)
        fault = proxy.choose_fault(target.rpartition(".")[2])
        if fault == STALL:
            proxy.released.wait(timeout=60)
            self.close_connection = True
            return
        if fault == RESET:
            return self._reset()
        if fault == DELAY:
            time.sleep(proxy.delay_seconds)
        headers = {name: value for name, value in self.headers.items() if name.lower() not in HOP_BY_HOP}
        if self.upstream is None:
            self.upstream = http.client.HTTPConnection(proxy.upstream_host, proxy.upstream_port, timeout=30)
        self.upstream.request("POST", self.path, body=body, headers=headers)
        answer = self.upstream.getresponse()
        payload = answer.read()
        if fault == DROP_ANSWER:
            return self._reset()
        self.send_response(answer.status, answer.reason)
        for name, value in answer.getheaders():
            if name.lower() not in HOP_BY_HOP:
                self.send_header(name, value)
        self.send_header("Content-Length", str(len(payload)))
        self.end_headers()
        self.wfile.write(payload)

    def log_message(self, format, *args):
        pass


class CountingProxy:
    """Forwards HTTP requests from 127.0.0.1:<port> to ``upstream_url``, counting them.

    ``counts`` maps an operation name (``GetItem``, ``TransactWriteItems``...) to how many
    requests went through.
    """

    def __init__(self, upstream_url):
        upstream = urllib.parse.urlsplit(upstream_url)
        self.upstream_host = upstream.hostname
        self.upstream_port = upstream.port or 80
        self.counts = collections.Counter()
        self.faults = collections.Counter()
        self.fault = None
        self.delay_seconds = 0.05
        self._fixed_faults = {}
        self.released = threading.Event()
        self._lock = threading.Lock()
        self._server = None
        self._thread = None

    @property
    def endpoint_url(self):
        host, port = self._server.server_address[:2]
        return f"http://{host}:{port}"

    def record(self, target):
        with self._lock:
            self.counts[target.rpartition(".")[2]] += 1

    def choose_fault(self, operation):
        """The fault to inject on a request of ``operation`` (``None``: none), counted."""
        if self.fault is not None:
            fault = self.fault(operation)
        else:
            with self._lock:
                fault = self._fixed_faults.get(operation, self._fixed_faults.get("*"))
        if fault is not None:
            with self._lock:
                self.faults[fault] += 1
        return fault

    def fail(self, operation, fault):
        """Make every request of ``operation`` (``"*"``: every request) meet ``fault``:
        :data:`STALL`, :data:`DROP_ANSWER`, :data:`RESET` or :data:`DELAY`."""
        with self._lock:
            self._fixed_faults[operation] = fault
            self.released.clear()

    def heal(self):
        """Forward everything again, and let stalled requests go (unanswered)."""
        with self._lock:
            self._fixed_faults.clear()
        self.released.set()

    def reset(self):
        """Forget what was counted so far."""
        with self._lock:
            self.counts.clear()

    def snapshot(self):
        """The counts so far, as a plain dict."""
        with self._lock:
            return dict(self.counts)

    def start(self):
        self._server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), _Handler)
        self._server.daemon_threads = True
        self._server.proxy = self
        self._thread = threading.Thread(target=self._server.serve_forever, name="dynamodb-proxy", daemon=True)
        self._thread.start()
        return self

    def stop(self):
        self.heal()
        self._server.shutdown()
        self._server.server_close()
        self._thread.join()

    def __enter__(self):
        return self.start()

    def __exit__(self, *exc_info):
        self.stop()
