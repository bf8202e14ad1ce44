"""``tokens/refresh``: the ``app`` client's refresh token exchanged for a new access token (and
the next refresh token), under the JWT token strategy (:mod:`.tokens`)."""

from __future__ import annotations

from django.http import HttpRequest
from django.utils.translation import gettext_lazy as _

from . import responses, tokens
from .base import APIView
from .responses import Answer

MESSAGES = {
    "required": _("Enter the refresh token."),
    "invalid": _("This refresh token is not valid: it expired, was used, or its session ended. Please log in again."),
}


class RefreshTokenView(APIView):
    """``POST tokens/refresh`` (``refresh_token``): 200 with ``data.access_token`` and, when
    refresh tokens rotate (``ACCOUNTS_HEADLESS_JWT_ROTATE_REFRESH_TOKEN``, the default),
    ``data.refresh_token``, the next one (the one sent is used up); 400 ``invalid_token`` for
    a token that is not valid, expired, used, or whose session ended (and always under the
    ``"session"`` strategy, which has no refresh tokens)."""

    http_method_names = ["post"]

    def post(self, request: HttpRequest) -> Answer:
        token = self.text("refresh_token")
        if not token:
            return responses.error(str(MESSAGES["required"]), "required", "refresh_token")
        refreshed = tokens.refresh(token)
        if refreshed is None:
            return responses.error(str(MESSAGES["invalid"]), "invalid_token", "refresh_token")
        data = {"access_token": refreshed.access_token}
        if refreshed.refresh_token is not None:
            data["refresh_token"] = refreshed.refresh_token
        return Answer(data=data)
