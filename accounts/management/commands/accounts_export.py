from django.core import checks
from django.core.management.base import BaseCommand, CommandError

from accounts import audit
from accounts.management.scanning import add_segments_argument, segments_option


class Command(BaseCommand):
    help = (
        "Write the table as a DynamoDB export to S3 writes it (DYNAMODB_JSON: manifest-summary.json, "
        "manifest-files.json, gzipped data/*.json.gz) under DIRECTORY/AWSDynamoDB/<export id>/, from a "
        "parallel Scan: for DynamoDB Local and tests, where no export exists. "
        "accounts_audit --from-export DIRECTORY reads it."
    )

    requires_system_checks = [checks.Tags.compatibility]

    def add_arguments(self, parser):
        parser.add_argument("directory", help="Where to write the export (created if missing).")
        add_segments_argument(parser)

    def handle(self, *args, **options):
        try:
            folder = audit.write_export(options["directory"], segments=segments_option(options))
        except OSError as error:
            raise CommandError(f"The export cannot be written: {error}") from error
        self.stdout.write(str(folder))
