"""django-allauth's headless OpenAPI specification, from the installed wheel (a test-only
dependency), and the part of it this app implements (what accounts/headless/openapi.json
holds). ``python -m tests.headless_spec`` writes that file again."""

import json
from pathlib import Path

import yaml

PREFIX = "/_allauth/{client}/v1/"
BROWSER_PREFIX = "/_allauth/browser/v1/"
APP_PREFIX = "/_allauth/app/v1/"


def allauth_spec():
    """allauth's specification as shipped in its wheel (never imported: read as a file)."""
    import importlib.util

    origin = Path(importlib.util.find_spec("allauth").origin).parent
    return yaml.safe_load((origin / "headless" / "spec" / "doc" / "openapi.yaml").read_text(encoding="utf-8"))


def conforms(name, body, kind="schemas"):
    """Whether ``body`` is valid against allauth's component ``name``: a schema, or the JSON
    schema of a response (``kind="responses"``)."""
    import jsonschema_rs

    components = allauth_spec()["components"]
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
