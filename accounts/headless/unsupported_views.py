"""The operations of django-allauth's API for features this site does not have, answered as
allauth answers while the feature is off, and the JSON 404 of any other path under the API.

- **Reauthentication by a mailed code** (``auth/reauthenticate/code/...``): not among the
  site's ways to reauthenticate (allauth's ``ACCOUNT_REAUTHENTICATION_METHODS`` without
  ``code``): 403 to a logged-in session, 401 with the flows to log in to anyone else. The
  401 that asks for a fresh proof never offers it (``reauthenticate_by_code``).

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

from . import responses
from .base import APIView
from .responses import Answer

NOT_FOUND_MESSAGE = _("No operation of the API answers at this path.")


class ReauthenticationCodeView(APIView):
    """``POST auth/reauthenticate/code/request``, ``.../confirm`` and ``.../resend``: 403
    (not a way to reauthenticate on this site) to a logged-in session, else 401 with the
    flows to log in."""

    http_method_names = ["post"]

    def post(self, request: HttpRequest) -> Answer:
        if not request.user.is_authenticated:
            return responses.unauthenticated(request)
        return Answer(status=HTTPStatus.FORBIDDEN)


class NotFoundView(View):
    """Any path under the API that no operation answers, by any method: 404 in JSON
    (allauth's ``ErrorResponse``), with nothing read or written."""

    def dispatch(self, request: HttpRequest, *args: Any, **kwargs: Any) -> HttpResponse:
        body = {"status": HTTPStatus.NOT_FOUND, "errors": [{"message": str(NOT_FOUND_MESSAGE), "code": "not_found"}]}
        response = JsonResponse(body, status=HTTPStatus.NOT_FOUND)
        add_never_cache_headers(response)
        return response
