"""System checks (``python manage.py check``) for a project using the accounts app.

- ``accounts.E001``: ``AUTH_USER_MODEL`` is not ``accounts.User``.
- ``accounts.E002``: no ``AUTHENTICATION_BACKENDS`` entry is ``AccountBackend`` (or a subclass).
- ``accounts.E003``: ``SESSION_ENGINE`` needs a SQL database.
- ``accounts.E005``: a unique field's declaration is not a dict with a namespace of its own.
- ``accounts.E006``: a unique field's normalizer cannot be imported or is not callable.
- ``accounts.E007``: ``ACCOUNTS_ACCOUNT_MODEL`` cannot be imported or is not an ``Account``.
- ``accounts.E008``: a unique field is not an attribute of the account model.
- ``accounts.E013``: an ``ACCOUNTS_UNIQUE_MODELS`` entry cannot be imported, or lacks
  ``key_prefix`` (the audit could not tell its items apart).
- ``accounts.E014``: ``ACCOUNTS_SITE_URL`` is not set, or not a site's address (links in
  mail are built from it, never from a request's Host).
- ``accounts.E036``: ``ACCOUNTS_HEADLESS_FRONTEND_URLS`` names a page allauth has no name for,
  or a URL without the ``{key}`` it needs; or ``ACCOUNTS_HEADLESS_ONLY`` lacks a page mail
  leads to.
- ``accounts.W020`` (``check --deploy``): outside debug, ``ACCOUNTS_SITE_URL`` still names
  ``localhost`` (or a loopback address) or plain ``http``.
- ``accounts.W001``: the table cannot be reached or does not exist.
- ``accounts.W002``: the table is not keyed ``PK`` (string, hash) + ``SK`` (string, range).
- ``accounts.E018``: the table is a multi-Region strongly consistent (MRSC) global table.
- ``accounts.E019``: the table is a global table and ``ACCOUNTS_WRITE_REGION`` is not set.
- ``accounts.W006``: this process runs outside ``ACCOUNTS_WRITE_REGION``: reads only.
- ``accounts.E015``: the unique fields of a model take more locks than one transaction can
  hold (DynamoDB allows 100 actions): its sign-up or deletion would always fail.
- ``accounts.W005``: changing every unique field of a model at once would exceed 100 actions.
- ``accounts.E016``: the table's locks are keyed with another version of the Unicode data
  and folding rules (:data:`accounts.identifiers.KEY_VERSION`) than this server's, or with
  an unknown one: run ``accounts_backfill`` first.
- ``accounts.E009``: ``AUTHENTICATION_BACKENDS`` also has Django's ``ModelBackend`` (SQL users).
- ``accounts.W003`` (``check --deploy``): ``django.contrib.admin`` is installed (use the
  staff pages); the admin's own index says so where it applies.
- ``accounts.W004``: a SQL model has a relation to ``AUTH_USER_MODEL`` (keep an ``AccountIdField``).
- ``accounts.W010``: ``ACCOUNTS_UNIQUE_FIELDS`` takes from ``email`` or ``username`` the
  normalizer or the look-alike lock the app gives them.
"""

import ipaddress
from urllib.parse import urlsplit

import botocore.config
import botocore.exceptions
import botocore.session
from django.apps import apps
from django.conf import settings
from django.contrib.auth.backends import ModelBackend
from django.core import checks
from django.utils.module_loading import import_string

from . import regions
from .app_settings import DEFAULT_UNIQUE_FIELDS, app_settings
from .links import frontend_url_problems, site_url_problem

USER_MODEL = "accounts.User"
BACKEND = "accounts.backends.AccountBackend"
SQL_SESSION_ENGINES = {
    "django.contrib.sessions.backends.db",
    "django.contrib.sessions.backends.cached_db",
}
EXPECTED_KEYS = {("PK", "HASH", "S"), ("SK", "RANGE", "S")}
CREATE_TABLE_COMMAND = "python manage.py accounts_createtable"
# The tag of the site's address check (E014), which the commands that send no mail skip.
MAIL_TAG = "accounts_mail"
# The tag of the key version check (E016), which the backfill and the audit skip.
KEYS_TAG = "accounts_keys"
BACKFILL_COMMAND = "python manage.py accounts_backfill"


