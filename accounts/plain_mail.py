"""Mail whose lines reach the reader as written, the link included.

Django 6's mail (Python's modern ``email`` API) sends a body with any line over 78
characters as quoted-printable or base64: a verification link, longer than that, then
prints in the console backend broken over lines ending in ``=``, and a Japanese mail as
base64. A link cannot be cut, so the body goes out as its own lines: ``7bit`` when it is
ASCII, else ``8bit``, as Django 5.2 already sends it (SMTP allows 998 characters a line).
"""

import email.message

from django.conf import settings
from django.core.mail import EmailMessage


class PlainTextMessage(EmailMessage):
    """An ``EmailMessage`` whose plain text body is never quoted-printable or base64."""

    def message(self, **kwargs):
        message = super().message(**kwargs)
        # Django 5.2 builds a legacy MIMEText, already 8bit for lines this short.
        if isinstance(message, email.message.EmailMessage) and not message.is_multipart():
            encoding = "7bit" if self.body.isascii() else "8bit"
            charset = self.encoding or settings.DEFAULT_CHARSET
            message.set_content(self.body, subtype=self.content_subtype, charset=charset, cte=encoding)
        return message
