from django.core.management.base import BaseCommand, CommandError

from accounts import costs


class Command(BaseCommand):
    help = (
        "What each flow costs on AWS DynamoDB (on demand), computed from AWS's billing rules: "
        "its requests, the read and write units of the items it reads and writes, and dollars "
        "per million runs at the prices given. With --daily-users, a month of such a site. "
        "Nothing is sent to DynamoDB."
    )
    # Sizes come from items the code builds; no table is needed.
    requires_system_checks = []

    def add_arguments(self, parser):
        parser.add_argument(
            "--read-price",
            type=float,
            default=costs.READ_PRICE,
            help=f"$ per million read request units (default {costs.READ_PRICE}, US East).",
        )
        parser.add_argument(
            "--write-price",
            type=float,
            default=costs.WRITE_PRICE,
            help=f"$ per million write request units (default {costs.WRITE_PRICE}, US East).",
        )
        parser.add_argument(
            "--markdown",
            action="store_true",
            help="Print the flows (and the month, with --daily-users) as the docs' Markdown tables.",
        )
        month = parser.add_argument_group("a month of a site")
        month.add_argument("--daily-users", type=int, help="People who come each day.")
        month.add_argument("--pages", type=int, default=20, help="Pages each sees a day (default 20).")
        month.add_argument("--logins", type=int, default=1, help="Logins of each a day (default 1).")
        month.add_argument(
            "--refreshes", type=int, default=1, help='Pages of each a day that refresh "last seen" (default 1).'
        )
        month.add_argument("--signups", type=int, default=0, help="Sign-ups a day, each verified (default 0).")
        month.add_argument("--accounts", type=int, default=0, help="Accounts stored (for the storage line).")

    def handle(self, *args, read_price, write_price, **options):
        if read_price < 0 or write_price < 0:
            raise CommandError("Prices cannot be negative.")
        sizes = {name: costs.item_size(item) for name, item in costs.sample_items().items()}
        priced = costs.price(sizes, read_price, write_price)
        if options["markdown"]:
            self.stdout.write(costs.markdown_table(priced, read_price, write_price))
        else:
            self._write_sizes(sizes)
            self._write_flows(priced, read_price, write_price)
        if options["daily_users"] is not None:
            self._write_month(options, read_price, write_price, markdown=options["markdown"])

    def _write_sizes(self, sizes):
        self.stdout.write("Item sizes (bytes, by DynamoDB's rules):")
        for name, size in sizes.items():
            self.stdout.write(f"  {name:<32} {size:>5}")

    def _write_flows(self, priced, read_price, write_price):
        self.stdout.write(f"\nPer run, reads at ${read_price:g} and writes at ${write_price:g} a million units:")
        self.stdout.write(f"  {'flow':<20} {'requests':>8} {'reads':>6} {'writes':>6} {'$/million':>10}")
        for cost in priced:
            self.stdout.write(
                f"  {cost.flow.name:<20} {len(cost.flow.requests):>8} {cost.reads:>6} {cost.writes:>6} "
                f"{cost.dollars_per_million:>10.2f}"
            )

    def _write_month(self, options, read_price, write_price, markdown=False):
        for name in ("daily_users", "pages", "logins", "refreshes", "signups", "accounts"):
            if options[name] < 0:
                raise CommandError(f"--{name.replace('_', '-')} cannot be negative.")
        month = costs.month(
            daily_users=options["daily_users"],
            pages=options["pages"],
            logins=options["logins"],
            refreshes=min(options["refreshes"], options["pages"]),
            signups=options["signups"],
            accounts=options["accounts"],
            read_price=read_price,
            write_price=write_price,
        )
        if markdown:
            self.stdout.write(f"\n{costs.markdown_month(month)}")
            return
        self.stdout.write("\nA month (30 days):")
        for name, runs in month.runs.items():
            self.stdout.write(f"  {name:<20} {runs:>14,} runs")
        self.stdout.write(f"  read units  {month.reads:>14,}")
        self.stdout.write(f"  write units {month.writes:>14,}")
        self.stdout.write(f"  requests    ${month.requests_dollars:>10.2f}")
        self.stdout.write(f"  storage     ${month.storage_dollars:>10.2f}  ({month.storage_gb:.2f} GB)")
        self.stdout.write(f"  total       ${month.dollars:>10.2f}")