@checks.register(checks.Tags.compatibility)
def check_auth_settings(app_configs, **kwargs):
    """E001-E003: the Django settings the app cannot work without."""
    errors = []
    if settings.AUTH_USER_MODEL != USER_MODEL:
        errors.append(
            checks.Error(
                f"AUTH_USER_MODEL is {settings.AUTH_USER_MODEL!r}.",
                hint=f'Set AUTH_USER_MODEL = "{USER_MODEL}": accounts live in DynamoDB, not in a SQL table.',
                id="accounts.E001",
            )
        )
    if not any(_is_account_backend(path) for path in settings.AUTHENTICATION_BACKENDS):
        errors.append(
            checks.Error(
                f"AUTHENTICATION_BACKENDS does not include {BACKEND!r} (or a subclass of it).",
                hint=f'Set AUTHENTICATION_BACKENDS = ["{BACKEND}"] so people can log in.',
                id="accounts.E002",
            )
        )
    if settings.SESSION_ENGINE in SQL_SESSION_ENGINES:
        errors.append(
            checks.Error(
                f"SESSION_ENGINE {settings.SESSION_ENGINE!r} needs a SQL database.",
                hint='Use "accounts.sessions" (sessions in the accounts table, which staff and a password change '
                'can end), or "django.contrib.sessions.backends.signed_cookies".',
                id="accounts.E003",
            )
        )
    return errors


@checks.register(checks.Tags.compatibility, deploy=True)
def check_admin(app_configs: object, **kwargs: object) -> list[checks.CheckMessage]:
    """W003: ``django.contrib.admin`` cannot manage accounts kept in DynamoDB.

    Only under ``check --deploy``, the review before a site goes out: a project made by
    ``startproject`` keeps the admin, and a warning on every command (``migrate``,
    ``runserver``, ``createsuperuser``...) would say the same thing again and again. Where
    the admin is opened, its own index says where accounts are managed (the staff pages)."""
    if not apps.is_installed("django.contrib.admin"):
        return []
    return [
        checks.Warning(
            "django.contrib.admin is installed; its pages need users with permissions in a SQL table.",
            hint='Remove it and include the staff pages instead: path("staff/", include("accounts.staff.urls")).',
            id="accounts.W003",
        )
    ]


@checks.register(checks.Tags.compatibility)
def check_sql_user_features(app_configs, **kwargs):
    """E009, W004: Django features that need users in a SQL table."""
    issues = [
        checks.Error(
            f"AUTHENTICATION_BACKENDS includes {path!r}, which reads users and their permissions from SQL tables.",
            hint=f'Remove it: AUTHENTICATION_BACKENDS = ["{BACKEND}"]. Accounts live in DynamoDB.',
            id="accounts.E009",
        )
        for path in settings.AUTHENTICATION_BACKENDS
        if _is_backend_subclass(path, ModelBackend)
    ]
    issues.extend(
        checks.Warning(
            f"{field.model._meta.label}.{field.name} is a {type(field).__name__} to {USER_MODEL}, "
            "which has no SQL table: saving a row fails.",
            hint=f"Keep the account id instead: {field.name} = accounts.fields.AccountIdField() "
            f"(then instance.get_{field.name}_user()).",
            obj=field,
            id="accounts.W004",
        )
        for field in _relations_to_users(app_configs)
    )
    return issues


def _relations_to_users(app_configs):
    """Fields of installed SQL models (the admin's own excepted: W003) that point at users."""
    from .models import User

    configs = apps.get_app_configs() if app_configs is None else app_configs
    for model in (model for config in configs for model in config.get_models()):
        if model._meta.app_label in ("accounts", "admin"):
            continue
        for field in model._meta.get_fields(include_hidden=True):
            if field.is_relation and field.concrete and field.related_model is User:
                yield field


def _is_account_backend(path):
    from .backends import AccountBackend

    return _is_backend_subclass(path, AccountBackend)


def _is_backend_subclass(path, base):
    try:
        backend = import_string(path)
    except ImportError:
        return False
    return isinstance(backend, type) and issubclass(backend, base)


@checks.register(checks.Tags.compatibility)
def check_unique_models(app_configs, **kwargs):
    """E013: each model of ``ACCOUNTS_UNIQUE_MODELS`` imports and declares ``key_prefix``."""
    errors = []
    for path in app_settings.UNIQUE_MODELS:
        try:
            model = import_string(path) if isinstance(path, str) else path
        except ImportError as error:
            problem = f"cannot be imported: {error}"
        else:
            if getattr(model, "key_prefix", None):
                continue
            problem = "declares no key_prefix"
        errors.append(
            checks.Error(
                f"ACCOUNTS_UNIQUE_MODELS entry {path!r} {problem}.",
                hint='Give the model key_prefix = "<PREFIX>#", the start of its items\' PK, so the audit can find them.',
                id="accounts.E013",
            )
        )
    return errors


