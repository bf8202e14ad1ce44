"""The 503 page shown when DynamoDB cannot be reached."""

import logging

from django.http import HttpResponse
from django.template.loader import render_to_string
from pynamodb.exceptions import PynamoDBException

from .exceptions import Unavailable
from .transactions import RESEND_CODES, TRANSPORT_ERRORS

logger = logging.getLogger(__name__)

UNAVAILABLE_TEMPLATE = "accounts/unavailable.html"
RETRY_AFTER_SECONDS = 30
# The table is missing (not created yet, or being re-created): to a visitor, unavailable.
MISSING_TABLE_CODE = "ResourceNotFoundException"


def is_unavailable(error):
    """Whether ``error`` means DynamoDB could not be reached (refused, reset, timed out),
    answered "not now" (throttled, internal error) even after retries, or has no table."""
    if isinstance(error, Unavailable):
        return True
    if isinstance(error, PynamoDBException):
        code = error.cause_response_code
        return isinstance(error.cause, TRANSPORT_ERRORS) or code in RESEND_CODES or code == MISSING_TABLE_CODE
    return False


class UnavailableMiddleware:
    """Answers 503 "temporarily unavailable, nothing was saved, try again" to a view that
    failed because DynamoDB is unreachable, instead of a 500.

    The page is rendered without the request: no context processor runs, so it never
    loads ``request.user``, which would need DynamoDB again.
    """

    def __init__(self, get_response):
        self.get_response = get_response

    def __call__(self, request):
        return self.get_response(request)

    def process_exception(self, request, exception):
        if not is_unavailable(exception):
            return None
        logger.error("DynamoDB unavailable during %s %s", request.method, request.path, exc_info=exception)
        response = HttpResponse(render_to_string(UNAVAILABLE_TEMPLATE), status=503)
        response["Retry-After"] = str(RETRY_AFTER_SECONDS)
        return response
