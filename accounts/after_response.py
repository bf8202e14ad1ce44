"""Work done once an answer has been sent: what must not show in how long it took.

A password reset answers the same for a registered address and an unknown one; making and
sending the link (a read of the account, a mail server's round trip) would still tell them
apart by the time the answer takes. So the answer goes first, and the work when the server
closes the response: a WSGI server (gunicorn, ``runserver``) closes it once its bytes are
written, and Django's test client before it returns it, so a test sees the mail at once.
"""

import logging
from collections.abc import Callable
from typing import Any

from django.http import HttpResponseRedirect, JsonResponse
from django.http.response import HttpResponseBase
from django.utils import translation

logger = logging.getLogger(__name__)


class WorkAfterClose(HttpResponseBase):
    """A response mixin that runs ``work`` when the response is closed, after it was sent.

    ``work`` runs once, in the language the request was answered in (the mail it sends
    speaks the asker's language); what it raises is logged, never answered: the answer is
    gone already, and it said nothing of what the work would find.
    """

    def run_after_close(self, work: Callable[[], object]) -> None:
        self._work: Callable[[], object] | None = work
        self._language = translation.get_language()

    def close(self) -> None:
        work, self._work = self._work, None
        try:
            if work is not None:
                with translation.override(self._language):
                    work()
        except Exception:
            logger.exception("The work after the answer to %s failed.", self)
        finally:
            super().close()


class RedirectThen(WorkAfterClose, HttpResponseRedirect):
    """A redirect to ``redirect_to`` that runs ``work`` once it was sent (:class:`WorkAfterClose`)."""

    def __init__(self, redirect_to: str, work: Callable[[], object]) -> None:
        super().__init__(redirect_to)
        self.run_after_close(work)


class JsonThen(WorkAfterClose, JsonResponse):
    """A JSON answer of ``data`` that runs ``work`` once it was sent (:class:`WorkAfterClose`)."""

    def __init__(self, data: dict[str, Any], work: Callable[[], object], **kwargs: Any) -> None:
        super().__init__(data, **kwargs)
        self.run_after_close(work)
