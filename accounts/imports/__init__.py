"""Moving an existing user base in (``accounts_import``): every imported user gets the locks,
guards and normalization of a sign-up; conflicts become a report; a run killed at any point
and run again ends with the same table as one run.

An import reads its source twice:

1. each user is judged as a sign-up is (:mod:`.candidates`) and the values it would hold go
   into DuckDB, whose one query finds those several source users share (:mod:`.conflicts`);
2. each user the rules keep is created (:mod:`.writing`: the sign-up's transaction, several
   users to a request), or, with ``to_export``, written as items of a DynamoDB export for
   ``aws dynamodb import-table`` (:mod:`.exporting`); every other one is reported
   (:mod:`.reports`).

Its parts: :mod:`.sources` (a Django database, a JSON-lines file), :mod:`.allauth`
(django-allauth's stored formats), :mod:`.passwords` (hashes carried as they are).
"""

from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path

from .candidates import Candidate, build_candidate, providers_by_id, source_id_text
from .conflicts import ConflictFinder
from .exporting import write_export_of
from .records import SourceUser
from .reports import Problem, ReportWriter, Summary
from .sources import Source, SourceError, SourceOptions, open_source
from .writing import BATCH_ACTIONS, WORKERS, ImportStopped, write

__all__ = [
    "ImportStopped",
    "Problem",
    "Source",
    "SourceError",
    "SourceOptions",
    "Summary",
    "open_source",
    "run_import",
]


@dataclass
class Progress:
    """Where a run is, for its progress lines: ``stage`` (``reading``, ``writing``) and the
    users done in it."""

    stage: str
    done: int
    summary: Summary


def user_key(user: SourceUser) -> str:
    """What tells a source's users apart from one reading to the next: its line in a
    JSON-lines file (ids may repeat there), its id in a database."""
    return f"line {user.line}" if user.line is not None else source_id_text(user.source_id)


def run_import(
    source: Source,
    *,
    report: ReportWriter,
    dry_run: bool = False,
    to_export: str | Path | None = None,
    workers: int = WORKERS,
    batch_actions: int = BATCH_ACTIONS,
    on_progress: Callable[[Progress], None] | None = None,
) -> Summary:
    """Import ``source``'s users (see the module); writes the report's lines to ``report``
    and returns the run's counts. ``dry_run``: write nothing, report what a run would;
    ``to_export``: write nothing to the table, but a DynamoDB export under that directory;
    ``workers`` batches of at most ``batch_actions`` actions in flight.
    Raises :class:`ImportStopped` when the run could not finish (running it again continues)."""
    summary = report.summary
    providers = providers_by_id()
    finder = ConflictFinder()
    try:
        for done, user in enumerate(source.users(), start=1):
            key = user_key(user)
            finder.add_id(key, None if user.source_id is None else source_id_text(user.source_id), user.line)
            built = build_candidate(user, providers)
            if isinstance(built, Candidate):
                finder.add(key, source_id_text(user.source_id), user.line, built.verified, user.last_login, built.keys)
            _tell(on_progress, "reading", done, summary)
        left_out = finder.left_out()
    finally:
        finder.close()
    candidates = _kept(source, providers, left_out, report, on_progress)
    try:
        if to_export is not None:
            write_export_of(candidates, to_export, on_written=lambda candidate: _imported(candidate, report))
            return summary
        for written in write(candidates, dry_run=dry_run, workers=workers, batch_actions=batch_actions):
            if written.problems:
                report.write([*written.problems])
                continue
            if written.created:
                summary.imported += 1
            else:
                summary.already_there += 1
            report.write(written.candidate.notes)
    except SourceError as error:
        # Read once already: what was written before the source failed stays.
        raise ImportStopped(f"{error} (on its second reading). Run the import again to continue.") from error
    return summary


def _imported(candidate: Candidate, report: ReportWriter) -> None:
    report.summary.imported += 1
    report.write(candidate.notes)


def _kept(
    source: Source,
    providers: dict[str, str],
    left_out: dict[str, list[Problem]],
    report: ReportWriter,
    on_progress: Callable[[Progress], None] | None,
) -> Iterator[Candidate]:
    """The candidates of the source's second reading that the rules keep; the others'
    lines written to the report."""
    summary = report.summary
    for done, user in enumerate(source.users(), start=1):
        summary.read = done
        _tell(on_progress, "writing", done, summary)
        problems = left_out.get(user_key(user))
        if problems:
            report.write(problems)
            continue
        built = build_candidate(user, providers)
        if isinstance(built, list):
            report.write(built)
            continue
        yield built


def _tell(on_progress: Callable[[Progress], None] | None, stage: str, done: int, summary: Summary) -> None:
    if on_progress is not None:
        on_progress(Progress(stage, done, summary))
