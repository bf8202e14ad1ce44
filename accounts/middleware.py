"""The request deadline, the 503 page shown when DynamoDB cannot answer in time, and the
400 for a form body that cannot be read."""

import logging
from collections.abc import Callable

from django.core.exceptions import BadRequest, SuspiciousOperation
from django.http import HttpRequest, HttpResponse, QueryDict
from django.template.loader import render_to_string
from pynamodb.exceptions import PynamoDBException

from . import deadline, ratelimit, sessions
from .exceptions import OutcomeUnknown, ReadOnlyRegion, Unavailable
from .transactions import RESEND_CODES, TRANSPORT_ERRORS

logger = logging.getLogger(__name__)

UNAVAILABLE_TEMPLATE = "accounts/unavailable.html"
RETRY_AFTER_SECONDS = 30
# The table is missing (not created yet, or being re-created): to a visitor, unavailable.
MISSING_TABLE_CODE = "ResourceNotFoundException"
# What the 503 page may say happened to the request.
UNAVAILABLE, NOT_SAVED, OUTCOME_UNKNOWN = "unavailable", "not_saved", "outcome_unknown"
READS_ONLY = "reads_only"
READ_ONLY_METHODS = frozenset({"GET", "HEAD", "OPTIONS", "TRACE"})


def is_unavailable(error: BaseException) -> bool:
    """Whether ``error`` means DynamoDB could not be reached (refused, reset, timed out,
    no time left before the request's deadline), answered "not now" (throttled, internal
    error) even after retries, has no table, or took a write without answering
    (:class:`OutcomeUnknown`)."""
    if isinstance(error, (Unavailable, OutcomeUnknown)):
        return True
    if isinstance(error, PynamoDBException):
        code = error.cause_response_code
        return isinstance(error.cause, TRANSPORT_ERRORS) or code in RESEND_CODES or code == MISSING_TABLE_CODE
    return False


def outcome_of(request: HttpRequest, error: BaseException) -> str:
    """What a failed request may say: :data:`OUTCOME_UNKNOWN` when a write may have
    committed (sent without an answer, or an earlier transaction of the request committed),
    :data:`NOT_SAVED` when a change was asked for and nothing was written,
    :data:`READS_ONLY` when a write was refused in a region that serves reads only, else
    :data:`UNAVAILABLE` (a page view)."""
    if isinstance(error, OutcomeUnknown) or deadline.saved_something():
        return OUTCOME_UNKNOWN
    if isinstance(error, ReadOnlyRegion):
        return READS_ONLY
    return UNAVAILABLE if request.method in READ_ONLY_METHODS else NOT_SAVED


def unavailable_response(request: HttpRequest, error: BaseException) -> HttpResponse:
    """The 503 page for ``error``, saying only what is known of the outcome.

    Rendered without the request: no context processor runs, so it never loads
    ``request.user``, which would need DynamoDB again."""
    logger.error("DynamoDB unavailable during %s %s", request.method, request.path, exc_info=error)
    outcome = outcome_of(request, error)
    response = HttpResponse(render_to_string(UNAVAILABLE_TEMPLATE, {"outcome": outcome}), status=503)
    response["Retry-After"] = str(RETRY_AFTER_SECONDS)
    return response


FORM_CONTENT_TYPE = "application/x-www-form-urlencoded"


def read_form_body(request: HttpRequest) -> None:
    """Read the form of a POST now; raises Django's ``BadRequest`` (or the
    ``SuspiciousOperation`` of a body too large) when it cannot be read, after leaving the
    request an empty form.

    Why first and here: Django refuses a form body in any charset but UTF-8 (or one too
    large) without remembering that it did, so the 400 page's own CSRF token reads the body
    again, fails again inside the error handler, and the answer is a bare 500 (issue 26,
    finding 6). Only ``application/x-www-form-urlencoded``: its body stays readable after
    (Django keeps it), and a multipart body Django marks unreadable itself."""
    if request.method != "POST" or request.content_type != FORM_CONTENT_TYPE:
        return
    try:
        request.POST
    except (BadRequest, SuspiciousOperation):
        request.POST = QueryDict()
        raise


def too_many_sessions_response(request: HttpRequest, error: ratelimit.RateLimited) -> HttpResponse:
    """The 429 answer to a request whose new session of nobody is over the limit per
    address: the session is dropped unsaved (its cookie with it), so nothing is written."""
    request.session = type(request.session)()
    message = ratelimit.RATE_LIMITED_MESSAGE % {"wait": ratelimit.wait_in_words(error.retry_after)}
    response = HttpResponse(message, status=429, content_type="text/plain; charset=utf-8")
    response["Retry-After"] = str(error.retry_after)
    return response


class UnavailableMiddleware:
    """Runs the request under ``ACCOUNTS_REQUEST_DEADLINE`` and answers 503 instead of a
    500 when DynamoDB cannot answer in time; a form body that cannot be read is a 400 page
    (the host's ``400.html``), not a 500.

    List it LAST in ``MIDDLEWARE``. A modified session is saved here, after the view, so a
    failing session write is answered with the 503 page too (the session middleware's own
    save afterwards sends nothing); a new session of nobody is counted first against
    ``ACCOUNTS_ANONYMOUS_SESSION_LIMIT``, and over it the answer is 429 and nothing is
    written (:func:`too_many_sessions_response`). It runs before any middleware's ``process_view`` (the
    CSRF check's), so it reads the form first (:func:`read_form_body`).
    """

    def __init__(self, get_response: Callable[[HttpRequest], HttpResponse]) -> None:
        self.get_response = get_response

    def __call__(self, request: HttpRequest) -> HttpResponse:
        read_form_body(request)
        with deadline.started():
            response = self.get_response(request)
            if response.status_code < 500:
                try:
                    if sessions.starts_anonymous_session(request):
                        ratelimit.consume_anonymous_session(request)
                    sessions.save_now(request)
                except ratelimit.RateLimited as error:
                    return too_many_sessions_response(request, error)
                except Exception as error:
                    if not is_unavailable(error):
                        raise
                    return unavailable_response(request, error)
            return response

    def process_exception(self, request: HttpRequest, exception: Exception) -> HttpResponse | None:
        if not is_unavailable(exception):
            return None
        return unavailable_response(request, exception)
