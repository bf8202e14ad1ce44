"""Every response of every implemented operation of the API conforms to django-allauth's
own OpenAPI specification, read from the installed django-allauth wheel (a test-only
dependency): schemathesis generates requests from the specification (valid and invalid
bodies, headers and parameters) and checks each answer: no 5xx, a status code the
operation documents, a JSON content type, a body of the documented schema (the
specification as allauth answers it: ``tests.headless_spec.as_allauth_answers``, its flows
that the specification does not list).

Each operation is run for both clients, anonymously and logged in (a session of its own
for each case, so that a logout or an ended session in one case leaves the next alone),
on the site's defaults; the operations whose answers change with codes instead of links
(``ACCOUNTS_EMAIL_VERIFICATION_BY_CODE_ENABLED``, ``ACCOUNTS_PASSWORD_RESET_BY_CODE_ENABLED``)
run once more with both on, and the address operations with several addresses per account
(``ACCOUNTS_MAX_EMAIL_ADDRESSES = 3``), by links and by codes. The runs' figures
(operations, cases, failures) are printed with ``-s``.
"""

import json
import re

import hypothesis
import jsonschema_rs
import pytest
import requests
import schemathesis
from hypothesis import HealthCheck, Phase
from schemathesis.checks import not_a_server_error
from schemathesis.generation.modes import GenerationMode
from schemathesis.specs.openapi.checks import (
    content_type_conformance,
    response_schema_conformance,
    status_code_conformance,
)

from accounts import store
from accounts.providers import oidc
from tests.headless_spec import (
    ALLAUTH_ANSWERS_OUTSIDE_ITS_SPEC,
    BROWSER_PREFIX,
    PREFIX,
    UNAUTHENTICATED,
    allauth_spec,
    as_allauth_answers,
    implemented_operations,
)
from tests.oidc_forger import ForgedProvider
from tests.web import PASSWORD

pytestmark = pytest.mark.dynamodb_local

CHECKS = [not_a_server_error, status_code_conformance, content_type_conformance, response_schema_conformance]
EXAMPLES = 4
APP_PREFIX = "/_allauth/app/v1/"
# What tests/headless/test_headless_passkeys.py names the answer of a passkey sign-up started.
PASSKEY_SIGNUP_PENDING = UNAUTHENTICATED
# The operations whose answers change when addresses are proven and passwords reset by a
# mailed code (their second run).
CODE_OPERATIONS = {
    "auth/session",
    "auth/login",
    "auth/signup",
    "auth/email/verify",
    "auth/email/verify/resend",
    "auth/password/request",
    "auth/password/reset",
    "account/email",
}
# The operations whose answers change when an account may have several addresses
# (ACCOUNTS_MAX_EMAIL_ADDRESSES above 1: account/email adds, makes primary, removes; the
# added address's key is verified): their own run, with links and with codes.
ADDRESS_OPERATIONS = {"account/email", "auth/email/verify"}


def conforms_to(spec, schema_name, body):
    """Whether ``body`` is valid against the specification's schema ``schema_name``, as
    allauth answers it (its own flows included)."""
    components = as_allauth_answers(spec)["components"]
    schema = {"$ref": f"#/components/schemas/{schema_name}", "components": components}
    return jsonschema_rs.Draft7Validator(schema).is_valid(body)


@pytest.fixture
def transactional_db():
    """pytest-django's live_server asks for this; this project has no SQL database."""


@pytest.fixture
def site(live_server, ddb, settings):
    """The live server on DynamoDB Local, rate limits off: thousands of generated requests
    from one address would otherwise meet them (tests/headless/test_headless_guarantees.py and
    tests/headless/test_headless_passkeys.py prove the limits on the API); one identity provider (tests/oidc_forger.py), so that the
    configuration and the provider operations answer with one."""
    settings.ACCOUNTS_RATE_LIMITS = False
    settings.ACCOUNTS_SITE_URL = live_server.url
    # Routed always, answering 404 while off (allauth does not route it then): on, so that
    # its answers are checked.
    settings.ACCOUNTS_PASSKEY_SIGNUP = True
    settings.ACCOUNTS_MFA_TRUST_ENABLED = True
    with ForgedProvider() as provider:
        settings.ACCOUNTS_OIDC_PROVIDERS = [provider.setting()]
        oidc.forget_cached_documents()
        store.signup("ada@example.com", "ada", _password_hash(), email_verified=True)
        yield live_server.url
    oidc.forget_cached_documents()


def route_of(path):
    """An operation's path without the API's prefix (``auth/login``)."""
    return path.removeprefix(PREFIX).removeprefix(BROWSER_PREFIX).removeprefix(APP_PREFIX)


def clients_of(path):
    """The clients an operation of the specification is for."""
    if path.startswith(BROWSER_PREFIX):
        return ("browser",)
    if path.startswith(APP_PREFIX):
        return ("app",)
    return ("app", "browser")


def implemented_schema(spec, routes=None):
    """schemathesis's schema of ``spec``, with the operations this app implements (of
    ``routes`` only, when given)."""
    implemented = implemented_operations()
    spec["paths"] = {
        path: {name: op for name, op in operations.items() if name == "parameters" or name in implemented.get(path, ())}
        for path, operations in spec["paths"].items()
        if path in implemented and (routes is None or route_of(path) in routes)
    }
    return schemathesis.openapi.from_dict(spec)


