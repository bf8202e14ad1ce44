"""Time-based one-time passwords (RFC 6238, with pyotp): the secret, the ``otpauth://`` URI
an authenticator app scans (as a QR code, inline SVG drawn by segno), and checking a code.

A code is accepted for its own 30-second time step and one step either side (clock drift),
and once only: the step a code matched is recorded for the account by a guarded write that
expires when no code of that step can be accepted any more
(:func:`accounts.transactions.totp_step_spend`).
"""

import hmac
import time

import pyotp
import segno

from ..app_settings import app_settings

STEP_SECONDS = 30
DIGITS = 6
# Steps accepted either side of the current one.
DRIFT = 1
# How much longer than the last instant a step is accepted its record is kept, at least:
# servers' clocks differ, and a record must outlive every server's window for its step (and
# ACCOUNTS_CLOCK_SKEW_MARGIN, when it is larger: see step_record_expires).
CLOCK_MARGIN_SECONDS = 300


def new_secret():
    """A new random secret: 32 base32 characters (160 bits, RFC 4226's recommendation)."""
    return pyotp.random_base32(length=32)


def provisioning_uri(secret, account_name, issuer):
    """The ``otpauth://totp/...`` URI of ``secret`` for ``account_name`` at ``issuer``."""
    return pyotp.TOTP(secret, digits=DIGITS, interval=STEP_SECONDS).provisioning_uri(
        name=account_name, issuer_name=issuer
    )


def qr_code_svg(uri, title):
    """``uri`` as a QR code: an inline ``<svg>`` element with no style attribute (the site's
    Content-Security-Policy forbids inline style)."""
    return segno.make(uri, error="m").svg_inline(scale=4, border=4, title=title, dark="#000", light="#fff")


def normalize(code):
    """A typed code without the spaces and dashes people put in it."""
    return "".join(character for character in code if character not in " -\u00a0")


def looks_like_a_code(code):
    """Whether ``code`` (normalized) has the shape of a TOTP code: six ASCII digits."""
    return len(code) == DIGITS and code.isascii() and code.isdigit()


def current_step(now=None):
    return int((time.time() if now is None else now) // STEP_SECONDS)


def matching_step(secret, code, now=None):
    """The time step whose code ``code`` is, within :data:`DRIFT` steps of now, or ``None``.
    Every candidate is compared in constant time."""
    if not looks_like_a_code(code):
        return None
    totp = pyotp.TOTP(secret, digits=DIGITS, interval=STEP_SECONDS)
    current = current_step(now)
    found = None
    for step in range(current - DRIFT, current + DRIFT + 1):
        if hmac.compare_digest(totp.at(step * STEP_SECONDS), code):
            found = step
    return found


def step_record_expires(step: int) -> int:
    """When the record of a used ``step`` may go: after the last instant any server accepts
    a code of that step (epoch seconds). TTL may delete it then, by DynamoDB's clock, while
    a server whose clock is behind by up to ``ACCOUNTS_CLOCK_SKEW_MARGIN`` still accepts the
    step's code: so the record is kept that margin past the step's last instant, or
    :data:`CLOCK_MARGIN_SECONDS` if that is longer (protocol/factors.pml, F2)."""
    margin = max(CLOCK_MARGIN_SECONDS, int(app_settings.CLOCK_SKEW_MARGIN.total_seconds()))
    return (step + DRIFT + 1) * STEP_SECONDS + margin