@checks.register(checks.Tags.compatibility)
def check_unique_fields(app_configs, **kwargs):
    """E005-E006: the declarations of ``ACCOUNTS_UNIQUE_FIELDS``."""
    errors = []
    declared = app_settings.UNIQUE_FIELDS
    namespaces = [
        options.get(key)
        for options in declared.values()
        if isinstance(options, dict)
        for key in ("namespace", "skeleton_namespace")
        if options.get(key) is not None
    ]
    for field, options in declared.items():
        if not isinstance(options, dict):
            errors.append(
                checks.Error(
                    f"ACCOUNTS_UNIQUE_FIELDS[{field!r}] is {options!r}, not a dict.",
                    hint='Declare it as {"namespace": "PHONE", "normalizer": "myproject.normalizers.phone"}.',
                    id="accounts.E005",
                )
            )
            continue
        namespace = options.get("namespace")
        if not _is_own_namespace(namespace, namespaces):
            errors.append(
                checks.Error(
                    f"ACCOUNTS_UNIQUE_FIELDS[{field!r}] needs its own namespace without '#'; got {namespace!r}.",
                    id="accounts.E005",
                )
            )
        skeleton_namespace = options.get("skeleton_namespace")
        if skeleton_namespace is not None and not _is_own_namespace(skeleton_namespace, namespaces):
            errors.append(
                checks.Error(
                    f"ACCOUNTS_UNIQUE_FIELDS[{field!r}] skeleton_namespace must be a namespace of its own "
                    f"without '#'; got {skeleton_namespace!r}.",
                    id="accounts.E005",
                )
            )
        error = _normalizer_error(options.get("normalizer"))
        if error:
            errors.append(checks.Error(f"ACCOUNTS_UNIQUE_FIELDS[{field!r}] normalizer {error}", id="accounts.E006"))
    return errors


@checks.register(checks.Tags.compatibility)
def check_transaction_sizes(app_configs, **kwargs):
    """E015, W005: the transactions the unique fields make fit DynamoDB's 100 actions.

    A deletion (no create is larger) is the item, one action per lock (each value of a
    set-valued constraint, up to its ``max_values``, has its own) and one per item it owns
    (an account's passkeys' credential items). A change of every single-valued field at
    once, as the item stops expiring (a verification), is the item, two actions per such
    field (the new lock, the old) and one per other lock and owned item (each kept).
    """
    from .transactions import MAX_ACTIONS

    try:
        models = [_model(app_settings.ACCOUNT_MODEL)] + [_model(path) for path in app_settings.UNIQUE_MODELS]
        sizes = [(model, *_lock_counts(model)) for model in models]
    except (ImportError, AttributeError, KeyError, TypeError, ValueError):
        return []  # E005-E008 and E013 say what is wrong with the declarations
    issues = []
    for model, single, others in sizes:
        name = getattr(model, "__name__", model)
        deletion, change = 1 + single + others, 1 + 2 * single + others
        if deletion > MAX_ACTIONS:
            issues.append(
                checks.Error(
                    f"{name} holds up to {single + others} locks and owned items: creating or deleting one "
                    f"sends up to {deletion} actions in one transaction, and DynamoDB allows {MAX_ACTIONS}.",
                    hint=f"Declare fewer unique constraints (skeleton namespaces and each value of a set-valued "
                    f"one count too): at most {MAX_ACTIONS - 1} locks and owned items together.",
                    id="accounts.E015",
                )
            )
        elif change > MAX_ACTIONS:
            issues.append(
                checks.Warning(
                    f"{name} has {single} single-valued unique constraints: changing all of them at once sends "
                    f"up to {change} actions in one transaction, and DynamoDB allows {MAX_ACTIONS}.",
                    hint="Change them in several steps, or declare fewer.",
                    id="accounts.W005",
                )
            )
    return issues


