"""Breached passwords, checked with the k-anonymity range protocol (NIST SP 800-63B-4
§3.1.1.2: a new password must not be one known to be compromised).

Only the first 5 hex digits of the password's SHA-1 leave this process; the source answers
with every suffix of that prefix it knows (``SUFFIX:COUNT`` lines, the other 35 hex digits
in upper case), and the comparison happens here. ``ACCOUNTS_BREACHED_PASSWORDS`` names the
source:

- a range API's URL (``https://api.pwnedpasswords.com``, or a mirror): ``<url>/range/ABCDE``
  is asked, with ``Add-Padding`` so the answer's size says nothing of the prefix;
- or a directory with one file per prefix, as HIBP's downloader writes it: ``ABCDE`` or
  ``ABCDE.txt``.

Unset, nothing is checked. When the source cannot answer (unreachable, too slow, a missing
file) the check fails open, or closed with ``ACCOUNTS_BREACHED_PASSWORDS_FAIL_CLOSED``.
:class:`BreachedPasswordValidator` is a Django password validator: list it in
``AUTH_PASSWORD_VALIDATORS`` and every form that sets a password uses it (sign-up, change,
reset, staff's).
"""

import hashlib
import http.client
import logging
import urllib.request
from pathlib import Path

from django.core.exceptions import ValidationError
from django.utils.translation import gettext as _
from django.utils.translation import gettext_lazy, ngettext

from .app_settings import app_settings

logger = logging.getLogger(__name__)

PREFIX_LENGTH = 5
# A range API answers within tens of milliseconds; a form does not wait longer than this.
TIMEOUT_SECONDS = 3
USER_AGENT = "django-dynamo-accounts (breached password check)"
# Shown after a login whose (right) password appears in a breach: the login goes on.
LOGIN_WARNING = gettext_lazy("Your password has appeared in a data breach, so others may try it. Please change it now.")


class SourceUnavailable(Exception):
    """The breached-password source gave no answer for a prefix."""


def _digest(password: str) -> str:
    # SHA-1 because the range protocol is keyed by it; it protects nothing here.
    return hashlib.sha1(password.encode("utf-8"), usedforsecurity=False).hexdigest().upper()


def _range_from_url(base_url: str, prefix: str) -> str:
    request = urllib.request.Request(
        f"{base_url.rstrip('/')}/range/{prefix}", headers={"Add-Padding": "true", "User-Agent": USER_AGENT}
    )
    try:
        with urllib.request.urlopen(request, timeout=TIMEOUT_SECONDS) as answer:
            text: str = answer.read().decode("ascii", "replace")
            return text
    except (OSError, http.client.HTTPException, ValueError) as error:
        raise SourceUnavailable(f"{base_url}: {error}") from error


def _range_from_directory(directory: Path, prefix: str) -> str:
    for name in (prefix, f"{prefix}.txt"):
        try:
            return (directory / name).read_text("ascii", "replace")
        except FileNotFoundError:
            continue
        except OSError as error:
            raise SourceUnavailable(f"{directory / name}: {error}") from error
    # A complete download has every prefix: a missing one is a source that cannot answer.
    raise SourceUnavailable(f"{directory}: no file for prefix {prefix}")


def range_of(source: str, prefix: str) -> str:
    """The ``SUFFIX:COUNT`` lines ``source`` (a URL or a directory) holds for ``prefix``;
    raises :class:`SourceUnavailable`."""
    if source.startswith(("http://", "https://")):
        return _range_from_url(source, prefix)
    return _range_from_directory(Path(source), prefix)


def times_breached(password: str) -> int | None:
    """How often ``password`` appears in the configured source's breaches (0: never), or
    ``None`` when no source is configured or it cannot answer (logged)."""
    source = app_settings.BREACHED_PASSWORDS
    if not source:
        return None
    digest = _digest(password)
    prefix, suffix = digest[:PREFIX_LENGTH], digest[PREFIX_LENGTH:]
    try:
        lines = range_of(str(source), prefix)
    except SourceUnavailable as error:
        logger.warning("Breached-password source unavailable: %s", error)
        return None
    for line in lines.splitlines():
        candidate, _colon, count = line.strip().partition(":")
        if candidate.upper() == suffix:
            # Padding lines (Add-Padding) have count 0: not a breached password.
            return int(count) if count.strip().isdigit() else 1
    return 0


class BreachedPasswordValidator:
    """Refuses a new password that appears in a breach (see the module); a source that
    cannot answer refuses it only with ``ACCOUNTS_BREACHED_PASSWORDS_FAIL_CLOSED``."""

    def validate(self, password: str, user: object = None) -> None:
        if not app_settings.BREACHED_PASSWORDS:
            return
        count = times_breached(password)
        if count is None and app_settings.BREACHED_PASSWORDS_FAIL_CLOSED:
            raise ValidationError(
                _("Passwords cannot be checked against known breaches right now. Please try again later."),
                code="password_breach_check_unavailable",
            )
        if count:
            raise ValidationError(
                ngettext(
                    "This password has appeared in a data breach %(count)d time, so others may try it. "
                    "Please choose another.",
                    "This password has appeared in data breaches %(count)d times, so others may try it. "
                    "Please choose another.",
                    count,
                ),
                code="password_breached",
                params={"count": count},
            )

    def get_help_text(self) -> str:
        return _("Your password can't be one that has appeared in a known data breach.")
