"""The demo site's adapter: it texts nothing, it prints each text in the terminal (as the
console mail backend prints mail), so a phone number can be verified on `make run`."""

import sys
import threading

from accounts.adapter import DefaultAccountAdapter

_printing = threading.Lock()


def print_text(phone: str, text: str) -> None:
    """Print ``text`` as a text message to ``phone``, whole (one writer at a time)."""
    with _printing:
        sys.stdout.write(f"SMS to {phone}\n{text}\n{'-' * 79}\n")
        sys.stdout.flush()


class DemoAdapter(DefaultAccountAdapter):
    """The app's adapter, its texts printed."""

    def send_verification_code_sms(self, user, phone, code, **kwargs):
        why = "Your login code" if kwargs.get("login") else "Your verification code"
        print_text(phone, f"{why}: {code}")

    def send_account_already_exists_sms(self, phone, **kwargs):
        print_text(phone, "Someone tried to use this number for another account. If it was you, log in instead.")
