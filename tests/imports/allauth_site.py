"""A real Django + django-allauth database to import from, built by their own migrations and
APIs in a separate process (the tests' own process has no SQL database and never imports
allauth at run time): a throwaway settings module installing ``django.contrib.auth`` and
allauth's ``account``, ``socialaccount`` and ``mfa`` apps, ``migrate``, then users made with
``User.objects`` / ``make_password`` and allauth's ``EmailAddress``, ``SocialAccount``,
``TOTP.activate``, ``RecoveryCodes.activate`` and ``WebAuthn.add``.

A user is described by a dict (see :data:`SCRIPT`): ``username``, ``email``, ``password``
(raw) and ``hasher`` (the algorithm it is hashed with), ``unusable`` (no usable password),
the flags, ``date_joined``/``last_login`` (ISO 8601), ``addresses`` (``email``,
``verified``, ``primary``), ``identities`` (``provider``, ``uid``, ``extra_data``),
``totp`` (a base32 secret), ``recovery_codes`` (true: activate them), ``used_codes``
(indexes of codes to use), ``webauthn`` (``name``, ``credential``: a registration answer).
:func:`make_users` returns, per username, its ``id`` and its allauth ``recovery_codes``.
"""

import json
import os
import subprocess
import sys
import textwrap
from pathlib import Path

SETTINGS = textwrap.dedent(
    """
    import os
    import environ

    from django.contrib.auth import hashers

    SECRET_KEY = "the-source-site"
    USE_TZ = True
    DATABASES = {"default": environ.Env.db_url_config(os.environ["SOURCE_DATABASE_URL"])}
    INSTALLED_APPS = [
        "django.contrib.contenttypes",
        "django.contrib.auth",
        "allauth",
        "allauth.account",
        "allauth.socialaccount",
        "allauth.socialaccount.providers.openid_connect",
        "allauth.mfa",
    ]
    MIDDLEWARE = ["allauth.account.middleware.AccountMiddleware"]
    DEFAULT_AUTO_FIELD = "django.db.models.AutoField"
    AUTHENTICATION_BACKENDS = ["allauth.account.auth_backends.AuthenticationBackend"]


    # Cheap parameters (each is written in the hash, which the importing site verifies with
    # them): the hashers' own algorithms, at costs a test can afford.
    class PBKDF2(hashers.PBKDF2PasswordHasher):
        iterations = 1000


    class PBKDF2SHA1(hashers.PBKDF2SHA1PasswordHasher):
        iterations = 1000


    class Argon2(hashers.Argon2PasswordHasher):
        time_cost = 1
        memory_cost = 1024


    class BCryptSHA256(hashers.BCryptSHA256PasswordHasher):
        rounds = 4


    class BCrypt(hashers.BCryptPasswordHasher):
        rounds = 4


    class Scrypt(hashers.ScryptPasswordHasher):
        work_factor = 2**10


    PASSWORD_HASHERS = [
        f"source_settings.{name}" for name in ("PBKDF2", "PBKDF2SHA1", "Argon2", "BCryptSHA256", "BCrypt", "Scrypt")
    ] + ["django.contrib.auth.hashers.MD5PasswordHasher"]
    """
)

SCRIPT = textwrap.dedent(
    """
    import json
    import sys
    from datetime import datetime

    import django

    django.setup()

    from django.contrib.auth import get_user_model
    from django.contrib.auth.hashers import make_password

    from allauth.account.models import EmailAddress
    from allauth.mfa.recovery_codes.internal.auth import RecoveryCodes
    from allauth.mfa.totp.internal.auth import TOTP
    from allauth.mfa.webauthn.internal.auth import WebAuthn
    from allauth.socialaccount.models import SocialAccount

    made = {}
    for spec in json.load(sys.stdin):
        user = get_user_model()(
            username=spec["username"],
            email=spec.get("email", ""),
            is_active=spec.get("is_active", True),
            is_staff=spec.get("is_staff", False),
            is_superuser=spec.get("is_superuser", False),
        )
        if spec.get("date_joined"):
            user.date_joined = datetime.fromisoformat(spec["date_joined"])
        if spec.get("last_login"):
            user.last_login = datetime.fromisoformat(spec["last_login"])
        if spec.get("unusable"):
            user.set_unusable_password()
        else:
            user.password = make_password(spec.get("password", "Tangerine-Sky-Runner-7"), hasher=spec.get("hasher", "md5"))
        user.save()
        for address in spec.get("addresses", ()):
            EmailAddress.objects.create(user=user, **address)
        for identity in spec.get("identities", ()):
            SocialAccount.objects.create(user=user, **identity)
        if spec.get("totp"):
            TOTP.activate(user, spec["totp"])
        codes = []
        if spec.get("recovery_codes"):
            recovery = RecoveryCodes.activate(user)
            codes = recovery.generate_codes()
            for index in spec.get("used_codes", ()):
                assert recovery.validate_code(codes[index])
        for passkey in spec.get("webauthn", ()):
            WebAuthn.add(user, passkey["name"], passkey["credential"])
        made[spec["username"]] = {"id": user.pk, "recovery_codes": codes}
    print(json.dumps(made))
    """
)


class AllauthSite:
    """A Django + allauth project's database at ``url`` (its settings in ``directory``)."""

    def __init__(self, directory: Path, url: str) -> None:
        self.directory = directory
        self.url = url
        directory.mkdir(parents=True, exist_ok=True)
        (directory / "source_settings.py").write_text(SETTINGS)
        (directory / "make_users.py").write_text(SCRIPT)

    def run(self, *args: str, stdin: str | None = None) -> str:
        """What ``python *args`` prints, run under the source site's settings."""
        env = {name: value for name, value in os.environ.items() if not name.startswith(("DJANGO_", "PYTEST_"))}
        env.update(
            DJANGO_SETTINGS_MODULE="source_settings",
            SOURCE_DATABASE_URL=self.url,
            PYTHONPATH=str(self.directory),
        )
        result = subprocess.run(
            [sys.executable, *args],
            cwd=self.directory,
            env=env,
            input=stdin,
            capture_output=True,
            text=True,
            timeout=300,
        )
        assert result.returncode == 0, result.stdout + result.stderr
        return result.stdout

    def migrate(self) -> "AllauthSite":
        self.run("-m", "django", "migrate", "--verbosity", "0")
        return self

    def make_users(self, *specs: dict) -> dict[str, dict]:
        """Make the users ``specs`` describe (see the module); ``{username: {"id", "recovery_codes"}}``."""
        return json.loads(self.run("make_users.py", stdin=json.dumps(list(specs))))

    def sql(self, statement: str, *params: object) -> None:
        """Run one SQL statement on the source database (a test's damage)."""
        code = (
            "import django, sys, json; django.setup(); from django.db import connection\n"
            "with connection.cursor() as cursor: cursor.execute(sys.argv[1], json.loads(sys.argv[2]))"
        )
        self.run("-c", code, statement, json.dumps(list(params)))


def sqlite_site(directory: Path) -> AllauthSite:
    """A migrated allauth site on a SQLite file in ``directory``."""
    return AllauthSite(directory, f"sqlite:///{directory / 'source.sqlite3'}").migrate()
