"""The items of identity providers outside any account: the record that an ID token an app
posted was accepted, ``PK=USED#<digest>``, ``SK=ID_TOKEN`` (the digest of its issuer and
``jti``, or of the whole token: :func:`accounts.providers.oidc.token_digest`), which expires
when the token would no longer be accepted. It makes the token single use
(:func:`accounts.transactions.id_token_spend`).

The identity itself is a lock (``UNIQ#OIDC#<issuer>#<subject>``) and a value of the account
(``oidc_identities``): see :mod:`.store`.
"""

from pynamodb.attributes import NumberAttribute, UnicodeAttribute

from ..tables import TableModel

USED_ID_TOKEN_PREFIX = "USED#"
USED_ID_TOKEN_SORT_KEY = "ID_TOKEN"


class UsedIdToken(TableModel):
    """The record that the ID token whose digest its key names was accepted."""

    PK = UnicodeAttribute(hash_key=True)
    SK = UnicodeAttribute(range_key=True)
    expires = NumberAttribute()

    @classmethod
    def build(cls, digest: str, expires: int) -> "UsedIdToken":
        return cls(PK=f"{USED_ID_TOKEN_PREFIX}{digest}", SK=USED_ID_TOKEN_SORT_KEY, expires=expires)
