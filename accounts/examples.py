"""An example of scoped uniqueness on a model other than accounts: a baseball roster.

A uniform number may be worn once per team: ``team-001`` cannot give 18 to both Alice and
Bob, but ``team-002`` may also give out 18. The engine needs nothing beyond the declaration.
"""

from pynamodb.attributes import NumberAttribute, UnicodeAttribute

from .tables import TableModel
from .uniqueness import UniqueConstraint, normalize_exact

PLAYER_PREFIX = "PLAYER#"


class Player(TableModel):
    """A player of a team, stored in the accounts table at ``PK=PLAYER#<id>``, ``SK=PROFILE``.

    Listed in ``ACCOUNTS_UNIQUE_MODELS``, its locks are audited and repaired with the
    accounts'; ``key_prefix`` tells the audit which items are players.
    """

    key_prefix = PLAYER_PREFIX

    PK = UnicodeAttribute(hash_key=True)
    SK = UnicodeAttribute(range_key=True, default="PROFILE")
    team = UnicodeAttribute()
    name = UnicodeAttribute()
    number = NumberAttribute()

    # Numbers compare exactly (no case folding, canonical: 18.0 is 18); the team is the scope.
    unique_constraints = (
        UniqueConstraint("number", scope=("team",), namespace="UNIFORM", normalizer=normalize_exact),
    )
