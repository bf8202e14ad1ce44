"""A sign-up whose outcome is unknown, remembered by the browser that sent it.

When DynamoDB takes a sign-up's transaction without answering in time, the sign-up may or
may not be saved (a 503 says so). Its account id is derived from the form's token
(:func:`accounts.store.account_id_for_token`): sent again with that token, the sign-up finds
the account it may have made, and goes on (the verification mail again, or logged in)
instead of meeting its own username as taken. The 503 form carries the token, but a person
may open the sign-up page anew, whose form has a token of its own; an API client may send
the sign-up again without an ``Idempotency-Key``. So the browser keeps the token, in a
signed cookie (the session is in DynamoDB, which just failed to answer), and the next
sign-up it sends within :data:`~accounts.forms.SIGNUP_TOKEN_MAX_AGE` is sent with it. Sent
with other values, the sign-up is a new one, as any form posted again with other values
(:meth:`accounts.forms.SignupForm.save`).
"""

from django.conf import settings
from django.core import signing
from django.http import HttpRequest, HttpResponse

from .forms import SIGNUP_TOKEN_MAX_AGE, SIGNUP_TOKEN_SALT

COOKIE_NAME = "accounts_unsettled_signup"
SALT = "accounts.unsettled_signups"


def remember(request: HttpRequest, response: HttpResponse, token: str) -> None:
    """Keep ``token`` (a sign-up's, as the form cleaned it) in this browser, on ``response``:
    signed, HttpOnly, SameSite=Lax, Secure on an HTTPS site, for
    :data:`~accounts.forms.SIGNUP_TOKEN_MAX_AGE`."""
    response.set_signed_cookie(
        COOKIE_NAME,
        token,
        salt=SALT,
        max_age=SIGNUP_TOKEN_MAX_AGE,
        path=settings.SESSION_COOKIE_PATH,
        domain=settings.SESSION_COOKIE_DOMAIN,
        secure=settings.SESSION_COOKIE_SECURE or request.is_secure(),
        httponly=True,
        samesite="Lax",
    )


def form_token(request: HttpRequest) -> str | None:
    """The remembered sign-up's token as a form carries it (signed now, so it is as fresh as
    a new form's), or ``None`` when this browser remembers none."""
    token = request.get_signed_cookie(COOKIE_NAME, default=None, salt=SALT, max_age=SIGNUP_TOKEN_MAX_AGE)
    return None if token is None else signing.TimestampSigner(salt=SIGNUP_TOKEN_SALT).sign(token)


def forget(request: HttpRequest, response: HttpResponse) -> None:
    """Drop the remembered sign-up, if any: a sign-up with its token reached an answer."""
    if COOKIE_NAME in request.COOKIES:
        response.delete_cookie(COOKIE_NAME, path=settings.SESSION_COOKIE_PATH, domain=settings.SESSION_COOKIE_DOMAIN)
