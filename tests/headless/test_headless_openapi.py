"""The site serves its own OpenAPI document: allauth's specification, as the installed
wheel ships it, with exactly the operations this app routes."""

import json

from django.test import Client

from tests.headless_spec import PREFIX, implemented_operations, implemented_spec


def test_the_served_document_is_allauths_spec_cut_to_the_implemented_operations():
    served = Client().get("/_allauth/openapi.json")

    assert served.status_code == 200
    assert served.json() == json.loads(json.dumps(implemented_spec()))


def test_the_document_lists_every_routed_operation_and_no_other():
    paths = Client().get("/_allauth/openapi.json").json()["paths"]

    listed = {path: {method for method in operations if method != "parameters"} for path, operations in paths.items()}

    assert listed == implemented_operations()
    assert PREFIX + "auth/provider/token" in listed
    assert "/_allauth/browser/v1/auth/provider/redirect" in listed
    assert PREFIX + "auth/code/resend" in listed
