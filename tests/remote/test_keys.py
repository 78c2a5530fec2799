"""The keys of human play: each makes one action within the mission's limits."""

import pytest

from sortie.core.actions import FlightPrimitive, Fly, Interact, Interaction, Move
from sortie.core.observation import ActionLimits
from sortie.missions.aerial.vocabulary import TaskAction, TaskActionKind
from sortie.remote.keys import action_for, keys_for
from sortie.remote.wire import WireError

WALKER = keys_for("rescue", ActionLimits(max_turn=30.0, max_speed=1.5))
DRONE = keys_for("aerial", ActionLimits(max_turn=30.0, max_move=10.0, max_steps=20))


@pytest.mark.parametrize(
    ("key", "action"),
    [
        ("ArrowUp", Move(0.0, 1.5)),
        ("ArrowLeft", Move(15.0, 0.0)),
        ("e", Move(-30.0, 0.0)),
        ("g", Interact(Interaction.GRAB)),
        ("o", Interact(Interaction.OPEN_DOOR)),
    ],
)
def test_a_walker_key_makes_its_move_or_interaction(key, action):
    """Walker keys turn and walk within the limits, or grab, drop and open doors."""
    assert action_for(WALKER, key) == action


def test_a_drone_key_scales_its_primitive_to_the_limit_and_carries_the_report():
    """Half scale on `w` flies half of d_max forward; `q` turns by a share of 30°."""
    assert action_for(DRONE, "w", 0.5, "a red car") == Fly(
        FlightPrimitive.FORWARD, 5.0, "a red car"
    )
    assert action_for(DRONE, "q", 0.25) == Fly(FlightPrimitive.TURN_LEFT, 7.5)


def test_enter_says_done_with_the_report():
    """Enter ends a flight with `done`, and the typed report goes with it."""
    assert action_for(DRONE, "Enter", 1.0, "12") == TaskAction(TaskActionKind.DONE, "12")


def test_every_drone_primitive_has_a_key():
    """The eight primitives and the four task actions are all on the keyboard."""
    made = [action_for(DRONE, key) for key in DRONE]
    assert {a.primitive for a in made if isinstance(a, Fly)} == set(FlightPrimitive)
    assert len([a for a in made if isinstance(a, TaskAction)]) == 4


@pytest.mark.parametrize(
    ("key", "scale", "code"), [("z", 1.0, "invalid_action"), ("w", 0.3, "invalid")]
)
def test_a_key_with_no_binding_or_a_bad_scale_is_a_422(key, scale, code):
    """An unbound key or a scale off the list is refused, naming what is allowed."""
    with pytest.raises(WireError) as caught:
        action_for(DRONE, key, scale)
    assert (caught.value.status, caught.value.code) == (422, code)
