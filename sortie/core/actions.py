"""The actions agents send: the shared ones (a body's motion and interactions) and their base.

Actions are frozen records; each mission family declares which kinds it accepts
(``Family.actions``). The shared ones are declared here; a family's own (an aerial task
action, a household subtask) subclass ``FamilyAction`` and are declared in its vocabulary
(``sortie.core.vocabulary``). Records and the wire spell each by its declared ``type`` name.
"""

from __future__ import annotations

from dataclasses import dataclass
from enum import StrEnum

from sortie.core.vocabulary import WORDS


class Interaction(StrEnum):
    """Discrete interactions of a ground agent."""

    GRAB = "grab"
    DROP = "drop"
    OPEN_DOOR = "open_door"


class FlightPrimitive(StrEnum):
    """The eight motion primitives of a multirotor; magnitudes in metres or degrees."""

    FORWARD = "forward"
    BACKWARD = "backward"
    LEFT = "left"
    RIGHT = "right"
    UP = "up"
    DOWN = "down"
    TURN_LEFT = "turn_left"
    TURN_RIGHT = "turn_right"


@dataclass(frozen=True, slots=True)
class Move:
    """Turn by ``turn`` degrees, then move at ``speed`` m/s for one control period.

    ``pitch`` sets the camera pitch in degrees when given, and keeps it when None.
    """

    turn: float = 0.0
    speed: float = 0.0
    pitch: float | None = None


@dataclass(frozen=True, slots=True)
class Interact:
    """Attempt one discrete interaction."""

    kind: Interaction


@dataclass(frozen=True, slots=True)
class Fly:
    """Execute one flight primitive with a magnitude (metres, or degrees for turns).

    ``report`` is what the agent reports with this step (an aerial mission keeps the last one).
    """

    primitive: FlightPrimitive
    magnitude: float
    report: str | None = None


@dataclass(frozen=True, slots=True)
class FamilyAction:
    """Base of the action types a family declares itself (``Vocabulary.actions``)."""


@dataclass(frozen=True, slots=True)
class InvalidAction:
    """What an agent produced that could not be read as an action, kept verbatim."""

    raw: str
    error: str


Action = Move | Interact | Fly | InvalidAction | FamilyAction
"""Any action: a shared one, or one a family declared."""

SHARED_ACTIONS: dict[str, type[Action]] = {
    "move": Move,
    "interact": Interact,
    "fly": Fly,
    "invalid": InvalidAction,
}
"""The shared action types by the ``type`` name records and the wire spell them with."""
WORDS.add_actions(SHARED_ACTIONS)
