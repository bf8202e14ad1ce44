"""System checks (``python manage.py check``) for a project using the accounts app."""

import botocore.config
import botocore.exceptions
import botocore.session
from django.conf import settings
from django.core import checks
from django.utils.module_loading import import_string

from .app_settings import app_settings

USER_MODEL = "accounts.User"
BACKEND = "accounts.backends.AccountBackend"
SQL_SESSION_ENGINES = {
    "django.contrib.sessions.backends.db",
    "django.contrib.sessions.backends.cached_db",
}
EXPECTED_KEY_SCHEMA = [
    {"AttributeName": "PK", "KeyType": "HASH"},
    {"AttributeName": "SK", "KeyType": "RANGE"},
]


@checks.register(checks.Tags.compatibility)
def check_auth_settings(app_configs, **kwargs):
    errors = []
    if settings.AUTH_USER_MODEL != USER_MODEL:
        errors.append(
            checks.Error(
                f"AUTH_USER_MODEL is {settings.AUTH_USER_MODEL!r}.",
                hint=f'Set AUTH_USER_MODEL = "{USER_MODEL}": accounts live in DynamoDB, not in a SQL table.',
                id="accounts.E001",
            )
        )
    if BACKEND not in settings.AUTHENTICATION_BACKENDS:
        errors.append(
            checks.Error(
                f"AUTHENTICATION_BACKENDS does not include {BACKEND!r}.",
                hint=f'Set AUTHENTICATION_BACKENDS = ["{BACKEND}"] so people can log in.',
                id="accounts.E002",
            )
        )
    if settings.SESSION_ENGINE in SQL_SESSION_ENGINES:
        errors.append(
            checks.Error(
                f"SESSION_ENGINE {settings.SESSION_ENGINE!r} needs a SQL database.",
                hint='Use "django.contrib.sessions.backends.signed_cookies" (or a cache-backed engine).',
                id="accounts.E003",
            )
        )
    return errors


@checks.register(checks.Tags.compatibility)
def check_unique_fields(app_configs, **kwargs):
    errors = []
    declared = app_settings.UNIQUE_FIELDS
    for required in ("email", "username"):
        if required not in declared:
            errors.append(
                checks.Error(
                    f"ACCOUNTS_UNIQUE_FIELDS does not declare {required!r}.",
                    hint="Logging in and signing up look accounts up by email and username.",
                    id="accounts.E004",
                )
            )
    namespaces = [options.get("namespace") for options in declared.values()]
    for field, options in declared.items():
        namespace = options.get("namespace")
        if not namespace or "#" in namespace or namespaces.count(namespace) > 1:
            errors.append(
                checks.Error(
                    f"ACCOUNTS_UNIQUE_FIELDS[{field!r}] needs its own namespace without '#'; got {namespace!r}.",
                    id="accounts.E005",
                )
            )
        normalizer = options.get("normalizer")
        if isinstance(normalizer, str):
            try:
                import_string(normalizer)
            except ImportError as error:
                errors.append(
                    checks.Error(
                        f"ACCOUNTS_UNIQUE_FIELDS[{field!r}] normalizer cannot be imported: {error}",
                        id="accounts.E006",
                    )
                )
    return errors


def describe_table():
    """DescribeTable with short timeouts and no retries: a check must not hang start-up."""
    session = botocore.session.get_session()
    from .tables import _credentials

    access_key, secret_key = _credentials()
    if access_key:
        session.set_credentials(access_key, secret_key)
    client = session.create_client(
        "dynamodb",
        region_name=app_settings.REGION,
        endpoint_url=app_settings.ENDPOINT_URL,
        config=botocore.config.Config(connect_timeout=1, read_timeout=2, retries={"total_max_attempts": 1}),
    )
    return client.describe_table(TableName=app_settings.TABLE_NAME)["Table"]


@checks.register(checks.Tags.compatibility)
def check_table(app_configs, **kwargs):
    name = app_settings.TABLE_NAME
    where = app_settings.ENDPOINT_URL or f"AWS {app_settings.REGION}"
    fix = "Start DynamoDB (make run starts DynamoDB Local) and run: python manage.py accounts_createtable"
    try:
        table = describe_table()
    except botocore.exceptions.ClientError as error:
        code = error.response.get("Error", {}).get("Code")
        message = "does not exist" if code == "ResourceNotFoundException" else f"cannot be described ({code})"
        return [checks.Warning(f"DynamoDB table {name!r} at {where} {message}.", hint=fix, id="accounts.W001")]
    except (botocore.exceptions.BotoCoreError, OSError) as error:
        return [checks.Warning(f"DynamoDB at {where} cannot be reached: {error}", hint=fix, id="accounts.W001")]
    if table.get("KeySchema") != EXPECTED_KEY_SCHEMA:
        return [
            checks.Warning(
                f"DynamoDB table {name!r} is keyed {table.get('KeySchema')}, not PK (hash) + SK (range).",
                hint="Point ACCOUNTS_TABLE_NAME at a table created by: python manage.py accounts_createtable",
                id="accounts.W002",
            )
        ]
    return []
