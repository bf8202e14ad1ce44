"""Warnings an API answer carries beside its data, in ``meta.warnings``: a list of
``{"code", "message"}`` (the message translated), present only when there is one.

django-allauth's headless API has no way to warn in an answer that succeeds (its pages use
Django's messages, which an API client never sees), and its ``meta`` objects allow more
properties than they list, so a client that does not know ``warnings`` reads the answer as
before. The one warning today: ``password_breached``, after a login whose (right) password
appears in a known breach (NIST SP 800-63B-4 §3.1.1.2), as the login page warns.
"""

from django.views.decorators.debug import sensitive_variables

from .. import breached_passwords
from .responses import Answer

PASSWORD_BREACHED = "password_breached"


@sensitive_variables("password")
def about_password(answer: Answer, password: str) -> Answer:
    """``answer``, warning ``password_breached`` when ``password`` (just checked right)
    appears in the breached-password source (``ACCOUNTS_BREACHED_PASSWORDS``)."""
    if breached_passwords.times_breached(password):
        warning = {"code": PASSWORD_BREACHED, "message": str(breached_passwords.LOGIN_WARNING)}
        answer.meta = {**(answer.meta or {}), "warnings": [warning]}
    return answer
