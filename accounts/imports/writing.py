"""Writing candidates to the table: each one's create (every guard a sign-up sends), several
to a ``TransactWriteItems`` up to DynamoDB's 100 actions, several batches in flight.

A cancelled batch's reasons, read by position (:mod:`accounts.transactions.batches`), name
the members refused (a value the site holds: reported ``taken_on_site``; imported by an
earlier run: already there; deleted since: reported) and the others, which are sent again
at once in the next batch. A member that keeps colliding with other writes is reported
``not_written`` (running the import again writes it). When a batch's outcome cannot be
known (no answer even to resending it with its token) or DynamoDB cannot be reached, the
run stops: :class:`ImportStopped` says so, and running it again continues (what committed
counts as already there).
"""

import time
from collections import deque
from collections.abc import Callable, Iterable, Iterator
from concurrent.futures import FIRST_COMPLETED, Future, ThreadPoolExecutor, wait
from dataclasses import dataclass

from ..exceptions import InvalidTransaction, OutcomeUnknown, TokenReused, Unavailable, UniqueViolation
from ..tables import ACCOUNT_PREFIX
from ..transactions.batches import Batch, MemberOutcome, Outcome, plan_batch, predict_outcomes, run_batch
from .candidates import FIELD_NAMES, Candidate
from .reports import DELETED_SINCE_IMPORT, NOT_WRITTEN, TAKEN_ON_SITE, Problem

# Batches in flight at once, and the actions of one (at most DynamoDB's 100): measured on
# DynamoDB Local, 8 batches of about 10 users write faster than 4 of 25 (the engine holds
# every item of a transaction at once); on AWS a user costs the same in any batch.
WORKERS = 8
BATCH_ACTIONS = 40
# How many batches a member may be sent in before it is reported not written.
MEMBER_ATTEMPTS = 8


class ImportStopped(Exception):
    """The run stopped before its end: what it wrote stays, and running it again continues."""


@dataclass(frozen=True)
class Written:
    """What became of one candidate: ``created`` (now, or in a dry run: would be),
    ``already_there``, or ``problems`` (the report's lines saying why it is not imported)."""

    candidate: Candidate
    created: bool = False
    already_there: bool = False
    problems: tuple[Problem, ...] = ()


def write(
    candidates: Iterable[Candidate],
    *,
    dry_run: bool = False,
    workers: int = WORKERS,
    batch_actions: int = BATCH_ACTIONS,
) -> Iterator[Written]:
    """Send the candidates' creates in batches (``dry_run``: read what they would find
    instead, writing nothing); yields what became of each, in the order batches answer."""
    send: Callable[[Batch], list[MemberOutcome]] = predict_outcomes if dry_run else run_batch
    source = iter(candidates)
    again: deque[tuple[Candidate, int]] = deque()
    exhausted = False
    with ThreadPoolExecutor(max_workers=workers) as pool:
        in_flight: dict[Future[list[MemberOutcome]], list[tuple[Candidate, int]]] = {}
        while True:
            while len(in_flight) < workers * 2 and not (exhausted and not again):
                members, exhausted = _next_batch(again, source, exhausted, batch_actions)
                if not members:
                    break
                batch = plan_batch(
                    [candidate.first_plan if not tries else candidate.plan() for candidate, tries in members]
                )
                in_flight[pool.submit(_sent, send, batch)] = members
            if not in_flight:
                return
            done, _ = wait(in_flight, return_when=FIRST_COMPLETED)
            for future in done:
                members = in_flight.pop(future)
                outcomes = future.result()
                for (candidate, attempts), outcome in zip(members, outcomes, strict=True):
                    if outcome.outcome == Outcome.AGAIN and attempts + 1 < MEMBER_ATTEMPTS:
                        again.append((candidate, attempts + 1))
                    else:
                        yield _written(candidate, outcome)


