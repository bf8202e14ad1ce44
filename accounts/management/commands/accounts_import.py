import contextlib
import importlib.util
import sys
import time

from django.core.management.base import BaseCommand, CommandError
from django.utils.module_loading import import_string

from accounts import imports
from accounts.imports.allauth import RECOVERY_CODE_COUNT, RECOVERY_CODE_DIGITS, RecoveryCodeFormat, identity
from accounts.imports.reports import ReportWriter, Summary
from accounts.imports.sources import USER_FIELDS
from accounts.imports.writing import BATCH_ACTIONS, WORKERS
from accounts.transactions import MAX_ACTIONS

# Seconds between two progress lines on stderr.
PROGRESS_EVERY = 2.0
# Exit statuses: every user is in the table; some were reported; the source cannot be read;
# the run stopped before its end (DynamoDB unreachable, an outcome unknown): run it again.
EVERY_USER, REPORTED, UNREADABLE, STOPPED = 0, 1, 2, 3


class Command(BaseCommand):
    help = (
        "Import the users of a Django project's database (sqlite:////path, postgres://..., mysql://...; "
        "auth_user and django-allauth's tables) or of a JSON-lines file, each with the locks, guards and "
        "normalization of a sign-up. Users whose values another holds are reported, not imported. Run again "
        "after a crash: it continues, and creates nothing twice. Exit status 0: every user is in the table; "
        "1: some were reported; 2: the source cannot be read (nothing written); 3: the run stopped (run it "
        "again). Progress goes to stderr."
    )

    def add_arguments(self, parser):
        parser.add_argument("source", help="A database URL (django-environ's form) or a JSON-lines file.")
        parser.add_argument("--dry-run", action="store_true", help="Write nothing; report what a run would.")
        parser.add_argument("--report", metavar="FILE", help="Write the report (JSON lines) to FILE, not stdout.")
        parser.add_argument(
            "--to-export",
            metavar="DIR",
            help="Write no table: write the accounts and their locks as a DynamoDB export under DIR, for "
            "`aws dynamodb import-table` to make a new table of them.",
        )
        parser.add_argument(
            "--user-table", default="auth_user", help="The user table of a custom user model. Default auth_user."
        )
        parser.add_argument(
            "--column",
            action="append",
            default=[],
            metavar="FIELD=COLUMN",
            help=f"The user table's column for FIELD (one of {', '.join(USER_FIELDS)}), when it has another name.",
        )
        parser.add_argument(
            "--decrypt",
            metavar="DOTTED.PATH",
            help="The source site's django-allauth MFA adapter decrypt(), as a function of one string, when it "
            "encrypted TOTP secrets and recovery code seeds.",
        )
        parser.add_argument(
            "--recovery-code-count",
            type=int,
            default=RECOVERY_CODE_COUNT,
            help=f"The source site's MFA_RECOVERY_CODE_COUNT. Default {RECOVERY_CODE_COUNT}.",
        )
        parser.add_argument(
            "--recovery-code-digits",
            type=int,
            default=RECOVERY_CODE_DIGITS,
            help=f"The source site's MFA_RECOVERY_CODE_DIGITS. Default {RECOVERY_CODE_DIGITS}.",
        )
        parser.add_argument(
            "--workers", type=int, default=WORKERS, help=f"Batches in flight at once. Default {WORKERS}."
        )
        parser.add_argument(
            "--batch-actions",
            type=int,
            default=BATCH_ACTIONS,
            help=f"Actions of one TransactWriteItems (users fill it whole), at most {MAX_ACTIONS}. "
            f"Default {BATCH_ACTIONS}.",
        )

    def handle(self, *args, **options):
        missing = [name for name in ("duckdb", "pyarrow") if importlib.util.find_spec(name) is None]
        if missing:
            raise CommandError(
                f"accounts_import needs {', '.join(missing)}: pip install 'django-dynamo-accounts[import]'.",
                returncode=UNREADABLE,
            )
        if options["dry_run"] and options["to_export"]:
            raise CommandError("--to-export writes no table already: leave --dry-run out.", returncode=UNREADABLE)
        if options["workers"] < 1:
            raise CommandError("--workers must be at least 1.", returncode=UNREADABLE)
        if not 1 <= options["batch_actions"] <= MAX_ACTIONS:
            raise CommandError(f"--batch-actions is 1 to {MAX_ACTIONS}.", returncode=UNREADABLE)
        source_options = self._source_options(options)
        try:
            source = imports.open_source(options["source"], source_options)
        except imports.SourceError as error:
            raise CommandError(str(error), returncode=UNREADABLE) from error
        try:
            with self._report_stream(options["report"]) as stream:
                summary = self._run(source, stream, options)
        except imports.SourceError as error:
            raise CommandError(str(error), returncode=UNREADABLE) from error
        except imports.ImportStopped as error:
            raise CommandError(str(error), returncode=STOPPED) from error
        finally:
            source.close()
        self.stdout.write(self._summary_line(summary, options))
        if summary.reported or summary.notes:
            sys.exit(REPORTED)

    def _source_options(self, options):
        columns = {}
        for mapping in options["column"]:
            field, _, column = mapping.partition("=")
            if field not in USER_FIELDS or not column:
                raise CommandError(
                    f"--column takes FIELD=COLUMN, FIELD one of {', '.join(USER_FIELDS)}: not {mapping!r}.",
                    returncode=UNREADABLE,
                )
            columns[field] = column
        decrypt = identity
        if options["decrypt"]:
            try:
                decrypt = import_string(options["decrypt"])
            except ImportError as error:
                raise CommandError(f"--decrypt: {error}", returncode=UNREADABLE) from error
        codes = RecoveryCodeFormat(options["recovery_code_count"], options["recovery_code_digits"])
        if codes.count < 1 or not 1 <= codes.digits <= 40:
            raise CommandError("--recovery-code-count and --recovery-code-digits must be positive.", returncode=2)
        return imports.SourceOptions(options["user_table"], columns, decrypt, codes)

    @contextlib.contextmanager
    def _report_stream(self, path):
        if path is None:
            yield self.stdout
            return
        try:
            stream = open(path, "w", encoding="utf-8")  # noqa: SIM115  (closed below)
        except OSError as error:
            raise CommandError(f"The report cannot be written to {path}: {error.strerror}.", returncode=2) from error
        with stream:
            yield stream

    def _run(self, source, stream, options):
        summary = Summary()
        started = time.monotonic()
        last = [0.0]

        def progress(where):
            now = time.monotonic()
            if now - last[0] < PROGRESS_EVERY:
                return
            last[0] = now
            rate = where.done / max(now - started, 1e-9)
            counts = where.summary
            self.stderr.write(
                f"{where.stage}: {where.done:,} users read; {counts.imported:,} imported, "
                f"{counts.already_there:,} already there, {counts.reported:,} reported ({rate:,.0f} users/s)"
            )

        return imports.run_import(
            source,
            report=ReportWriter(stream, summary),
            dry_run=options["dry_run"],
            to_export=options["to_export"],
            workers=options["workers"],
            batch_actions=options["batch_actions"],
            on_progress=progress,
        )

    def _summary_line(self, summary, options):
        verb = "would be imported" if options["dry_run"] else "imported"
        where = f" into the export under {options['to_export']}" if options["to_export"] else ""
        report = f" (report: {options['report']})" if options["report"] else ""
        return (
            f"{summary.read:,} users read: {summary.imported:,} {verb}{where}, {summary.already_there:,} already "
            f"there, {summary.reported:,} reported, {summary.notes:,} notes on imported users{report}."
        )