def api_session(base_url, client, logged_in):
    """A ``requests`` session for ``client``: the browser's sends the CSRF cookie back as
    ``X-CSRFToken``; logged in, it holds a new session of the account ``ada``."""
    session = requests.Session()
    if client == "browser":
        session.get(f"{base_url}/_allauth/browser/v1/config")
        session.headers["X-CSRFToken"] = session.cookies["csrftoken"]
    if logged_in:
        response = session.post(
            f"{base_url}/_allauth/{client}/v1/auth/login",
            data=json.dumps({"username": "ada", "password": PASSWORD}),
            headers={"Content-Type": "application/json"},
        )
        assert response.status_code == 200, response.text
        if client == "app":
            session.headers["X-Session-Token"] = response.json()["meta"]["session_token"]
        else:
            # Logging in rotates the CSRF token.
            session.headers["X-CSRFToken"] = session.cookies["csrftoken"]
    return session


def run(spec, operation, base_url, client, logged_in, figures):
    """Generate cases of ``operation`` and check each answer; failures are collected."""

    @hypothesis.given(
        case=operation.as_strategy(GenerationMode.POSITIVE) | operation.as_strategy(GenerationMode.NEGATIVE)
    )
    @hypothesis.settings(
        max_examples=EXAMPLES,
        deadline=None,
        database=None,
        phases=[Phase.explicit, Phase.generate],
        suppress_health_check=list(HealthCheck),
    )
    def check(case):
        case.path_parameters = {**(case.path_parameters or {}), "client": client}
        session = api_session(base_url, client, logged_in)
        headers = dict(session.headers)
        response = case.call(base_url=base_url, session=session, headers=headers)
        figures["cases"] += 1
        route = route_of(operation.path)
        allowed = ALLAUTH_ANSWERS_OUTSIDE_ITS_SPEC.get((operation.method.upper(), route), {})
        checks = CHECKS
        if response.status_code in allowed:
            checks = [not_a_server_error, content_type_conformance]
            schema_name = allowed[response.status_code]
            if schema_name is not None and not conforms_to(spec, schema_name, response.json()):
                figures["failures"].add(
                    f"{client} {operation.method.upper()} {route} -> {response.status_code}: not a {schema_name}"
                )
        try:
            case.validate_response(response, checks=checks)
        except BaseException as failure:  # schemathesis raises a group of every failed check
            figures["failures"].add(
                f"{client} {'logged in' if logged_in else 'anonymous'} {operation.method.upper()} {operation.path} -> {response.status_code}: {_codes(failure)}"
            )

    check()


def conformance_run(base_url, routes=None):
    """Run every implemented operation (of ``routes``, when given) for each of its clients,
    anonymously and logged in; returns ``(operations, figures)``."""
    spec = allauth_spec()
    schema = implemented_schema(as_allauth_answers(allauth_spec()), routes)
    operations = [result.ok() for result in schema.get_all_operations()]
    figures = {"cases": 0, "failures": set()}
    for operation in operations:
        for api_client in clients_of(operation.path):
            for logged_in in (False, True):
                run(spec, operation, base_url, api_client, logged_in, figures)
    print(f"\nconformance: {len(operations)} operations, {figures['cases']} cases, {len(figures['failures'])} failures")
    return operations, figures


def test_every_response_of_every_implemented_operation_conforms_to_allauths_spec(site):
    operations, figures = conformance_run(site)

    assert len(operations) == sum(len(methods) for methods in implemented_operations().values())
    assert not figures["failures"], "\n".join(sorted(figures["failures"]))


def test_with_codes_instead_of_links_every_response_still_conforms(site, settings):
    settings.ACCOUNTS_EMAIL_VERIFICATION_BY_CODE_ENABLED = True
    settings.ACCOUNTS_PASSWORD_RESET_BY_CODE_ENABLED = True

    operations, figures = conformance_run(site, CODE_OPERATIONS)

    assert {route_of(operation.path) for operation in operations} == CODE_OPERATIONS
    assert not figures["failures"], "\n".join(sorted(figures["failures"]))


@pytest.mark.parametrize("by_code", [False, True], ids=["links", "codes"])
def test_with_several_addresses_every_response_still_conforms(site, settings, by_code):
    settings.ACCOUNTS_MAX_EMAIL_ADDRESSES = 3
    settings.ACCOUNTS_EMAIL_VERIFICATION_BY_CODE_ENABLED = by_code

    operations, figures = conformance_run(site, ADDRESS_OPERATIONS)

    assert {route_of(operation.path) for operation in operations} == ADDRESS_OPERATIONS
    assert not figures["failures"], "\n".join(sorted(figures["failures"]))


def _codes(failure):
    """The check codes of a schemathesis failure (``ST103 Undocumented status code``...)."""
    return "; ".join(sorted(set(re.findall(r"ST\d+ [^\n]+", str(failure))))) or str(failure)[:200]


def _password_hash():
    from django.contrib.auth.hashers import make_password

    return make_password(PASSWORD)