def _lock_counts(model):
    """``(single, others)``: how many single-valued constraints ``model`` declares, and the
    most other locks (values of set-valued constraints) and owned items one of its items has."""
    from .uniqueness import constraints_of

    constraints = constraints_of(model)
    single = sum(1 for constraint in constraints if not constraint.many)
    # Constraints of one limit group hold at most max_values elements together.
    groups = {}
    for constraint in constraints:
        if constraint.many:
            group = constraint.limit_group or constraint.namespace
            groups[group] = max(groups.get(group, 0), constraint.max_values)
    set_values = sum(groups.values())
    return single, set_values + getattr(model, "max_owned_items", 0)


def _model(path):
    return import_string(path) if isinstance(path, str) else path


def _is_own_namespace(namespace, namespaces):
    """Whether ``namespace`` is usable: a non-empty string without '#', declared once."""
    return isinstance(namespace, str) and bool(namespace) and "#" not in namespace and namespaces.count(namespace) == 1


def _normalizer_error(normalizer):
    """Why ``normalizer`` (a dotted path, a callable or ``None`` for the default) is unusable."""
    if normalizer is None:
        return None
    if isinstance(normalizer, str):
        try:
            normalizer = import_string(normalizer)
        except ImportError as error:
            return f"cannot be imported: {error}"
    if not callable(normalizer):
        return f"{normalizer!r} is not callable."
    return None


@checks.register(MAIL_TAG)
def check_site_url(app_configs, **kwargs):
    """E014: ``ACCOUNTS_SITE_URL``, the address every link in mail starts with. Tagged apart,
    so the commands that send no mail (``accounts_audit``, ``accounts_export``,
    ``accounts_backfill``: they run the compatibility checks) run without it."""
    problem = site_url_problem(app_settings.SITE_URL)
    if problem is None:
        return []
    return [
        checks.Error(
            f"ACCOUNTS_SITE_URL {problem}.",
            hint="Set it to the address people open the site at, scheme and host only, e.g. "
            "ACCOUNTS_SITE_URL = 'https://accounts.example.com' ('http://localhost:8000' in development). "
            "Links in mail never use the request's Host header.",
            id="accounts.E014",
        )
    ]


@checks.register(checks.Tags.compatibility)
def check_frontend_urls(app_configs: object, **kwargs: object) -> list[checks.CheckMessage]:
    """E036: the single-page app's pages mail leads to (``ACCOUNTS_HEADLESS_FRONTEND_URLS``)."""
    return [
        checks.Error(
            problem,
            hint="Name the app's pages as django-allauth's HEADLESS_FRONTEND_URLS does, e.g. "
            "{'account_confirm_email': '/account/verify-email/{key}', "
            "'account_reset_password': '/account/password/reset', "
            "'account_reset_password_from_key': '/account/password/reset/key/{key}'}.",
            id="accounts.E036",
        )
        for problem in frontend_url_problems()
    ]


@checks.register(checks.Tags.security, deploy=True)
def check_site_url_for_deploy(app_configs: object, **kwargs: object) -> list[checks.CheckMessage]:
    """W020: a deployed site's ``ACCOUNTS_SITE_URL`` is its public HTTPS address.

    Every mailed link starts with it and passkeys are bound to its host, so a development
    value left in production settings mails links nobody can open (``localhost``), or sends
    tokens in clear text (``http``), while the site itself seems to work.
    """
    value = app_settings.SITE_URL
    if settings.DEBUG or site_url_problem(value) is not None:
        return []  # E014 reports a missing or malformed address
    parts = urlsplit(value)
    problems = []
    if _is_loopback(parts.hostname or ""):
        problems.append(f"names {parts.hostname}, which only this machine reaches")
    if parts.scheme != "https":
        problems.append("is plain http, so mailed links carry their tokens unencrypted")
    if not problems:
        return []
    return [
        checks.Warning(
            f"ACCOUNTS_SITE_URL {value!r} {' and '.join(problems)}.",
            hint="Set it in the production settings to the public HTTPS address people open the site at, "
            "e.g. ACCOUNTS_SITE_URL = os.environ['ACCOUNTS_SITE_URL'] with https://accounts.example.com.",
            id="accounts.W020",
        )
    ]


def _is_loopback(host: str) -> bool:
    if host == "localhost" or host.endswith(".localhost"):
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False


