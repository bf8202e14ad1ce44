"""django-allauth's headless OpenAPI specification, from the installed wheel (a test-only
dependency), and the part of it this app implements (what accounts/headless/openapi.json
holds). ``python -m tests.headless_spec`` writes that file again."""

import json
from pathlib import Path

import yaml

PREFIX = "/_allauth/{client}/v1/"
BROWSER_PREFIX = "/_allauth/browser/v1/"
APP_PREFIX = "/_allauth/app/v1/"
# The flows allauth itself answers that its specification's ``Flow`` does not list (its
# headless/constants.py): a passkey alone, a passkey sign-up's, a trusted browser's, a
# password reset by code (listed, pending or not, while it is on).
FLOWS_OUTSIDE_THE_SPEC = ("mfa_login_webauthn", "mfa_signup_webauthn", "mfa_trust", "password_reset_by_code")


# Answers allauth itself gives that its specification does not document: each is checked
# against the schema of the answer allauth gives there instead. An operation for logged-in
# people answers an anonymous request 401 with the login flows (allauth's
# AuthenticatedAPIView), and so does a stage of a login that is not pending (its
# AuthenticationStageAPIView), where the specification documents only the 401 of a required
# reauthentication, or no 401; an input that is not the operation's answers allauth's 400
# ErrorResponse; a password change and new recovery codes answer 200 with the session and
# the codes. A passkey signup started answers 401 with its pending flow; a change of
# passkeys refused for its input (a forged credential, an id of no passkey) answers
# allauth's 400. (The flows themselves are checked as allauth answers them:
# :func:`as_allauth_answers`.)
UNAUTHENTICATED, ERROR = "AuthenticationResponse", "ErrorResponse"
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
    ("POST", "auth/webauthn/signup"): {401: UNAUTHENTICATED},
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
    # A mailed reauthentication code past its tries or the account's ``reauthenticate``
    # limit: counted as on the page (allauth ends its flow instead: 409 next).
    ("POST", "auth/reauthenticate/code/confirm"): {429: ERROR},
    # The trust of a browser with no second step just passed (allauth's stage not pending).
    ("POST", "auth/2fa/trust"): {401: UNAUTHENTICATED},
    # A callback URL the browser may not be sent to: allauth renders an error page there.
    ("POST", "auth/provider/redirect"): {400: ERROR},
}


def allowed_statuses(method, path, spec=None):
    """The statuses an answer of the operation ``method path`` (a path of the
    specification) may have: those the specification documents, and those allauth answers
    there outside it (:data:`ALLAUTH_ANSWERS_OUTSIDE_ITS_SPEC`)."""
    spec = spec or allauth_spec()
    documented = {int(status) for status in spec["paths"][path][method.lower()]["responses"]}
    route = path.removeprefix(PREFIX).removeprefix(BROWSER_PREFIX).removeprefix("/_allauth/app/v1/")
    return documented | set(ALLAUTH_ANSWERS_OUTSIDE_ITS_SPEC.get((method.upper(), route), {}))


def allauth_spec():
    """allauth's specification as shipped in its wheel (never imported: read as a file)."""
    import importlib.util

    origin = Path(importlib.util.find_spec("allauth").origin).parent
    return yaml.safe_load((origin / "headless" / "spec" / "doc" / "openapi.yaml").read_text(encoding="utf-8"))


def as_allauth_answers(spec):
    """``spec`` (allauth's) as allauth itself answers it: a ``Flow``'s ``id`` may also be one
    of :data:`FLOWS_OUTSIDE_THE_SPEC`, and its ``is_pending`` false (allauth lists
    ``password_reset_by_code`` with ``is_pending: false`` while no reset waits)."""
    flow = spec["components"]["schemas"]["Flow"]["properties"]
    flow["id"]["enum"] = [*flow["id"]["enum"], *FLOWS_OUTSIDE_THE_SPEC]
    flow["is_pending"]["enum"] = [True, False]
    return spec


def conforms(name, body, kind="schemas"):
    """Whether ``body`` is valid against allauth's component ``name`` (of its specification as
    allauth answers it: :func:`as_allauth_answers`): a schema, or the JSON schema of a
    response (``kind="responses"``)."""
    import jsonschema_rs

    components = as_allauth_answers(allauth_spec())["components"]
    if kind == "responses":
        schema = components["responses"][name]["content"]["application/json"]["schema"]
    else:
        schema = {"$ref": f"#/components/schemas/{name}"}
    return jsonschema_rs.Draft7Validator({**schema, "components": components}).is_valid(body)


def implemented_operations():
    """``{spec path: {methods}}`` of the operations this app routes (for both clients, or one)."""
    from accounts.headless import urls

    found = {}
    clients = ((PREFIX, urls.OPERATIONS), (BROWSER_PREFIX, urls.BROWSER_OPERATIONS), (APP_PREFIX, urls.APP_OPERATIONS))
    for prefix, operations in clients:
        for route, view, _name in operations:
            found[prefix + route] = {method for method in view.http_method_names if method != "options"}
    return found


def implemented_spec(spec=None):
    """allauth's specification with only the operations this app implements."""
    spec = spec or allauth_spec()
    implemented = implemented_operations()
    paths = {}
    for path, operations in spec["paths"].items():
        methods = implemented.get(path, set())
        kept = {name: operation for name, operation in operations.items() if name in methods or name == "parameters"}
        if set(kept) - {"parameters"}:
            paths[path] = kept
    return {**spec, "paths": paths}


if __name__ == "__main__":
    import os

    import django

    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "tests.settings")
    django.setup()
    target = Path(__file__).resolve().parent.parent / "accounts" / "headless" / "openapi.json"
    target.write_text(json.dumps(implemented_spec(), indent=1, sort_keys=True) + "\n", encoding="utf-8")
