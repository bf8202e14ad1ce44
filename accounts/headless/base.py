"""What every API view shares: the client's session, the JSON input, the ``Idempotency-Key``,
and the answers no view writes itself (400 for a body that is not a JSON object of text,
405, 410, 422 for a key reused with another body, 429, 503)."""

from __future__ import annotations

import logging
from http import HTTPStatus
from typing import Any

from django.conf import settings
from django.contrib.sessions.exceptions import SessionInterrupted
from django.http import HttpRequest, HttpResponse, JsonResponse
from django.utils.cache import add_never_cache_headers
from django.utils.translation import gettext_lazy as _
from django.views import View

from .. import bounded_json, devices, idempotency, ratelimit
from ..after_response import JsonThen
from ..exceptions import TokenReused
from ..middleware import RETRY_AFTER_SECONDS, is_unavailable, outcome_of
from . import clients, responses, tokens
from .responses import Answer

logger = logging.getLogger(__name__)

UNAVAILABLE_MESSAGES = {
    "unavailable": _("Our account storage is not answering. Please try again in a moment."),
    "not_saved": _("Our account storage is not answering, so nothing was saved. Please try again in a moment."),
    "outcome_unknown": _(
        "We cannot tell whether this was saved: our account storage did not answer in time. "
        "Sending the same request again (with the same Idempotency-Key) is safe."
    ),
    "reads_only": _("This region serves reads only at the moment: nothing was saved. Please try again later."),
}


IDEMPOTENCY_KEY_HEADER = "Idempotency-Key"
KEY_REUSED_MESSAGE = _(
    "This Idempotency-Key was already sent with another request to this operation. "
    "Send a new key with a new request; send the same request again to get its first answer."
)

# An input holds at most a passkey's answer (65,536 characters, nesting 16 deep) and a few
# short values beside it: anything longer or deeper is not an input of this API, and Python's
# json would recurse once per level (a RecursionError, a 500).
MAX_INPUT_LENGTH = 2 * 65536
MAX_INPUT_DEPTH = 20


INPUT_MESSAGES = {
    "not_an_object": _("The request body must be a JSON object."),
    "not_text": _(
        "The request body holds a string that is not text: a lone UTF-16 surrogate (such as \\ud800). "
        "Send each character whole."
    ),
}


class InvalidInput(Exception):
    """The request body is not a JSON object of text (``reason``: a key of :data:`INPUT_MESSAGES`)."""

    def __init__(self, reason: str = "not_an_object") -> None:
        super().__init__(reason)
        self.reason = reason


