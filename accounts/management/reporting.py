"""How the audit commands print a report: text for people, JSON for scripts (stdout), and
the exit status (0: consistent, 1: problems remain)."""

import json
import sys

from accounts import audit


def write_report(command, report, repairs, *, as_json):
    """Print ``report`` and the ``repairs`` made of it on ``command``'s stdout, then exit
    with status 1 when findings remain (like ``makemigrations --check``: a status for
    scripts and CI, not an error message)."""
    left = audit.remaining(report, repairs)
    if as_json:
        _write_json(command, report, repairs, left)
    else:
        _write_text(command, report, repairs, left)
    if left:
        sys.exit(1)


def _write_json(command, report, repairs, left):
    data = audit.report_document(report)
    data["consistent"] = not left
    data["repaired"] = [result.as_dict() for result in repairs if result.repaired]
    data["not_repaired"] = [result.as_dict() for result in repairs if not result.repaired]
    data["remaining"] = [finding.as_dict() for finding in left]
    command.stdout.write(json.dumps(data, indent=2, ensure_ascii=False))


def _write_text(command, report, repairs, left):
    style = command.style
    command.stdout.write(f"{report.accounts:,} accounts, {report.locks:,} locks, {len(report.findings):,} finding(s).")
    if not report.complete:
        command.stdout.write(
            f"Slice {', '.join(map(str, report.covered))} of {report.total_segments} Scan segments: "
            "merge every slice's --json report with accounts_audit_merge."
        )
    for finding in report.findings:
        command.stdout.write(f"{finding.kind:<12} {finding.key or '-'}  {finding.describe()}")
    for result in repairs:
        label = result.action if result.repaired else result.outcome
        line = f"{label:<12} {result.finding.key}  {result.detail}".rstrip()
        command.stdout.write(style.SUCCESS(line) if result.repaired else style.WARNING(line))
    if left:
        hint = "" if repairs else " Run with --repair to fix what can be fixed safely."
        command.stdout.write(style.ERROR(f"{len(left):,} problem(s) remain.{hint}"))
    else:
        command.stdout.write(style.SUCCESS("Consistent: every value has its lock, every lock its owner."))
