import sys

from django.core import checks
from django.core.management.base import BaseCommand, CommandError

from accounts import audit
from accounts.exceptions import UniquenessError
from accounts.management.scanning import Progress, add_segments_argument, segments_option
from accounts.staff import registry


class Command(BaseCommand):
    help = (
        "Create the missing lock items of a table whose accounts predate them, re-key the "
        "locks whose key changed (new normalization or Unicode data) and record in each account "
        "the keys it holds, each in a guarded transaction; then record the table's key version. "
        "Values held by several accounts, look-alike usernames included, are listed and left "
        "alone. Exit status 1 when some value could not be locked. Progress goes to stderr. "
        "With --staff: list every active staff account in the staff registry (accounts that "
        "predate it) instead."
    )

    # Every check but the key version's (accounts.E016): this command is how a table whose
    # locks are keyed with another version gets re-keyed (the audit shows what to do).
    requires_system_checks = [checks.Tags.compatibility]

    def add_arguments(self, parser):
        parser.add_argument("--dry-run", action="store_true", help="List the locks to create; write nothing.")
        parser.add_argument(
            "--staff",
            action="store_true",
            help="Bring the staff registry (the last-staff protection) in line with the accounts.",
        )
        add_segments_argument(parser)

    def handle(self, *args, **options):
        if options["staff"]:
            return self._backfill_staff_registry()
        segments = segments_option(options)
        dry_run = options["dry_run"]
        progress = Progress(self.stderr)
        try:
            report, repairs = audit.backfill(
                dry_run=dry_run,
                segments=segments,
                progress=progress.scanned,
                repair_progress=progress.repaired,
            )
        except UniquenessError as error:
            raise CommandError(str(error)) from error
        progress.scan_done(report.scanned, report.seconds)
        self.stdout.write(f"{report.accounts:,} accounts, {report.locks:,} locks already there.")
        if dry_run:
            self._write_plan(report)
        else:
            self._write_repairs(repairs)
        unlockable = report.of_kind(audit.DUPLICATE) + report.of_kind(audit.INVALID)
        for finding in unlockable:
            self.stdout.write(self.style.ERROR(f"cannot lock {finding.key or '-'}  {finding.describe()}"))
            if finding.kind == audit.DUPLICATE and finding.constraint.lookalike:
                self.stdout.write(f"  look-alikes: {self._values(finding)}")
        others = [finding for finding in report.findings if finding.kind in audit.REPAIRABLE]
        others = [finding for finding in others if not audit.is_backfilled(finding)]
        if others:
            self.stdout.write(
                f"{len(others):,} orphaned or wrongly owned lock(s) left as they are: run accounts_audit --repair."
            )
        failed = [result for result in repairs if not result.repaired]
        if not dry_run and (unlockable or failed):
            sys.exit(1)

    def _backfill_staff_registry(self):
        try:
            result = registry.backfill()
        except UniquenessError as error:
            raise CommandError(str(error)) from error
        self.stdout.write(
            f"Staff registry: {result.added:,} account(s) added, {result.removed:,} removed, "
            f"{registry.count_active_staff():,} active staff account(s) listed."
        )
        if result.changed:
            self.stdout.write(
                self.style.WARNING(f"{result.changed:,} account(s) changed meanwhile: run it again to check them.")
            )

    def _write_plan(self, report):
        missing = report.of_kind(audit.MISSING)
        for finding in missing:
            self.stdout.write(f"would create {finding.key}  for {finding.holder}")
        stale = [finding for finding in report.of_kind(audit.ORPHANED) if audit.is_backfilled(finding)]
        for finding in stale:
            self.stdout.write(f"would release {finding.key}  (re-key of {finding.owner})")
        unrecorded = report.of_kind(audit.UNRECORDED)
        if unrecorded:
            self.stdout.write(f"would record the lock keys of {len(unrecorded):,} account(s)")
        self.stdout.write(f"{len(missing):,} lock(s) to create (dry run: nothing written).")

    def _write_repairs(self, repairs):
        for result in repairs:
            if not result.repaired:
                self.stdout.write(self.style.WARNING(f"not created {result.finding.key}  {result.detail}"))
        created = [result for result in repairs if result.repaired and result.action == audit.CLAIMED]
        released = [result for result in repairs if result.repaired and result.action == audit.RELEASED]
        self.stdout.write(self.style.SUCCESS(f"Created {len(created):,} lock(s)."))
        if released:
            self.stdout.write(f"Released {len(released):,} lock(s) keyed on an old normalization (re-keyed).")
        recorded = {result.finding.key for result in repairs if result.repaired and result.action == audit.RECORDED}
        if recorded:
            self.stdout.write(f"Recorded the lock keys of {len(recorded):,} account(s).")

    def _values(self, finding):
        """The holders' values, ``'coco' (ACCT#1), 'сосо' (ACCT#2)``."""
        described = []
        for pk in finding.holders:
            values = [getattr(finding.items[pk], name, None) for name in finding.fields]
            described.append(f"{', '.join(repr(value) for value in values)} ({pk})")
        return "; ".join(described)
