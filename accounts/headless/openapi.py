"""The site's own OpenAPI document: django-allauth's headless specification cut down to
the operations this app implements (``openapi.json`` beside this module, made from the
specification in the django-allauth wheel by ``tests/headless_spec.py``; a test keeps the
two in step). allauth's specification is MIT-licensed, as its copy here."""

from __future__ import annotations

import json
from functools import cache
from pathlib import Path

from django.http import HttpRequest, JsonResponse
from django.views import View

DOCUMENT = Path(__file__).with_name("openapi.json")


@cache
def document() -> dict:
    """The OpenAPI document (read once per process)."""
    return json.loads(DOCUMENT.read_text(encoding="utf-8"))


class OpenAPIView(View):
    """``GET openapi.json``: the document, as JSON."""

    http_method_names = ["get"]

    def get(self, request: HttpRequest) -> JsonResponse:
        return JsonResponse(document())
