"""The items of second factors, in their account's partition (``PK=ACCT#<id>``).

- a passkey's credential item, ``SK=WEBAUTHN#<digest of the credential id>``: its public
  key, signature counter, backup flags, name and dates. The credential id itself is a
  unique value of the account (``Account.passkeys``, locked under ``UNIQ#WEBAUTHN#<id>``),
  written in the same transaction as this item (:mod:`accounts.transactions.authenticators`);
- the record of a TOTP time step the account used, ``SK=TOTP#<step>``, which expires once
  no code of that step can be accepted.

Outside any account: the record that a passkey login's challenge was answered,
``PK=USED#<SHA-256 of the challenge>``, ``SK=USED``, which expires with the challenge (an
anonymous visitor's challenge is signed into a cookie, not kept in a session item).

The account item itself holds the TOTP secret and the digests of unused recovery codes.
"""

import hashlib

from pynamodb.attributes import (
    BinaryAttribute,
    BooleanAttribute,
    ListAttribute,
    NumberAttribute,
    UnicodeAttribute,
    UTCDateTimeAttribute,
)

from ..tables import TableModel, account_pk, passkey_sort_key, utcnow

TOTP_STEP_PREFIX = "TOTP#"
USED_CHALLENGE_PREFIX = "USED#"
USED_CHALLENGE_SORT_KEY = "USED"


class Passkey(TableModel):
    """A passkey or security key of an account (a WebAuthn credential)."""

    PK = UnicodeAttribute(hash_key=True)
    SK = UnicodeAttribute(range_key=True)
    credential_id = UnicodeAttribute()  # base64url, as the browser spells it
    name = UnicodeAttribute()
    public_key = BinaryAttribute(legacy_encoding=False)  # COSE
    sign_count = NumberAttribute(default=0)
    # Backup eligibility is fixed when it is created; its state may change (WebAuthn §6.1.3).
    backup_eligible = BooleanAttribute(default=False)
    backup_state = BooleanAttribute(default=False)
    transports = ListAttribute(of=UnicodeAttribute, null=True)
    aaguid = UnicodeAttribute(null=True)
    # Discoverable (a passkey) or not (a security key), as the browser said at registration.
    discoverable = BooleanAttribute(null=True)
    created = UTCDateTimeAttribute(default_for_new=utcnow)
    last_used = UTCDateTimeAttribute(null=True)
    # The first passkey of an account signed up with one expires with it until verified.
    expires = NumberAttribute(null=True)
    # The user handle it was registered with on the site it was imported from
    # (accounts_import: django-allauth's is the user's primary key there), which its
    # discoverable login answers with; None for a passkey registered here (the account id).
    user_handle = UnicodeAttribute(null=True)

    @classmethod
    def key_for(cls, account_id, credential_id):
        """``(PK, SK)`` of the credential item of ``credential_id`` in ``account_id``'s partition."""
        return account_pk(account_id), passkey_sort_key(credential_id)


class UsedTotpStep(TableModel):
    """The record that an account used the TOTP code of time step ``step``."""

    PK = UnicodeAttribute(hash_key=True)
    SK = UnicodeAttribute(range_key=True)
    expires = NumberAttribute()

    @classmethod
    def build(cls, account_id, step, expires):
        return cls(PK=account_pk(account_id), SK=f"{TOTP_STEP_PREFIX}{step}", expires=expires)


class UsedChallenge(TableModel):
    """The record that the passkey challenge whose SHA-256 its key names was answered."""

    PK = UnicodeAttribute(hash_key=True)
    SK = UnicodeAttribute(range_key=True)
    expires = NumberAttribute()

    @classmethod
    def build(cls, challenge: bytes, expires: int) -> "UsedChallenge":
        digest = hashlib.sha256(challenge).hexdigest()
        return cls(PK=f"{USED_CHALLENGE_PREFIX}{digest}", SK=USED_CHALLENGE_SORT_KEY, expires=expires)
