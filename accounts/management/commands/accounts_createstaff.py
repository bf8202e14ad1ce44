import getpass
import os
import sys

from django.contrib.auth.hashers import make_password
from django.core.management.base import BaseCommand, CommandError
from django.utils.text import capfirst

from accounts import signup_fields, store
from accounts.adapter import get_adapter
from accounts.exceptions import OutcomeUnknown
from accounts.forms import STORE_REFUSALS

PASSWORD_VARIABLE = "DJANGO_STAFF_PASSWORD"
PASSWORD_FIELDS = ("password1", "password2")
# The sign-up form's fields the command fills itself; a host's form may add others (a phone).
OWN_FIELDS = ("email", "username", *PASSWORD_FIELDS, "token")


class Command(BaseCommand):
    help = (
        "Create a staff account with the sign-up form (ACCOUNTS_FORMS['signup']) and the "
        "adapter, so it meets the signup page's rules (email, username as ACCOUNTS_SIGNUP_FIELDS "
        "asks for one, AUTH_PASSWORD_VALIDATORS, any field the form adds). With --noinput the "
        f"password comes from {PASSWORD_VARIABLE}, as createsuperuser takes DJANGO_SUPERUSER_PASSWORD, "
        "and the form's other fields are left empty."
    )
    stealth_options = ("stdin",)

    def add_arguments(self, parser):
        parser.add_argument("--email", help="The staff account's email address.")
        parser.add_argument("--username", help="The staff account's username (none on a site without usernames).")
        parser.add_argument(
            "--noinput",
            "--no-input",
            action="store_false",
            dest="interactive",
            help=f"Ask nothing: --email and --username (when required) are, the password is ${PASSWORD_VARIABLE}.",
        )

    def execute(self, *args, **options):
        self.stdin = options.get("stdin", sys.stdin)  # replaced by tests
        return super().execute(*args, **options)

    def handle(self, *args, **options):
        if options["username"] is not None and not signup_fields.has_username():
            raise CommandError("This site has no usernames (ACCOUNTS_SIGNUP_FIELDS): leave --username out.")
        if options["interactive"]:
            if hasattr(self.stdin, "isatty") and not self.stdin.isatty():
                raise CommandError(f"Not running in a terminal: use --noinput with {PASSWORD_VARIABLE} set.")
            account = self._create_interactively(options["email"], options["username"])
        else:
            account = self._create_without_input(options["email"], options["username"])
        named = f"{account.username} ({account.email})" if account.username else account.email
        self.stdout.write(self.style.SUCCESS(f"Staff account {named} created, id {account.id}."))

    def _create_without_input(self, email, username):
        password = os.environ.get(PASSWORD_VARIABLE)
        wanted = [("--email", email), *([("--username", username)] if signup_fields.username_required() else [])]
        missing = [name for name, value in wanted if not value]
        if missing:
            raise CommandError(f"With --noinput, {' and '.join(missing)} must be given.")
        if not password:
            raise CommandError(f"With --noinput, the password comes from {PASSWORD_VARIABLE}, which is not set.")
        form = self._form(email, username, password, {})
        account = self._create(form)
        if account is None:
            raise CommandError("\n".join(self._error_lines(form)))
        return account

    def _create_interactively(self, email, username):
        password, others = None, None
        form_class = get_adapter().get_form_class("signup")
        while True:
            email = email or input("Email address: ")
            if username is None and signup_fields.has_username():
                username = input("Username: " if signup_fields.username_required() else "Username (optional): ")
            if others is None:
                others = self._ask_other_fields(form_class)
            if password is None:
                password = getpass.getpass()
                if password != getpass.getpass("Password (again): "):
                    self.stderr.write("Error: the two passwords differ.")
                    password = None
                    continue
            form = self._form(email, username, password, others)
            account = self._create(form)
            if account is not None:
                return account
            for line in self._error_lines(form):
                self.stderr.write(f"Error: {line}")
            # Ask again for what was refused; keep what was accepted.
            email = None if "email" in form.errors else email
            username = None if "username" in form.errors else username
            password = None if form.errors.keys() & {*PASSWORD_FIELDS, "__all__"} else password
            others = None if form.errors.keys() - {"email", "username", *PASSWORD_FIELDS, "__all__"} else others

    def _ask_other_fields(self, form_class):
        """The answers for the fields a project's sign-up form adds (empty: left out)."""
        fields = form_class.base_fields
        return {
            name: input(f"{capfirst(field.label or name)}{'' if field.required else ' (optional)'}: ")
            for name, field in fields.items()
            if name not in OWN_FIELDS and not field.widget.is_hidden
        }

    def _form(self, email, username, password, others):
        # The project's sign-up form, so a staff account meets exactly the signup page's
        # rules, except that staff may take a reserved name (admin, support).
        form_class = get_adapter().get_form_class("signup")
        data = {**others, "email": email, "username": username or "", "password1": password, "password2": password}
        form = form_class(data=data)
        form.allow_reserved_usernames = True
        return form

    def _create(self, form):
        """The new staff account, or ``None`` with the reasons added to ``form``."""
        if not form.is_valid():
            return None
        data = form.cleaned_data
        extra = get_adapter().get_signup_attributes(None, form)
        try:
            # Whoever runs this command vouches for the address: the account holds it at once.
            account, _ = store.signup(
                data["email"],
                data["username"],
                make_password(data["password1"]),
                email_verified=True,
                **{**extra, "is_staff": True},
            )
        except STORE_REFUSALS as error:
            form.add_store_error(error)
            return None
        except OutcomeUnknown as error:
            raise CommandError(f"{error} Look the account up (or run the audit) before trying again.") from error
        return account

    def _error_lines(self, form):
        for name, errors in form.errors.items():
            label = "" if name == "__all__" else f"{capfirst(form.fields[name].label or name)}: "
            for message in errors:
                yield f"{label}{message}"
