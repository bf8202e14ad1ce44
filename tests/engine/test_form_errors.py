"""One call shows what the engine refused on a form: the Player example's form
(accounts/examples.py), and the helper's rules for any model."""

import pytest
from django import forms

from accounts import store, transactions
from accounts.examples import Player, PlayerForm
from accounts.exceptions import Busy, InvalidUniqueValue, StaleItem, UniqueViolation
from accounts.form_errors import StoreErrorsMixin, add_store_error

pytestmark = pytest.mark.dynamodb_local


class RosterForm(StoreErrorsMixin, forms.Form):
    """A host's form for players with no messages of its own."""

    unique_model = Player
    number = forms.IntegerField()


def bound(form_class, data):
    form = form_class(data)
    assert form.is_valid(), form.errors
    return form


def test_player_form_saves_a_player_with_its_number(ddb):
    player = bound(PlayerForm, {"team": "team-001", "name": "Alice", "number": "18"}).save("alice")

    assert (player.PK, player.number) == ("PLAYER#alice", 18)
    assert Player.get("PLAYER#alice", "PROFILE", consistent_read=True).name == "Alice"


def test_a_number_the_team_gave_out_is_an_error_on_the_number_field(ddb):
    bound(PlayerForm, {"team": "team-001", "name": "Alice", "number": "18"}).save("alice")
    form = bound(PlayerForm, {"team": "team-001", "name": "Bob", "number": "18"})

    assert form.save("bob") is None

    assert form.errors == {"number": ["This number is already worn in this team."]}
    assert form.has_error("number", "number_taken")
    assert bound(PlayerForm, {"team": "team-002", "name": "Bob", "number": "18"}).save("bob") is not None


def test_a_form_without_its_own_message_gets_the_adapters_generic_one_not_a_look_alike(ddb):
    transactions.create(Player(PK="PLAYER#alice", team="team-001", name="Alice", number=18))
    form = bound(RosterForm, {"number": "18"})

    with pytest.raises(UniqueViolation) as raised:
        transactions.create(Player(PK="PLAYER#bob", team="team-001", name="Bob", number=18))
    form.add_store_error(raised.value)

    assert form.errors == {"number": ["This value is already in use."]}
    assert form.has_error("number", "value_taken")


def test_a_look_alike_of_an_account_username_is_the_similar_error(ddb):
    store.signup("coco@example.com", "coco", "!hash", email_verified=True)
    form = forms.Form()
    form.fields["username"] = forms.CharField()
    form.cleaned_data = {}

    with pytest.raises(UniqueViolation) as raised:
        store.signup("other@example.com", "сосо", "!hash", email_verified=True)
    add_store_error(form, raised.value)

    assert form.has_error("username", "username_similar")


@pytest.mark.parametrize(
    "error, code",
    [
        (InvalidUniqueValue({"number"}, "too_long", "too long"), "too_long"),
        (Busy("busy"), "busy"),
        (StaleItem("stale"), "stale"),
    ],
)
def test_other_refusals_land_on_the_field_or_the_whole_form(error, code):
    form = bound(RosterForm, {"number": "7"})

    form.add_store_error(error)

    field = "number" if isinstance(error, InvalidUniqueValue) else None
    assert form.has_error(field or "__all__", code)


def test_anything_else_is_raised_again():
    form = bound(RosterForm, {"number": "7"})

    with pytest.raises(KeyError):
        form.add_store_error(KeyError("not a refusal"))
