"""How the members site compares phone numbers."""

import unicodedata


def normalize_phone(value):
    """Keep the digits and a leading ``+``: ``"+1 (555) 010-9999"`` -> ``"+15550109999"``.

    NFKC first, so full-width digits count as the digits they look like.
    """
    text = unicodedata.normalize("NFKC", str(value)).strip()
    digits = "".join(character for character in text if character in "0123456789")
    return f"+{digits}" if text.startswith("+") else digits
