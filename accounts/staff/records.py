"""What staff did to an account: each change is logged (logger ``accounts.staff``) with the
staff member's username (their address on a site without usernames) and id, and sent as
:data:`accounts.signals.staff_changed_account` so that a host can keep its own record (an
audit trail, a SIEM)."""

import logging

from django.http import HttpRequest

from .. import signals

logger = logging.getLogger("accounts.staff")


def record(request: HttpRequest, account, action: str, description: str) -> None:
    """Record that the staff member of ``request`` did ``action`` to ``account`` (after it
    committed); ``description`` says what, in words, e.g. ``changed the username to ada``."""
    staff = request.user
    logger.info("Staff %s %s of account %s (staff id %s).", staff.display_name, description, account.id, staff.pk)
    signals.staff_changed_account.send(
        sender=type(account), staff=staff, account=account, action=action, description=description
    )