@checks.register(checks.Tags.compatibility)
def check_account_model(app_configs, **kwargs):
    """E007-E008: ``ACCOUNTS_ACCOUNT_MODEL``, and an attribute for every unique field."""
    from .tables import Account

    path = app_settings.ACCOUNT_MODEL
    try:
        model = import_string(path) if isinstance(path, str) else path
    except ImportError as error:
        model, problem = None, f"cannot be imported: {error}"
    else:
        is_account = isinstance(model, type) and issubclass(model, Account)
        problem = None if is_account else "is not accounts.tables.Account or a subclass."
    if problem:
        return [
            checks.Error(
                f"ACCOUNTS_ACCOUNT_MODEL {path!r} {problem}",
                hint="Name accounts.tables.Account, or a subclass of it adding your attributes.",
                id="accounts.E007",
            )
        ]
    attributes = model.get_attributes()
    return [
        checks.Error(
            f"ACCOUNTS_UNIQUE_FIELDS declares {field!r}, which {model.__name__} has no attribute for.",
            hint=f"Add it to a subclass of accounts.tables.Account, e.g. {field} = UnicodeAttribute(null=True), "
            "and name the subclass in ACCOUNTS_ACCOUNT_MODEL.",
            id="accounts.E008",
        )
        for field in app_settings.UNIQUE_FIELDS
        if field not in attributes
    ]


def _check_client():
    """A DynamoDB client with short timeouts and no retries: a check must not hang start-up."""
    session = botocore.session.get_session()
    from .tables.clients import credentials

    access_key, secret_key = credentials()
    if access_key:
        session.set_credentials(access_key, secret_key)
    return session.create_client(
        "dynamodb",
        region_name=app_settings.REGION,
        endpoint_url=app_settings.ENDPOINT_URL,
        config=botocore.config.Config(connect_timeout=1, read_timeout=2, retries={"total_max_attempts": 1}),
    )


def describe_table():
    """DescribeTable with short timeouts and no retries."""
    return _check_client().describe_table(TableName=app_settings.TABLE_NAME)["Table"]


def key_schema(table):
    """``{(attribute name, key type, attribute type)}`` of a DescribeTable answer."""
    types = {attribute["AttributeName"]: attribute["AttributeType"] for attribute in table["AttributeDefinitions"]}
    return {(key["AttributeName"], key["KeyType"], types.get(key["AttributeName"])) for key in table["KeySchema"]}


@checks.register(checks.Tags.compatibility)
def check_table(app_configs, **kwargs):
    """W001-W002, E018-E019, W006: the table can be described, is keyed as the app expects,
    and, when it is a global table, is written in one region (one DescribeTable)."""
    name = app_settings.TABLE_NAME
    where = app_settings.ENDPOINT_URL or f"AWS {app_settings.REGION}"
    try:
        table = describe_table()
    except botocore.exceptions.ClientError as error:
        code = error.response.get("Error", {}).get("Code")
        if code == "ResourceNotFoundException":
            message, hint = "does not exist", f"Create it with: {CREATE_TABLE_COMMAND}"
        else:
            message = f"cannot be described ({code})"
            hint = f"Give these credentials dynamodb:DescribeTable on it; create it with: {CREATE_TABLE_COMMAND}"
        return [checks.Warning(f"DynamoDB table {name!r} at {where} {message}.", hint=hint, id="accounts.W001")]
    except (botocore.exceptions.BotoCoreError, OSError) as error:
        hint = (
            "Start DynamoDB, or correct ACCOUNTS_ENDPOINT_URL / ACCOUNTS_REGION and the AWS credentials; "
            f"then create the table with: {CREATE_TABLE_COMMAND}"
        )
        return [checks.Warning(f"DynamoDB at {where} cannot be reached: {error}", hint=hint, id="accounts.W001")]
    found = key_schema(table)
    if found != EXPECTED_KEYS:
        keys = ", ".join(f"{attribute} ({key_type}, {kind})" for attribute, key_type, kind in sorted(found))
        return [
            checks.Warning(
                f"DynamoDB table {name!r} at {where} is keyed {keys}, not PK (HASH, S) + SK (RANGE, S).",
                hint=f"Point ACCOUNTS_TABLE_NAME at a new table name and create it with: {CREATE_TABLE_COMMAND}",
                id="accounts.W002",
            )
        ]
    return check_regions(name, table)


