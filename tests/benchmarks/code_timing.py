"""Benchmark: does asking for a login code take as long for a registered address as for an
unknown one (issue 35, finding 3)?

Run ``python -m tests.benchmarks.code_timing [--requests N] [--mail-delay S]``.

As ``tests/benchmarks/reset_timing.py`` does for the password reset: an in-memory DynamoDB
Local, an SMTP server on loopback that takes ``--mail-delay`` seconds (default 0.15: the
relay of the issue, where the answers' medians were 352 and 159 ms) to accept each mail,
and ``gunicorn project.wsgi`` (two sync workers, rate limits off, each request from a
client address of its own) mailing through it. It
posts the "Email me a code" page (``/accounts/code/``) ``N`` times for registered addresses
and ``N`` times for unknown ones, interleaved, each from a new connection, a pause between
them so that one answer's after-work does not delay the next answer, and compares the
medians of the time to the whole answer. The goal: within 2 ms of each other. The code is
made and mailed once the answer is sent (:mod:`accounts.after_response`); the answer does
the same work for both (one consistent GetItem of the address's lock, the session).
"""

import argparse
import itertools

from tests.benchmarks.reset_timing import compare, timed_form_post

ASK = "/accounts/code/"
CLIENTS = itertools.count(1)


def post_code_request(port, login):
    """Seconds from sending the "Email me a code" form for ``login`` to having read the whole
    answer, from a client address of its own (each request leaves a new anonymous session,
    which ``ACCOUNTS_ANONYMOUS_SESSION_LIMIT`` counts per address: one machine stands for
    many, through ``X-Forwarded-For``)."""
    client = next(CLIENTS)
    address = f"10.{client // 65536 % 256}.{client // 256 % 256}.{client % 256}"
    return timed_form_post(port, ASK, {"login": login}, {"X-Forwarded-For": address})


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--requests", type=int, default=50, help="requests of each kind (default 50)")
    parser.add_argument("--mail-delay", type=float, default=0.15, help="seconds the SMTP server takes per mail")
    parser.add_argument("--pause", type=float, default=0.3, help="seconds between two requests")
    compare(parser.parse_args(argv), post_code_request, "code", ACCOUNTS_TRUSTED_PROXY_COUNT="1")


if __name__ == "__main__":
    main()
