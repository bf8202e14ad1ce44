"""What an import reports: one JSON line per source user not imported (and per thing of an
imported user that could not be carried), and the run's counts.

A line holds at least ``source_id`` (the source's own primary key, as it is there), ``field``,
``code`` and, for a value somebody else holds, ``holder_source_id`` (another user of the
source won it) or ``holder_account`` (an account of the site holds it).
"""

import json
from dataclasses import dataclass, field
from typing import IO, Any

# A source user not imported:
SAME = "same_{field}"  # another source user has the same value (after normalization)
LOOKALIKE = "lookalike_{field}"  # ... or one that looks the same (the skeleton's lock)
TAKEN_ON_SITE = "taken_on_site"  # an account of the site holds the value
INVALID = "invalid"  # the value breaks the site's rules (the sign-up form's), or cannot be read
UNKNOWN_HASHER = "unknown_hasher"  # the password's algorithm is not in PASSWORD_HASHERS
DUPLICATE_ID = "duplicate_id"  # several source users share the id: none is imported
DELETED_SINCE_IMPORT = "deleted_since_import"  # imported once, deleted since: never created again
NOT_WRITTEN = "not_written"  # kept colliding with other writes: run the import again
# An imported user, something of whom was not carried:
EXTRA_ADDRESS_NOT_IMPORTED = "extra_address_not_imported"
IDENTITY_NOT_IMPORTED = "identity_not_imported"

# The codes that leave a user out (the others are about a user who was imported).
NOT_IMPORTED = frozenset({TAKEN_ON_SITE, INVALID, UNKNOWN_HASHER, DUPLICATE_ID, DELETED_SINCE_IMPORT, NOT_WRITTEN})


@dataclass(frozen=True)
class Problem:
    """One line of the report."""

    source_id: Any
    field: str
    code: str
    message: str = ""
    holder_source_id: Any = None
    holder_account: str | None = None
    # The value's detail: the rule it breaks (``username_at``), the address not carried...
    detail: str | None = None
    line: int | None = None

    @property
    def leaves_user_out(self) -> bool:
        """Whether the user this line is about was not imported."""
        return self.code in NOT_IMPORTED or self.code.startswith(("same_", "lookalike_"))

    def as_json(self) -> str:
        """The report's line: ``None`` values left out."""
        document = {name: value for name, value in self.__dict__.items() if value is not None and value != ""}
        document["source_id"] = self.source_id
        return json.dumps(document, ensure_ascii=False, default=str)


@dataclass
class Summary:
    """The counts of a run: ``imported`` (created now, or, in a dry run, that would be),
    ``already_there`` (imported by an earlier run), ``reported`` (users left out) and
    ``notes`` (lines about users imported all the same)."""

    imported: int = 0
    already_there: int = 0
    reported: int = 0
    notes: int = 0
    read: int = 0
    problems_by_code: dict[str, int] = field(default_factory=dict)

    def add(self, problem: Problem) -> None:
        self.problems_by_code[problem.code] = self.problems_by_code.get(problem.code, 0) + 1


class ReportWriter:
    """Writes the report's lines to ``stream`` (``None``: counts only), one at a time."""

    def __init__(self, stream: IO[str] | None, summary: Summary) -> None:
        self.stream = stream
        self.summary = summary

    def write(self, problems: list[Problem]) -> None:
        """Write the lines about one source user: counted once as reported when one of
        them leaves the user out, else as notes."""
        for problem in problems:
            self.summary.add(problem)
            if self.stream is not None:
                self.stream.write(problem.as_json() + "\n")
        if any(problem.leaves_user_out for problem in problems):
            self.summary.reported += 1
        elif problems:
            self.summary.notes += len(problems)
