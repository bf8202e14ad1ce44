from django.contrib.auth.hashers import make_password
from django.core.exceptions import ValidationError
from django.core.management.base import BaseCommand, CommandError
from pynamodb.exceptions import PynamoDBException

from accounts import addresses, ratelimit, signup_fields, store, transactions
from accounts.app_settings import app_settings
from accounts.exceptions import InvalidTransaction, InvalidUniqueValue
from accounts.phones import codes
from accounts.phones import store as phone_store
from accounts.phones.numbers import parse_phone
from accounts.tables import utcnow

PHONE_OPERATIONS = ("verify-phone", "change-phone", "remove-phone")


class Command(BaseCommand):
    help = (
        "Print the exact TransactWriteItems request of an account operation as JSON, in the "
        "shape `aws dynamodb transact-write-items --cli-input-json` takes. Nothing is written: "
        "signup sends no request at all; change-email, change-username, delete, verify, "
        "apply-email-change, the operations on an account's other addresses (add-email, "
        "verify-email-address, make-primary, remove-email: ACCOUNTS_MAX_EMAIL_ADDRESSES above 1) "
        "and the phone numbers' verify-phone, change-phone and remove-phone read "
        "the account (consistent reads) and send nothing else."
    )
    # The system checks describe the table: a signup preview must work, and send nothing,
    # without DynamoDB.
    requires_system_checks = []

    def add_arguments(self, parser):
        operations = parser.add_subparsers(dest="operation", required=True, metavar="OPERATION")
        token = {"help": "the ClientRequestToken to use (1 to 36 characters); default: a new one"}

        signup = operations.add_parser("signup", help="create an account and its locks")
        signup.add_argument("--email", required=True)
        signup.add_argument("--username", help="required when ACCOUNTS_SIGNUP_FIELDS has 'username*'")
        signup.add_argument("--token", **token)

        change_email = operations.add_parser("change-email", help="move an account to a new email")
        change_email.add_argument("--email", required=True, help="the account's current email")
        change_email.add_argument("--to", required=True, dest="new_value", metavar="NEW_EMAIL")
        change_email.add_argument("--token", **token)

        change_username = operations.add_parser("change-username", help="move an account to a new username")
        change_username.add_argument("--username", required=True, help="the account's current username")
        change_username.add_argument("--to", required=True, dest="new_value", metavar="NEW_USERNAME")
        change_username.add_argument("--token", **token)

        verify = operations.add_parser("verify", help="mark an unverified address verified and lock it")
        which = verify.add_mutually_exclusive_group(required=True)
        which.add_argument("--username", help="the unverified account's username")
        # An unverified account holds no lock for its address: on a site without usernames,
        # its id names it.
        which.add_argument("--id", dest="account_id", help="the unverified account's id")
        verify.add_argument("--token", **token)

        apply_change = operations.add_parser("apply-email-change", help="apply an account's pending email change")
        which = apply_change.add_mutually_exclusive_group(required=True)
        which.add_argument("--username", help="the account's username")
        which.add_argument("--email", help="the account's current address")
        apply_change.add_argument("--token", **token)

        for name, help_text in (
            ("add-email", "add an address to an account, waiting for its link"),
            ("verify-email-address", "verify an added address and lock it"),
            ("make-primary", "make another verified address of an account its primary one"),
            ("remove-email", "remove an address of an account, releasing its lock"),
        ):
            address = operations.add_parser(name, help=help_text)
            address.add_argument("--username", required=True, help="the account's username")
            address.add_argument("--email", required=True, dest="address", metavar="EMAIL")
            address.add_argument("--token", **token)

        # Phone numbers (ACCOUNTS_SIGNUP_FIELDS' "phone"): the transactions of accounts.phones.
        verify_phone = operations.add_parser(
            "verify-phone", help="verify an account's number (its code typed): the number's lock taken"
        )
        verify_phone.add_argument("--email", required=True, help="the account's address")
        verify_phone.add_argument("--token", **token)

        change_phone = operations.add_parser(
            "change-phone", help="make a new number the account's (its code typed): its lock taken, the old released"
        )
        change_phone.add_argument("--email", required=True, help="the account's address")
        change_phone.add_argument("--to", required=True, dest="new_value", metavar="NEW_NUMBER")
        change_phone.add_argument("--token", **token)

        remove_phone = operations.add_parser("remove-phone", help="take the number off an account: its lock released")
        remove_phone.add_argument("--email", required=True, help="the account's address")
        remove_phone.add_argument("--token", **token)

        delete = operations.add_parser("delete", help="delete an account and release its locks")
        which = delete.add_mutually_exclusive_group(required=True)
        which.add_argument("--email")
        which.add_argument("--username")
        delete.add_argument("--token", **token)

    def handle(self, *args, operation, token=None, **options):
        try:
            transaction = self._plan(operation, token, options)
        except InvalidUniqueValue as error:
            raise CommandError(f"Invalid {', '.join(sorted(error.fields))}: {error.message}") from error
        except InvalidTransaction as error:
            raise CommandError(f"Invalid transaction: {error}") from error
        except PynamoDBException as error:
            where = app_settings.ENDPOINT_URL or f"AWS {app_settings.REGION}"
            raise CommandError(f"Could not read the account from {where}: {error}") from error
        self.stdout.write(transactions.explain(transaction))

    def _plan(self, operation, token, options):
        if options.get("username") is not None and not signup_fields.has_username():
            raise CommandError("This site has no usernames (ACCOUNTS_SIGNUP_FIELDS): name the account by --email.")
        if operation == "signup":
            if signup_fields.username_required() and not options["username"]:
                raise CommandError("A sign-up here needs --username (ACCOUNTS_SIGNUP_FIELDS has 'username*').")
            # The same item the signup form builds; an unusable password, since none is given.
            account = store.build_signup_account(
                options["email"], options["username"], make_password(None), token=token
            )
            return transactions.plan_create(account, token=token, check_unheld=store.refuses_registered_addresses())
        if operation in PHONE_OPERATIONS:
            return self._plan_phone(operation, token, options)
        if operation == "verify":
            account = self._named_account(options)
            if store.is_verified(account):
                raise CommandError(f"{account.display_name}'s address {account.email} is already verified.")
            changes = {**store.VERIFY_CHANGES, "updated": utcnow()}
        elif operation == "apply-email-change":
            account = self._named_account(options)
            if not account.pending_email:
                raise CommandError(f"{account.display_name} has no pending email change.")
            changes = {**store.email_change_changes(account), "updated": utcnow()}
        elif operation in ADDRESS_OPERATIONS:
            return self._plan_address(operation, options["username"], options["address"], token)
        elif operation == "change-email":
            account = self._account("email", options["email"])
            changes = self._changes("email", options["new_value"])
        elif operation == "change-username":
            account = self._account("username", options["username"])
            changes = self._changes("username", options["new_value"])
        else:
            return transactions.plan_delete(self._named_account(options), token=token)
        # What the store sends with the change: its security event's Put, last.
        return transactions.plan_change(account, changes, token=token, also=store.event_actions(account, changes))

    def _plan_phone(self, operation, token, options):
        """A phone number's transaction, as :mod:`accounts.phones.store` sends it: a verification
        with the ConditionCheck that its code's tries are under their limit (a counter keyed by
        the code's random id, none counted), and its security event."""
        if not signup_fields.has_phone():
            raise CommandError("This site has no phone numbers (ACCOUNTS_SIGNUP_FIELDS has no 'phone').")
        account = self._account("email", options["email"])
        if operation == "remove-phone":
            if not account.phone:
                raise CommandError(f"{account.display_name} has no phone number.")
            changes = {"phone": None, "phone_verified": None, "updated": utcnow()}
            return transactions.plan_change(account, changes, token=token, also=store.event_actions(account, changes))
        if operation == "verify-phone":
            if not account.phone or phone_store.is_verified(account):
                raise CommandError(f"{account.display_name} has no unverified phone number.")
            number = account.phone
        else:
            try:
                number = parse_phone(options["new_value"])
            except ValidationError as error:
                raise CommandError(f"Invalid number {options['new_value']!r}: {error.messages[0]}") from error
        changes = {"phone": number, "phone_verified": True, "updated": utcnow()}
        guess = ratelimit.Guess(None, codes.TRIES_ACTION, counters=[codes.tries_counter("<code id>")])
        guess.take([])
        checks = [transactions.limit_check(params)(0) for params in guess.conditions()]
        also = [*checks, *store.event_actions(account, changes)]
        return transactions.plan_change(account, changes, token=token, also=also, as_read=("password",))

    def _named_account(self, options):
        """The account ``--id``, ``--email`` or ``--username`` names."""
        if options.get("account_id") is not None:
            account = store.get_account(options["account_id"])
            if account is None:
                raise CommandError(f"No account has id {options['account_id']!r}.")
            return account
        field = "email" if options.get("email") is not None else "username"
        return self._account(field, options[field])

    def _plan_address(self, operation, username, email, token):
        if not addresses.enabled():
            raise CommandError("Accounts have one address: ACCOUNTS_MAX_EMAIL_ADDRESSES is 1.")
        account = self._account("username", username)
        try:
            change = ADDRESS_OPERATIONS[operation](account, email)
        except addresses.AddressRefused as error:
            raise CommandError(f"{operation} of {email!r} is refused for {username}: {error.code}.") from error
        if change is None:
            raise CommandError(f"{email} is already the primary address of {username}.")
        changes = {**change.changes, "updated": utcnow()}
        also = store.event_actions(account, changes)
        return transactions.plan_change(
            account, changes, token=token, unheld=change.unheld, as_read=change.as_read, also=also
        )

    def _account(self, field, value):
        account = store.get_by_email(value) if field == "email" else store.get_by_username(value)
        if account is None:
            raise CommandError(f"No account has {field} {value!r}.")
        return account

    def _changes(self, field, value):
        # What store.update_account sends: the new value and a fresh ``updated`` stamp.
        return {field: value, "updated": utcnow()}


# The changes of an account's other addresses, as accounts.addresses builds them.
ADDRESS_OPERATIONS = {
    "add-email": addresses.adding,
    "verify-email-address": addresses.verifying,
    "make-primary": lambda account, email: addresses.making_primary(account, email)[1],
    "remove-email": lambda account, email: addresses.removing(account, email)[1],
}