def _next_batch(
    again: deque[tuple[Candidate, int]], source: Iterator[Candidate], exhausted: bool, batch_actions: int
) -> tuple[list[tuple[Candidate, int]], bool]:
    """The members of the next batch (those to send again first), up to ``batch_actions``
    actions; and whether the source is exhausted."""
    members: list[tuple[Candidate, int]] = []
    size = 0
    while True:
        if again:
            member = again[0]
        elif not exhausted:
            candidate = next(source, None)
            if candidate is None:
                return members, True
            again.appendleft((candidate, 0))
            member = again[0]
        else:
            return members, exhausted
        actions = member[0].action_count
        if members and size + actions > batch_actions:
            return members, exhausted
        again.popleft()
        members.append(member)
        size += actions


def _sent(send: Callable[[Batch], list[MemberOutcome]], batch: Batch) -> list[MemberOutcome]:
    """``send(batch)``, the run stopped (:class:`ImportStopped`) by what no retry mends."""
    for _ in range(2):
        try:
            return send(batch)
        except TokenReused:
            # A token DynamoDB saw with other parameters (a batch of the same members planned
            # at the same instant by a run before): plan it again, with a token of its own.
            batch.transaction.replan()
        except OutcomeUnknown as error:
            raise ImportStopped(f"{error} Run the import again: it finds what was written.") from error
        except Unavailable as error:
            raise ImportStopped(f"DynamoDB cannot be reached ({error}). Run the import again to continue.") from error
        except InvalidTransaction as error:
            raise ImportStopped(f"DynamoDB refused a batch: {error}") from error
    raise ImportStopped("A batch's token kept being refused. Run the import again to continue.")


def _written(candidate: Candidate, outcome: MemberOutcome) -> Written:
    user = candidate.user
    if outcome.outcome == Outcome.CREATED:
        return Written(candidate, created=True)
    if outcome.outcome == Outcome.EXISTS:
        return Written(candidate, already_there=True)
    if outcome.outcome == Outcome.DELETED:
        message = "An earlier run imported this user, whose account was deleted since: it is not made again."
        return Written(
            candidate, problems=(Problem(user.source_id, "id", DELETED_SINCE_IMPORT, message, line=user.line),)
        )
    if outcome.outcome == Outcome.TAKEN and outcome.refusal is not None:
        return Written(candidate, problems=tuple(_taken(candidate, outcome.refusal)))
    message = "Other writes kept colliding with this user's: run the import again to write it."
    return Written(candidate, problems=(Problem(user.source_id, "id", NOT_WRITTEN, message, line=user.line),))


def _taken(candidate: Candidate, refusal: UniqueViolation) -> list[Problem]:
    """A line per value an account of the site holds, naming the account."""
    user = candidate.user
    lookalikes = {key.namespace for key in candidate.keys if key.lookalike}
    problems = []
    for field in sorted(refusal.fields):
        owner = refusal.owners.get(field)
        holder = owner.removeprefix(ACCOUNT_PREFIX) if isinstance(owner, str) else None
        only_lookalike = bool(refusal.namespaces.get(field)) and refusal.namespaces[field] <= lookalikes
        message = (
            "An account of the site holds a value that looks the same."
            if only_lookalike
            else ("An account of the site holds this value.")
        )
        name = FIELD_NAMES.get(field, field)
        # A set's member taken (an other address, a passkey) is named; a single value is the user's own.
        members = (
            ", ".join(sorted(str(value) for value in refusal.values.get(field, ()))) if field in FIELD_NAMES else ""
        )
        detail = members or ("lookalike" if only_lookalike else None)
        problems.append(
            Problem(user.source_id, name, TAKEN_ON_SITE, message, holder_account=holder, detail=detail, line=user.line)
        )
    return problems


def rate(count: int, started: float) -> float:
    """Users a second since ``started`` (``time.monotonic()``)."""
    return count / max(time.monotonic() - started, 1e-9)
