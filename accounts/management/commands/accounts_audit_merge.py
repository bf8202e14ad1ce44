import json

from django.core.management.base import BaseCommand, CommandError

from accounts import audit
from accounts.audit import reports
from accounts.audit.checking import Scope
from accounts.exceptions import UniquenessError
from accounts.management.reporting import write_report
from accounts.management.scanning import Progress


class Command(BaseCommand):
    help = (
        "Merge the --json reports of an audit run in slices (accounts_audit --segment I "
        "--total-segments N, one per process or machine) into the report of the whole table, "
        "keep it as the last report, and print it. They must cover every segment once. With "
        "--repair, fix what can be fixed, each with a guarded transaction. Exit status 0 when "
        "the table is consistent, 1 when problems remain."
    )

    def add_arguments(self, parser):
        parser.add_argument(
            "reports", nargs="+", metavar="REPORT", help="A slice's report (the JSON file its --json wrote)."
        )
        parser.add_argument("--json", action="store_true", help="Print the merged report as JSON on stdout.")
        parser.add_argument("--repair", action="store_true", help="Repair what can be repaired safely.")

    def handle(self, *args, **options):
        scope = Scope(audit.audited_models())
        try:
            slices = [audit.report_from_document(self._read(path), scope) for path in options["reports"]]
            report = audit.merge_reports(slices)
        except audit.InvalidReport as error:
            raise CommandError(str(error)) from error
        try:
            progress = Progress(self.stderr)
            repairs = audit.repair_all(report, progress=progress.repaired) if options["repair"] else []
            reports.store_report(report, source="merge", repairs=repairs)
        except UniquenessError as error:
            raise CommandError(str(error)) from error
        write_report(self, report, repairs, as_json=options["json"])

    def _read(self, path):
        try:
            with open(path, encoding="utf-8") as source:
                return json.load(source)
        except (OSError, ValueError) as error:
            raise CommandError(f"Cannot read report {path}: {error}") from error
