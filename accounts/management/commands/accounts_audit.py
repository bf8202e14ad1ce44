import contextlib
import signal

from django.core import checks
from django.core.exceptions import ImproperlyConfigured
from django.core.management.base import BaseCommand, CommandError

from accounts import audit
from accounts.audit import reports
from accounts.exceptions import Unavailable, UniquenessError
from accounts.management.reporting import write_report
from accounts.management.scanning import Progress, add_scan_arguments, scan_options


@contextlib.contextmanager
def stop_on_sigterm():
    """Within the block, SIGTERM (a container stopped, a batch job cancelled) stops the
    run as Ctrl-C does: after the pages in flight, saving the checkpoint."""

    def interrupt(signum, frame):
        raise KeyboardInterrupt

    previous = signal.signal(signal.SIGTERM, interrupt)
    try:
        yield
    finally:
        signal.signal(signal.SIGTERM, previous)


class Command(BaseCommand):
    help = (
        "Find lock items out of step with the accounts (orphaned, missing, wrongly owned, "
        "duplicate values, undeclared namespaces), reading the table page by page. With "
        "--repair, fix each with a guarded transaction. A run of the whole table is kept in "
        "the table as the last report (the staff lock page shows it). Exit status 0 when the "
        "table is consistent, 1 when problems remain. Progress goes to stderr."
    )

    # Every check but the key version's (accounts.E016): this command is how a table whose
    # locks are keyed with another version gets re-keyed (the audit shows what to do).
    requires_system_checks = [checks.Tags.compatibility]

    def add_arguments(self, parser):
        parser.add_argument(
            "--json", action="store_true", help="Print the report (of this slice, with --segment) as JSON on stdout."
        )
        parser.add_argument("--repair", action="store_true", help="Repair what can be repaired safely.")
        add_scan_arguments(parser)
        sources = parser.add_mutually_exclusive_group()
        sources.add_argument(
            "--from-export",
            metavar="SOURCE",
            help="Read a DynamoDB export (DYNAMODB_JSON; a directory or s3://bucket/prefix) instead of "
            "scanning the table; findings are confirmed against the table.",
        )
        sources.add_argument(
            "--from-findings",
            metavar="FILE",
            help="Confirm (and with --repair, repair) the candidates another engine found with the "
            "audit's query (findings.sql): its answer as CSV or JSON.",
        )

    def handle(self, *args, **options):
        scan = scan_options(options)
        snapshot = options["from_export"] or options["from_findings"]
        if snapshot and ("segment" in scan or scan["segments"] != 1 or scan["checkpoint"]):
            raise CommandError("--from-export and --from-findings read no Scan: leave the Scan's options out.")
        if options["repair"] and "segment" in scan:
            raise CommandError(
                "A slice cannot repair: a value may be held on another slice. Merge the slices' "
                "reports with accounts_audit_merge --repair."
            )
        progress = Progress(self.stderr, expected=None if snapshot else self._expected_items(scan))
        try:
            with stop_on_sigterm():
                report = self._audit(options, scan, progress)
            progress.scan_done(report.scanned, report.seconds)
            repairs = audit.repair_all(report, progress=progress.repaired) if options["repair"] else []
            if report.complete:
                reports.store_report(report, source="command", repairs=repairs)
        except audit.AuditStopped as stopped:
            hint = " Run the same command again to continue." if scan["checkpoint"] else ""
            raise CommandError(f"{stopped}{hint}") from stopped
        except audit.InvalidReport as error:
            raise CommandError(str(error)) from error
        except (UniquenessError, ImproperlyConfigured, audit.InvalidExport, audit.InvalidFindings) as error:
            raise CommandError(str(error)) from error
        write_report(self, report, repairs, as_json=options["json"])

    def _audit(self, options, scan, progress):
        """The report of the source asked for: an export, another engine's candidates, or
        a Scan of the table."""
        if options["from_export"]:
            return audit.run_export_audit(
                options["from_export"], progress=progress.scanned, on_finding=progress.found, budget=scan["budget"]
            )
        if options["from_findings"]:
            records = audit.read_findings(options["from_findings"])
            return audit.run_findings_audit(records, on_finding=progress.found, budget=scan["budget"])
        return audit.run_audit(progress=progress.scanned, on_finding=progress.found, **scan)

    def _expected_items(self, scan):
        """The items this process should read, by the table's estimated count."""
        try:
            total = audit.estimated_items()
        except Unavailable:
            return None
        return total // scan["total_segments"] if "segment" in scan else total
