"""Actions to and from plain dicts, as records and the wire write them."""

from dataclasses import dataclass

from sortie.core import serialize
from sortie.core.actions import FamilyAction, FlightPrimitive, Fly, Interact, Interaction, Move
from sortie.core.serialize import action_from_dict, action_to_dict
from sortie.core.vocabulary import Vocabulary, Words


def test_an_action_of_plain_values_becomes_its_type_name_and_fields_in_order():
    """A move's dict is its type name first, then its fields as they are, in declared order."""
    data = action_to_dict(Move(turn=3, speed=0.5))
    assert data == {"type": "move", "turn": 3, "speed": 0.5, "pitch": None}
    assert list(data) == ["type", "turn", "speed", "pitch"] and isinstance(data["turn"], int)


def test_an_actions_enums_are_written_as_their_values():
    """An enum field is written as its value, and the dict reads back as the same action."""
    for action in (Interact(Interaction.GRAB), Fly(FlightPrimitive.UP, 2.0, "clear")):
        data = action_to_dict(action)
        assert all(type(v) in (str, float, type(None)) for v in data.values())
        assert action_from_dict(data) == action


@dataclass(frozen=True, slots=True)
class _Waypoints(FamilyAction):
    """A test family's action that holds a list."""

    points: list[list[float]]


def test_an_action_holding_a_list_gets_a_copy_of_it(monkeypatch):
    """A list in an action is copied into the dict, so changing one leaves the other as it was."""
    words = Words()
    words.declare(Vocabulary("touring", actions={"waypoints": _Waypoints}))
    monkeypatch.setattr(serialize, "WORDS", words)
    action = _Waypoints(points=[[1.0, 2.0]])
    data = action_to_dict(action)
    assert data == {"type": "waypoints", "points": [[1.0, 2.0]]}
    data["points"][0].append(3.0)
    assert action.points == [[1.0, 2.0]]