def check_regions(name, table):
    """E018, E019, W006 of a DescribeTable answer: what its replicas allow."""
    replicas = regions.replicas(table)
    listed = ", ".join(filter(None, replicas))
    if replicas and regions.is_strongly_consistent(table):
        return [
            checks.Error(
                f"DynamoDB table {name!r} is a multi-Region strongly consistent (MRSC) global table "
                f"(replicas: {listed}).",
                hint="MRSC tables support neither transactions nor TTL, which every sign-up and lock needs: "
                "use a table of one region, or an MREC global table with ACCOUNTS_WRITE_REGION.",
                id="accounts.E018",
            )
        ]
    issues = []
    if replicas and not app_settings.WRITE_REGION:
        issues.append(
            checks.Error(
                f"DynamoDB table {name!r} is a global table (replicas: {listed}) and ACCOUNTS_WRITE_REGION is not set.",
                hint="Transactions hold only in the region that made the write, and replicas keep the last write: "
                "two regions could each accept one address. Set ACCOUNTS_WRITE_REGION to the one region that "
                "writes; processes elsewhere then serve reads only.",
                id="accounts.E019",
            )
        )
    if regions.reads_only():
        issues.append(
            checks.Warning(
                f"This process runs in {app_settings.REGION}, not ACCOUNTS_WRITE_REGION "
                f"({app_settings.WRITE_REGION}): it serves reads only, and refuses every write.",
                hint="Route sign-ups, logins and changes to the write region.",
                id="accounts.W006",
            )
        )
    return issues


# What each default field loses without its own option, for accounts.W010.
WEAKENED = {
    "normalizer": "two {field}s that differ only in case, width or spelling (an IDNA domain, Turkish İ) may now "
    "be held by two accounts",
    "skeleton_namespace": "look-alike {field}s (Cyrillic 'рере' beside 'pepe') no longer collide",
}


@checks.register(checks.Tags.compatibility)
def check_default_fields_kept(app_configs, **kwargs):
    """W010: ``email`` and ``username`` keep the normalizer and the look-alike lock of
    :data:`~accounts.app_settings.DEFAULT_UNIQUE_FIELDS`."""
    warnings = []
    declared = app_settings.UNIQUE_FIELDS
    for field, defaults in DEFAULT_UNIQUE_FIELDS.items():
        options = declared.get(field)
        if not isinstance(options, dict):
            continue
        for option, default in defaults.items():
            if option not in WEAKENED or _same_option(options.get(option), default):
                continue
            warnings.append(
                checks.Warning(
                    f"ACCOUNTS_UNIQUE_FIELDS[{field!r}] {option} is {options.get(option)!r}, not {default!r}: "
                    f"{WEAKENED[option].format(field=field)}.",
                    hint=f"Leave {option} out of ACCOUNTS_UNIQUE_FIELDS[{field!r}] (the setting adds to the "
                    "defaults); if you mean it, put 'accounts.W010' in SILENCED_SYSTEM_CHECKS.",
                    id="accounts.W010",
                )
            )
    return warnings


def _same_option(value, default):
    """Whether ``value`` is ``default``, given as the same dotted path or as the object it names."""
    if value == default:
        return True
    try:
        return value is not None and not isinstance(value, str) and value is import_string(default)
    except ImportError:
        return False


@checks.register(KEYS_TAG)
def check_key_version(app_configs, **kwargs):
    """E016: the table's locks are keyed with this server's key version. Tagged apart, so
    ``accounts_backfill`` and ``accounts_audit``, which are how a table gets there, run
    without it."""
    from .identifiers import KEY_VERSION
    from .tables import recorded_key_version

    name = app_settings.TABLE_NAME
    where = app_settings.ENDPOINT_URL or f"AWS {app_settings.REGION}"
    try:
        recorded = recorded_key_version(_check_client())
    except (botocore.exceptions.BotoCoreError, botocore.exceptions.ClientError, OSError):
        return []  # W001 says what is wrong with the table, when anything is
    if recorded == KEY_VERSION:
        return []
    keyed = f"with {recorded!r}" if recorded else "before lock keys were versioned"
    return [
        checks.Error(
            f"The locks of DynamoDB table {name!r} at {where} are keyed {keyed}; this server computes keys "
            f"with {KEY_VERSION!r} (Unicode data or folding rules changed): look-alikes could slip past "
            "their owners' locks, and renames release the wrong keys.",
            hint=f"Run: {BACKFILL_COMMAND} (it re-keys the locks, then records the new version).",
            id="accounts.E016",
        )
    ]
