"""Password hashes carried as they are: the site verifies them with its own hashers and, on
the first successful login, stores the password hashed with its first ``PASSWORD_HASHERS``
entry (:meth:`accounts.models.User.check_password` persists the upgrade).

A hash in Django's encoding (``pbkdf2_sha256$...`` at any iteration count, ``argon2$...``,
``bcrypt_sha256$...``, ``bcrypt$...``, ``scrypt$...``) is kept as it is. A bare bcrypt hash
(``$2a$``/``$2b$``/``$2y$``, as Auth0 exports it) becomes Django's ``bcrypt$<hash>``, which
Django's ``BCryptPasswordHasher`` verifies. No password, or an empty one, is an unusable
password: the person sets one by resetting it.
"""

import re

from django.contrib.auth.hashers import UNUSABLE_PASSWORD_PREFIX, identify_hasher, make_password

# Django's password column: what a hash may be long at most.
MAX_HASH_LENGTH = 128
BARE_BCRYPT = re.compile(r"\$2[aby]\$\d\d\$[./A-Za-z0-9]{53}")


class PasswordRefused(ValueError):
    """A password value the site cannot carry: ``code`` is ``invalid`` or ``unknown_hasher``."""

    def __init__(self, code: str, message: str) -> None:
        self.code = code
        super().__init__(message)


def carried_password(value: object) -> str:
    """The hash to store for ``value``, a source's password field; raises
    :class:`PasswordRefused` for one that is no hash, or whose algorithm the site's
    ``PASSWORD_HASHERS`` lacks (its users could never log in with it)."""
    if value is None or value == "":
        return make_password(None)
    if not isinstance(value, str) or len(value) > MAX_HASH_LENGTH:
        raise PasswordRefused("invalid", "The password is not a password hash.")
    if value.startswith(UNUSABLE_PASSWORD_PREFIX):
        # Django's own mark of "no usable password" (a user who signed up with a provider).
        return make_password(None)
    if BARE_BCRYPT.fullmatch(value):
        value = f"bcrypt${value}"
    try:
        hasher = identify_hasher(value)
    except ValueError as error:
        algorithm = value.split("$", 1)[0] if "$" in value else "?"
        raise PasswordRefused(
            "unknown_hasher",
            f"No hasher of PASSWORD_HASHERS reads {algorithm!r} hashes: add the one that does ({error}).",
        ) from error
    try:
        hasher.decode(value)
    except (ValueError, IndexError, TypeError, AssertionError) as error:
        raise PasswordRefused("invalid", f"The password is not a well-formed {hasher.algorithm} hash.") from error
    return value
