"""An example of scoped uniqueness on a model other than accounts: a baseball roster.

A uniform number may be worn once per team: ``team-001`` cannot give 18 to both Alice and
Bob, but ``team-002`` may also give out 18. The engine needs nothing beyond the declaration;
the form shows a number in use as an error on its ``number`` field.
"""

from django import forms
from django.utils.translation import gettext_lazy as _
from pynamodb.attributes import NumberAttribute, UnicodeAttribute

from . import transactions
from .form_errors import STORE_REFUSALS, StoreErrorsMixin
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
    unique_constraints = (UniqueConstraint("number", scope=("team",), namespace="UNIFORM", normalizer=normalize_exact),)


class PlayerForm(StoreErrorsMixin, forms.Form):
    """Add a player to a team; a number the team already gave out is an error on ``number``."""

    unique_model = Player
    error_messages = {"number_taken": _("This number is already worn in this team.")}

    team = forms.CharField(max_length=64)
    name = forms.CharField(max_length=100)
    number = forms.IntegerField(min_value=0)

    def save(self, player_id: str) -> Player | None:
        """The new player, in one transaction with its number's lock; ``None`` when the
        engine refused it, with the reason on the form."""
        try:
            return transactions.create(Player(PK=f"{PLAYER_PREFIX}{player_id}", **self.cleaned_data))
        except STORE_REFUSALS as error:
            self.add_store_error(error)
            return None
