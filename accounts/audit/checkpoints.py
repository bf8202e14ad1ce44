"""Where an audit run got to, kept in a file so a stopped run continues from its last
finished page of each Scan segment (``accounts_audit --checkpoint PATH``)."""

import json
import os
import shutil
import threading
from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path

from .findings import Findings
from .records import InvalidReport, finding_from_record, finding_record

CHECKPOINT_VERSION = 1


@dataclass
class SegmentState:
    """Where one Scan segment got to: the key to start from, and what its pages held."""

    last_key: dict = None
    done: bool = False
    scanned: int = 0
    accounts: int = 0
    locks: int = 0
    # Row files written for this segment (rows.file_name numbers them from 0).
    files: int = 0

    def as_dict(self):
        return {
            "files": self.files,
            "last_key": self.last_key,
            "done": self.done,
            "scanned": self.scanned,
            "accounts": self.accounts,
            "locks": self.locks,
        }


@dataclass
class RunState:
    """A run's progress: every segment's state, the findings so far, the time spent."""

    run_id: str
    total_segments: int
    segments: dict
    findings: Findings
    started: datetime
    seconds: float = 0.0
    lock: threading.Lock = field(default_factory=threading.Lock, repr=False)

    @property
    def scanned(self):
        return sum(state.scanned for state in self.segments.values())


class Checkpoint:
    """A JSON file holding a :class:`RunState`, replaced atomically on each save and
    removed when the run finishes."""

    def __init__(self, path):
        self.path = Path(path)

    @property
    def rows_directory(self):
        """Where the run keeps the rows it read (:mod:`.rows`), beside the checkpoint."""
        return self.path.with_name(self.path.name + ".rows")

    def load(self, scope, covered, total_segments):
        """The run saved here, or ``None`` when there is none. Raises
        :class:`~.records.InvalidReport` when it is another split of the table."""
        try:
            data = json.loads(self.path.read_text())
        except FileNotFoundError:
            return None
        except (OSError, ValueError) as error:
            raise InvalidReport(f"Checkpoint {self.path} cannot be read: {error}") from error
        if data.get("version") != CHECKPOINT_VERSION:
            raise InvalidReport(f"Checkpoint {self.path} is not a checkpoint of this version.")
        saved = tuple(sorted(int(index) for index in data["segments"]))
        if data["total_segments"] != total_segments or saved != tuple(sorted(covered)):
            raise InvalidReport(
                f"Checkpoint {self.path} is of segment(s) {', '.join(map(str, saved))} of "
                f"{data['total_segments']}; this run reads {', '.join(map(str, covered))} of {total_segments}."
            )
        return RunState(
            run_id=data["run_id"],
            total_segments=total_segments,
            segments={int(index): SegmentState(**state) for index, state in data["segments"].items()},
            findings=Findings(finding_from_record(record, scope) for record in data["findings"]),
            started=datetime.fromisoformat(data["started"]),
            seconds=data["seconds"],
        )

    def save(self, state):
        """Write ``state`` (the caller holds its lock, so no page is half counted)."""
        data = {
            "version": CHECKPOINT_VERSION,
            "run_id": state.run_id,
            "total_segments": state.total_segments,
            "started": state.started.isoformat(),
            "seconds": state.seconds,
            "segments": {str(index): segment.as_dict() for index, segment in state.segments.items()},
            "findings": [finding_record(finding) for finding in state.findings.sorted()],
        }
        partial = self.path.with_name(self.path.name + ".partial")
        partial.write_text(json.dumps(data))
        os.replace(partial, self.path)

    def finish(self):
        """The run is over: the next one starts afresh."""
        self.path.unlink(missing_ok=True)
        shutil.rmtree(self.rows_directory, ignore_errors=True)
