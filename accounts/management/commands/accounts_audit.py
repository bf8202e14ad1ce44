import json
import sys

from django.core import checks
from django.core.management.base import BaseCommand, CommandError

from accounts import audit
from accounts.exceptions import UniquenessError
from accounts.management.scanning import Progress, add_segments_argument, segments_option


class Command(BaseCommand):
    help = (
        "Find lock items out of step with the accounts (orphaned, missing, wrongly owned, "
        "duplicate values). With --repair, fix each with a guarded transaction. Exit status "
        "0 when the table is consistent, 1 when problems remain. Progress goes to stderr."
    )

    # Every check but the key version's (accounts.E016): this command is how a table whose
    # locks are keyed with another version gets re-keyed (the audit shows what to do).
    requires_system_checks = [checks.Tags.compatibility]

    def add_arguments(self, parser):
        parser.add_argument("--json", action="store_true", help="Print one JSON document on stdout.")
        parser.add_argument("--repair", action="store_true", help="Repair what can be repaired safely.")
        add_segments_argument(parser)

    def handle(self, *args, **options):
        segments = segments_option(options)
        progress = Progress(self.stderr)
        try:
            report = audit.run_audit(segments=segments, progress=progress.scanned)
            progress.scan_done(report.scanned, report.seconds)
            repairs = audit.repair_all(report, progress=progress.repaired) if options["repair"] else []
        except UniquenessError as error:
            raise CommandError(str(error)) from error
        left = audit.remaining(report, repairs)
        if options["json"]:
            self._print_json(report, repairs, left)
        else:
            self._print_text(report, repairs, left)
        if left or report.undeclared:
            # Like `makemigrations --check`: a status for scripts and CI, not an error message.
            sys.exit(1)

    def _print_json(self, report, repairs, left):
        data = report.as_dict()
        data["consistent"] = not left and not report.undeclared
        data["repaired"] = [result.as_dict() for result in repairs if result.repaired]
        data["not_repaired"] = [result.as_dict() for result in repairs if not result.repaired]
        data["remaining"] = [finding.as_dict() for finding in left]
        self.stdout.write(json.dumps(data, indent=2, ensure_ascii=False))

    def _print_text(self, report, repairs, left):
        self.stdout.write(
            f"{len(report.accounts):,} accounts, {len(report.locks):,} locks, "
            f"{len(report.findings):,} finding(s)."
        )
        for finding in report.findings:
            self.stdout.write(f"{finding.kind:<12} {finding.key or '-'}  {finding.describe()}")
        for namespace, count in sorted(report.undeclared.items()):
            self.stdout.write(
                self.style.WARNING(
                    f"{'undeclared':<12} {namespace}  {count:,} lock(s) in namespace {namespace}, which no "
                    "constraint declares (ACCOUNTS_UNIQUE_FIELDS changed?): the values they name are no longer "
                    "refused. Restore the declaration, or delete these locks."
                )
            )
        for result in repairs:
            label = result.action if result.repaired else result.outcome
            line = f"{label:<12} {result.finding.key}  {result.detail}".rstrip()
            self.stdout.write(self.style.SUCCESS(line) if result.repaired else self.style.WARNING(line))
        if left:
            hint = "" if repairs else " Run with --repair to fix what can be fixed safely."
            self.stdout.write(self.style.ERROR(f"{len(left):,} problem(s) remain.{hint}"))
        elif not report.undeclared:
            self.stdout.write(self.style.SUCCESS("Consistent: every value has its lock, every lock its owner."))
