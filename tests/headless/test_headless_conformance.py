"""Every response of every implemented operation of the API conforms to django-allauth's
own OpenAPI specification, read from the installed django-allauth wheel (a test-only
dependency): schemathesis generates requests from the specification (valid and invalid
bodies, headers and parameters) and checks each answer: no 5xx, a status code the
operation documents, a JSON content type, a body of the documented schema.

Each operation is run for both clients, anonymously and logged in (a session of its own
for each case, so that a logout or an ended session in one case leaves the next alone).
The run's figures (operations, cases, failures) are printed with ``-s``.
"""

import copy
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
from tests.headless_spec import BROWSER_PREFIX, PREFIX, allauth_spec, implemented_operations
from tests.oidc_forger import ForgedProvider
from tests.web import PASSWORD

pytestmark = pytest.mark.dynamodb_local

CHECKS = [not_a_server_error, status_code_conformance, content_type_conformance, response_schema_conformance]
EXAMPLES = 4
# Answers allauth itself gives that its specification does not document: each is checked
# against the schema of the answer allauth gives there instead. An operation for logged-in
# people answers an anonymous request 401 with the login flows (allauth's
# AuthenticatedAPIView), and so does a stage of a login that is not pending (its
# AuthenticationStageAPIView), where the specification documents only the 401 of a required
# reauthentication, or no 401; an input that is not the operation's answers allauth's 400
# ErrorResponse; a password change and new recovery codes answer 200 with the session and
# the codes. A passkey signup started answers 401 with its pending flow, whose id
# (``mfa_signup_webauthn``) allauth's ``Flow`` does not list; a change of passkeys refused
# for its input (a forged credential, an id of no passkey) answers allauth's 400.
UNAUTHENTICATED, ERROR = "AuthenticationResponse", "ErrorResponse"
PASSKEY_SIGNUP_PENDING = "AuthenticationResponse, with the flow mfa_signup_webauthn"
ALLAUTH_ANSWERS_OUTSIDE_ITS_SPEC = {
    ("POST", "auth/reauthenticate"): {401: UNAUTHENTICATED},
    ("GET", "auth/webauthn/authenticate"): {401: UNAUTHENTICATED},
    ("POST", "auth/webauthn/authenticate"): {401: UNAUTHENTICATED},
    ("POST", "auth/2fa/reauthenticate"): {401: UNAUTHENTICATED},
    ("DELETE", "auth/sessions"): {400: ERROR},
    ("GET", "auth/sessions"): {401: UNAUTHENTICATED},
    ("PUT", "account/email"): {401: UNAUTHENTICATED},
    ("PATCH", "account/email"): {401: UNAUTHENTICATED},
    ("DELETE", "account/email"): {401: UNAUTHENTICATED},
    ("POST", "account/password/change"): {200: "AuthenticatedResponse"},
    ("GET", "account/authenticators/totp"): {401: UNAUTHENTICATED},
    ("POST", "account/authenticators/totp"): {401: UNAUTHENTICATED},
    ("DELETE", "account/authenticators/totp"): {401: UNAUTHENTICATED},
    ("GET", "account/authenticators/recovery-codes"): {401: UNAUTHENTICATED},
    ("POST", "account/authenticators/recovery-codes"): {401: UNAUTHENTICATED, 200: None},
    ("POST", "auth/webauthn/signup"): {401: PASSKEY_SIGNUP_PENDING},
    ("GET", "auth/webauthn/reauthenticate"): {401: UNAUTHENTICATED},
    ("POST", "auth/webauthn/reauthenticate"): {401: UNAUTHENTICATED},
    ("GET", "account/authenticators/webauthn"): {401: UNAUTHENTICATED},
    ("POST", "account/authenticators/webauthn"): {401: UNAUTHENTICATED, 400: ERROR},
    ("PUT", "account/authenticators/webauthn"): {401: UNAUTHENTICATED, 400: ERROR},
    ("DELETE", "account/authenticators/webauthn"): {401: UNAUTHENTICATED, 400: ERROR},
    ("GET", "account/providers"): {401: UNAUTHENTICATED},
    ("DELETE", "account/providers"): {401: UNAUTHENTICATED},
    ("POST", "auth/provider/token"): {409: "ConflictResponse"},
    ("POST", "auth/code/request"): {409: "ConflictResponse", 429: ERROR},
    ("POST", "auth/code/confirm"): {429: ERROR},
    # The trust of a browser with no second step just passed (allauth's stage not pending).
    ("POST", "auth/2fa/trust"): {401: UNAUTHENTICATED},
    # A callback URL the browser may not be sent to: allauth renders an error page there.
    ("POST", "auth/provider/redirect"): {400: ERROR},
}


def conforms_to(spec, schema_name, body):
    """Whether ``body`` is valid against the specification's schema ``schema_name``."""
    components = spec["components"]
    if schema_name == PASSKEY_SIGNUP_PENDING:
        components = copy.deepcopy(components)
        components["schemas"]["Flow"]["properties"]["id"]["enum"].append("mfa_signup_webauthn")
        schema_name = UNAUTHENTICATED
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
        yield live_server.url
    oidc.forget_cached_documents()


def implemented_schema():
    """schemathesis's schema of allauth's specification, with its operations this app implements."""
    spec = allauth_spec()
    implemented = implemented_operations()
    spec["paths"] = {
        path: {name: op for name, op in operations.items() if name == "parameters" or name in implemented.get(path, ())}
        for path, operations in spec["paths"].items()
        if path in implemented
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
        route = operation.path.removeprefix(PREFIX).removeprefix(BROWSER_PREFIX)
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


def test_every_response_of_every_implemented_operation_conforms_to_allauths_spec(site):
    store.signup("ada@example.com", "ada", _password_hash(), email_verified=True)
    spec = allauth_spec()
    schema = implemented_schema()
    operations = [result.ok() for result in schema.get_all_operations()]
    figures = {"cases": 0, "failures": set()}
    for operation in operations:
        for api_client in ("browser",) if operation.path.startswith(BROWSER_PREFIX) else ("app", "browser"):
            for logged_in in (False, True):
                run(spec, operation, site, api_client, logged_in, figures)
    print(f"\nconformance: {len(operations)} operations, {figures['cases']} cases, {len(figures['failures'])} failures")
    assert len(operations) == sum(len(methods) for methods in implemented_operations().values())
    assert not figures["failures"], "\n".join(sorted(figures["failures"]))


def _codes(failure):
    """The check codes of a schemathesis failure (``ST103 Undocumented status code``...)."""
    return "; ".join(sorted(set(re.findall(r"ST\d+ [^\n]+", str(failure))))) or str(failure)[:200]


def _password_hash():
    from django.contrib.auth.hashers import make_password

    return make_password(PASSWORD)