class APIView(View):
    """A view of the API for one client (``client``, set by :mod:`accounts.headless.urls`).

    Subclasses define ``get``/``post``/... returning an :class:`Answer`; :attr:`input`
    holds the JSON body (an object). A session token that is gone answers 410, a refused
    rate limit 429 with ``Retry-After``, DynamoDB gone or slow 503 with ``Retry-After``
    (saying whether a write may have been saved), a method the operation lacks 405, an
    ``Idempotency-Key`` the caller sent with another body 422 (:meth:`claimed_key`).
    """

    client: str = clients.BROWSER
    input: dict[str, Any]
    # Whether the operation has input: one without (allauth's ``handle_json_input = False``)
    # ignores whatever body it is sent.
    takes_input: bool = True

    def dispatch(self, request: HttpRequest, *args: Any, **kwargs: Any) -> HttpResponse:
        handler = (
            getattr(self, request.method.lower(), None) if request.method.lower() in self.http_method_names else None
        )
        if handler is None:
            return self.render(request, Answer(status=HTTPStatus.METHOD_NOT_ALLOWED))
        try:
            self.input = self.read_input(request)
        except InvalidInput as error:
            return self.render(request, responses.error(INPUT_MESSAGES[error.reason], "invalid"))
        try:
            if self.client == clients.APP:
                with clients.app_session(request):
                    return self.answer(request, handler, *args, **kwargs)
            return self.answer(request, handler, *args, **kwargs)
        except clients.SessionGone:
            return self.render(request, self.session_gone(request))
        except Exception as error:
            if not is_unavailable(error):
                raise
            return self.unavailable(request, error)

    def answer(self, request: HttpRequest, handler, *args: Any, **kwargs: Any) -> HttpResponse:
        """Run ``handler``, save the session, and render its answer (with the app's new
        session token)."""
        try:
            answer = handler(request, *args, **kwargs)
        except ratelimit.RateLimited as error:
            answer = rate_limited(error)
        except (idempotency.KeyReused, TokenReused):
            # TokenReused: DynamoDB's IdempotentParameterMismatch, a ClientRequestToken made
            # from a key sent again with other values: the same refusal, never a 500.
            answer = responses.error(
                KEY_REUSED_MESSAGE, "idempotency_key_reused", status=HTTPStatus.UNPROCESSABLE_ENTITY
            )
        try:
            clients.save(request)
        except SessionInterrupted:
            # Ended meanwhile (a logout or a password change elsewhere): nobody is logged in.
            return self.render(request, self.session_gone(request))
        if self.client == clients.APP:
            token = clients.new_session_token(request)
            if token is not None:
                # Under the JWT strategy, a logged-in session's new key comes with its tokens.
                answer.meta = {**(answer.meta or {}), "session_token": token, **tokens.for_new_session(request)}
        return self.render(request, answer)

    def session_gone(self, request: HttpRequest) -> Answer:
        """410: the session (token) this request came with is gone."""
        return Answer(status=HTTPStatus.GONE, data={}, meta={"is_authenticated": False})

    def unavailable(self, request: HttpRequest, error: Exception) -> HttpResponse:
        """503 with ``Retry-After``, saying what is known of the outcome (as the HTML 503 page)."""
        logger.error("DynamoDB unavailable during %s %s", request.method, request.path, exc_info=error)
        outcome = outcome_of(request, error)
        answer = responses.error(UNAVAILABLE_MESSAGES[outcome], outcome, status=HTTPStatus.SERVICE_UNAVAILABLE)
        answer.headers["Retry-After"] = str(RETRY_AFTER_SECONDS)
        return self.render(request, answer)

    def read_input(self, request: HttpRequest) -> dict[str, Any]:
        """The JSON object of a POST, PUT, PATCH or DELETE body (``{}`` when empty), read only
        when its size and nesting are bounded and every string in it is text
        (:mod:`accounts.bounded_json`): no operation ever sees a lone surrogate."""
        if request.method in ("GET", "HEAD", "OPTIONS") or not self.takes_input or not request.body:
            return {}
        try:
            data = bounded_json.loads(request.body, max_length=MAX_INPUT_LENGTH, max_depth=MAX_INPUT_DEPTH)
        except bounded_json.LoneSurrogate as error:
            raise InvalidInput("not_text") from error
        except (ValueError, UnicodeDecodeError) as error:
            raise InvalidInput from error
        if not isinstance(data, dict):
            raise InvalidInput
        return data

    def claimed_key(self, request: HttpRequest) -> idempotency.ClientKey | None:
        """The ``Idempotency-Key`` this request came with, scoped to its caller and this
        operation and claimed for this request (:meth:`accounts.idempotency.ClientKey.claim`,
        one guarded ``PutItem``), or ``None`` without one. Raises
        :class:`~accounts.idempotency.KeyReused` (answered 422) when the caller sent it to this
        operation with another body. An operation that honours the key calls it once."""
        text = request.headers.get(IDEMPOTENCY_KEY_HEADER)
        if not text:
            return None
        operation = f"{request.resolver_match.url_name if request.resolver_match else request.path}:{request.method}"
        key = idempotency.ClientKey(
            key=text,
            operation=operation,
            caller=self.caller(request),
            fingerprint=idempotency.fingerprint(request.method or "", self.input),
        )
        key.claim()
        return key

    def caller(self, request: HttpRequest) -> str:
        """Who sends this request, as far as anything tells: the account of a logged-in
        request; else the session the client holds, as it sent it (an app's session token, a
        browser's CSRF cookie, or its session cookie); else ``""`` (an app's first request:
        nothing but its body identifies it)."""
        if request.user.is_authenticated:
            return f"account:{request.user.pk}"
        if self.client == clients.APP:
            token = clients.session_token(request)
            return f"token:{token}" if token else ""
        cookie = request.COOKIES.get(settings.CSRF_COOKIE_NAME) or request.COOKIES.get(settings.SESSION_COOKIE_NAME)
        return f"browser:{cookie}" if cookie else ""

    def text(self, name: str) -> str | None:
        """The input ``name`` when it is a string, else ``None`` (absent, or of another type)."""
        value = self.input.get(name)
        return value if isinstance(value, str) else None

    def render(self, request: HttpRequest, answer: Answer) -> HttpResponse:
        if answer.then is not None:
            response: HttpResponse = JsonThen(answer.body(), answer.then, status=answer.status)
        else:
            response = JsonResponse(answer.body(), status=answer.status)
        for name, value in answer.headers.items():
            response[name] = value
        add_never_cache_headers(response)
        if answer.trusted_account is not None and self.client == clients.BROWSER:
            # This browser is now trusted for the account, as after an HTML login (an app
            # keeps no cookie: guesses from elsewhere count against it as against anyone).
            devices.remember(request, response, answer.trusted_account)
        return response


def rate_limited(error: ratelimit.RateLimited) -> Answer:
    """429 with ``Retry-After`` and how long to wait, in words."""
    refusal = error.validation_error()
    answer = responses.error(refusal.message % refusal.params, "rate_limited", status=HTTPStatus.TOO_MANY_REQUESTS)
    answer.headers["Retry-After"] = str(error.retry_after)
    return answer
