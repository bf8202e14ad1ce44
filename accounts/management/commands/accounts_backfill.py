import sys

from django.core.management.base import BaseCommand, CommandError

from accounts import audit
from accounts.exceptions import UniquenessError
from accounts.management.scanning import Progress, add_segments_argument, segments_option


class Command(BaseCommand):
    help = (
        "Create the missing lock items of a table whose accounts predate them, each in a "
        "guarded transaction. Values held by several accounts are listed and left alone. "
        "Exit status 1 when some value could not be locked. Progress goes to stderr."
    )

    def add_arguments(self, parser):
        parser.add_argument("--dry-run", action="store_true", help="List the locks to create; write nothing.")
        add_segments_argument(parser)

    def handle(self, *args, **options):
        segments = segments_option(options)
        dry_run = options["dry_run"]
        progress = Progress(self.stderr)
        try:
            report = audit.run_audit(segments=segments, progress=progress.scanned)
            progress.scan_done(report.scanned, report.seconds)
            repairs = [] if dry_run else audit.repair_all(report, kinds={audit.MISSING}, progress=progress.repaired)
        except UniquenessError as error:
            raise CommandError(str(error)) from error
        missing = report.of_kind(audit.MISSING)
        self.stdout.write(f"{len(report.accounts):,} accounts, {len(report.locks):,} locks already there.")
        if dry_run:
            for finding in missing:
                self.stdout.write(f"would create {finding.key}  for {finding.holder}")
            self.stdout.write(f"{len(missing):,} lock(s) to create (dry run: nothing written).")
        else:
            created = [result for result in repairs if result.repaired]
            for result in repairs:
                if not result.repaired:
                    self.stdout.write(self.style.WARNING(f"not created {result.finding.key}  {result.detail}"))
            self.stdout.write(self.style.SUCCESS(f"Created {len(created):,} lock(s)."))
        unlockable = report.of_kind(audit.DUPLICATE) + report.of_kind(audit.INVALID)
        for finding in unlockable:
            self.stdout.write(self.style.ERROR(f"cannot lock {finding.key or '-'}  {finding.describe()}"))
        others = [finding for finding in report.findings if finding.kind in (audit.ORPHANED, audit.WRONG_OWNER)]
        if others:
            self.stdout.write(
                f"{len(others):,} orphaned or wrongly owned lock(s) left as they are: run accounts_audit --repair."
            )
        failed = [result for result in repairs if not result.repaired]
        if not dry_run and (unlockable or failed):
            sys.exit(1)
