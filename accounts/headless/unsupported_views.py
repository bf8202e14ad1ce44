"""The JSON 404 of any path under the API that no operation answers.

A client written for allauth (its ``allauth.js`` reads every answer with ``resp.json()``)
gets JSON from every path of the API, never Django's HTML 404 page.
"""

from __future__ import annotations

from http import HTTPStatus
from typing import Any

from django.http import HttpRequest, HttpResponse, JsonResponse
from django.utils.cache import add_never_cache_headers
from django.utils.translation import gettext_lazy as _
from django.views import View

NOT_FOUND_MESSAGE = _("No operation of the API answers at this path.")


class NotFoundView(View):
    """Any path under the API that no operation answers, by any method: 404 in JSON
    (allauth's ``ErrorResponse``), with nothing read or written."""

    def dispatch(self, request: HttpRequest, *args: Any, **kwargs: Any) -> HttpResponse:
        body = {"status": HTTPStatus.NOT_FOUND, "errors": [{"message": str(NOT_FOUND_MESSAGE), "code": "not_found"}]}
        response = JsonResponse(body, status=HTTPStatus.NOT_FOUND)
        add_never_cache_headers(response)
        return response
