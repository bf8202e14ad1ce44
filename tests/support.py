"""Test helpers: request counting and injected DynamoDB answers."""

import collections
import threading

import botocore.awsrequest
import botocore.endpoint


class RequestCounter:
    """Counts HTTP requests sent to DynamoDB, by operation, across every botocore client.

    It counts at the HTTP layer, so a retried request counts each time it goes out.
    """

    def __init__(self):
        self.counts = collections.Counter()
        self._lock = threading.Lock()
        self._original = None

    def __enter__(self):
        self._original = botocore.endpoint.Endpoint._send
        counter = self

        def counting_send(endpoint, request):
            target = request.headers.get("X-Amz-Target", b"")
            if isinstance(target, bytes):
                target = target.decode()
            with counter._lock:
                counter.counts[target.rpartition(".")[2]] += 1
            return counter._original(endpoint, request)

        botocore.endpoint.Endpoint._send = counting_send
        return self

    def __exit__(self, *exc_info):
        botocore.endpoint.Endpoint._send = self._original

    def reset(self):
        with self._lock:
            self.counts.clear()

    @property
    def total(self):
        return sum(self.counts.values())


def cancellation(*codes):
    """A parsed TransactionCanceledException answer with these per-position reason codes."""
    return {
        "Error": {"Code": "TransactionCanceledException", "Message": "Transaction cancelled"},
        "CancellationReasons": [{"Code": code} for code in codes],
        "ResponseMetadata": {"HTTPStatusCode": 400},
    }


def answer_before_call(client, answers):
    """Make ``client`` answer its next TransactWriteItems calls with ``answers`` (parsed
    error responses), without sending them; later calls go to DynamoDB. Returns the list
    of requests the injected answers intercepted."""
    pending = list(answers)
    intercepted = []

    def handler(params, **kwargs):
        if not pending:
            return None
        intercepted.append(params)
        response = botocore.awsrequest.AWSResponse(None, 400, {}, None)
        return response, pending.pop(0)

    client.meta.events.register("before-call.dynamodb.TransactWriteItems", handler)
    return intercepted
