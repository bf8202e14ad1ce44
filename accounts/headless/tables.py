"""The items of the API's tokens, outside any account: the record that a refresh token was
used, ``PK=USED#<SHA-256 of "refresh:" and its jti>``, ``SK=REFRESH``, which expires with the
token (:mod:`accounts.headless.tokens`)."""

import hashlib

from pynamodb.attributes import NumberAttribute, UnicodeAttribute

from ..tables import TableModel

USED_PREFIX = "USED#"
REFRESH_SORT_KEY = "REFRESH"


class UsedRefreshToken(TableModel):
    """The record that the refresh token whose ``jti`` its key names was used."""

    PK = UnicodeAttribute(hash_key=True)
    SK = UnicodeAttribute(range_key=True)
    expires = NumberAttribute()

    @classmethod
    def build(cls, jti: str, expires: int) -> "UsedRefreshToken":
        digest = hashlib.sha256(f"refresh:{jti}".encode()).hexdigest()
        return cls(PK=f"{USED_PREFIX}{digest}", SK=REFRESH_SORT_KEY, expires=expires)
