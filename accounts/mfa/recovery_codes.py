"""Recovery codes: ten single-use codes for when the authenticator is lost.

They are shown once, when generated, and stored only as digests on the account
(``Account.recovery_codes``): a SHA-256 of the account id and the code. The codes are random
(60 bits each, from an alphabet without look-alike characters), so a fast hash is enough: no
dictionary or brute force can reach them. Using one moves its digest to
``Account.used_recovery_codes`` with a guarded write
(:func:`accounts.transactions.recovery_code_spend`), so each is accepted once, and a used
one is told "already used", not "wrong code", until new codes replace them all.
"""

import hashlib
import secrets
import unicodedata
from collections.abc import Iterable

COUNT = 10
# No 0/o, 1/l/i: a code is read off paper and typed back.
ALPHABET = "abcdefghjkmnpqrstuvwxyz23456789"
GROUPS, GROUP_LENGTH = 3, 4


def generate() -> list[str]:
    """:data:`COUNT` new codes, as shown: ``"xxxx-xxxx-xxxx"``."""
    return ["-".join(_group() for _ in range(GROUPS)) for _ in range(COUNT)]


def _group() -> str:
    return "".join(secrets.choice(ALPHABET) for _ in range(GROUP_LENGTH))


def normalize(code: str) -> str:
    """A typed code as stored: NFKC, lower case, without spaces and dashes."""
    return "".join(character for character in unicodedata.normalize("NFKC", code).lower() if character not in " -")


def digest(account_id: str, code: str) -> str:
    """What the account stores of ``code``."""
    return hashlib.sha256(f"{account_id}:{normalize(code)}".encode()).hexdigest()


def digests(account_id: str, codes: Iterable[str]) -> set[str]:
    """What the account stores of ``codes``."""
    return {digest(account_id, code) for code in codes}
