"""What a browser's session remembers of the sign-up that waits for its verification link.

The sign-up (and a login with the right password of an unverified account) notes the
account in the session, so that this browser, and only this one, can be shown "check your
inbox", send the link again, and be told to confirm its address when it logs in by email.
"""

from typing import Any

from django.http import HttpRequest

# {"id": account id or None, "email": address, "outcome": what became of the last mail
# (verification.SENT, TOO_SOON or FAILED)}.
PENDING_SESSION_KEY = "accounts_pending_verification"


def pending_account_id(request: HttpRequest) -> str | None:
    """The id of the account this browser signed up and has not verified yet, or ``None``."""
    session = getattr(request, "session", None)
    pending = session.get(PENDING_SESSION_KEY) if session is not None else None
    return (pending or {}).get("id")


def remember_pending(
    request: HttpRequest, account_id: str, email: str, outcome: str, method: dict[str, Any] | None = None
) -> None:
    """Note in the session who waits for a verification mail, for the "check your inbox"
    page, and how the person proved who they are (``method``: the sign-up's password or
    passkey), for the login that goes on once the address is verified here."""
    request.session[PENDING_SESSION_KEY] = {"id": account_id, "email": email, "outcome": outcome, "method": method}


def pending_method(request: HttpRequest) -> dict[str, Any] | None:
    """How the person of this browser's pending sign-up proved who they are, or ``None``."""
    session = getattr(request, "session", None)
    pending = session.get(PENDING_SESSION_KEY) if session is not None else None
    return (pending or {}).get("method")
