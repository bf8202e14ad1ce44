"""The protocol model's files and its table of conditions (``protocol/conditions.tsv``)."""

import csv
import re
from dataclasses import dataclass
from pathlib import Path

PROTOCOL_DIR = Path(__file__).resolve().parent.parent / "protocol"
MODEL_HEADER = PROTOCOL_DIR / "model.h"
CONDITIONS = PROTOCOL_DIR / "conditions.tsv"
# A guard macro: `#define G_NAME(args)  (expression)`, one conjunct of a ConditionExpression.
GUARD_DEFINITION = re.compile(r"^#define (G_\w+)(\([^)]*\))?([ \t]+)(.+)$", re.M)


@dataclass(frozen=True)
class Row:
    """One conjunct of the condition of one action of one transaction."""

    transaction: str
    action: str
    kind: str
    condition: str
    guard: str
    since: str
    caught_by: str


def rows():
    """Every row of the table, in order."""
    lines = [line for line in CONDITIONS.read_text(encoding="utf-8").splitlines() if not line.startswith("#")]
    return [Row(**row) for row in csv.DictReader(lines, delimiter="\t")]


def model_files():
    """The runnable models: every ``.pml`` file of ``protocol/``."""
    return sorted(PROTOCOL_DIR.glob("*.pml"))


def model_headers():
    """The model's headers: ``model.h`` and the ones it includes (``sessions.h``)."""
    return sorted(PROTOCOL_DIR.glob("*.h"))


def model_text():
    """Every header of the model, one after the other."""
    return "\n".join(path.read_text(encoding="utf-8") for path in model_headers())


def guards_defined(text=None):
    """The guard macros the model's headers (or ``text``) define, in order."""
    text = model_text() if text is None else text
    return [match.group(1) for match in GUARD_DEFINITION.finditer(text)]
